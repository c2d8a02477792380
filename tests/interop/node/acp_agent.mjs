#!/usr/bin/env node
// A small ACP v1 agent on the official TypeScript SDK (npm `@agentclientprotocol/sdk`, pinned in
// package.json), written in the style its README documents for agents: `agent({ name })`,
// handlers registered with `onRequest(methods.agent.…)` / `onNotification(…)`, then
// `connect(ndJsonStream(…))` on stdio. parity's interop tests run it as a real ACP agent:
//
//     node tests/interop/node/acp_agent.mjs
//
// - `initialize` answers the SDK's own PROTOCOL_VERSION, as the SDK's example agent does, and
//   advertises the tool method under `agentCapabilities._meta.interop.toolMethod`;
// - `session/new` hands out a fresh session id;
// - `session/prompt` echoes every text block as an `agent_message_chunk` and ends `end_turn`;
//   the prompt `wait_for_cancel` keeps the turn open until `session/cancel`, then ends
//   `cancelled`;
// - the extension request `_interop/tool` answers {"outcome":"ok","value":{"echo":params},
//   "warnings":[]}; everything else is left to the SDK (unknown methods, malformed lines).
//
// It never writes to stdout itself: stdout carries only ACP messages.
import { Readable, Writable } from "node:stream";
import { randomUUID } from "node:crypto";
import * as acp from "@agentclientprotocol/sdk";

const TOOL_METHOD = "_interop/tool";
const WAIT_FOR_CANCEL = "wait_for_cancel";

// session id -> the function that ends its open turn (called by session/cancel), or null
const sessions = new Map();

const app = acp
  .agent({ name: "parity-interop-ts-acp" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false, _meta: { interop: { toolMethod: TOOL_METHOD } } },
    agentInfo: { name: "parity-interop-ts-acp", title: "parity interop agent (TypeScript)", version: "0.1.0" },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, () => {
    const sessionId = randomUUID();
    sessions.set(sessionId, null);
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    if (!sessions.has(params.sessionId)) {
      throw acp.RequestError.invalidParams({ sessionId: params.sessionId, reason: "unknown session" });
    }
    const texts = params.prompt.filter((block) => block.type === "text").map((block) => block.text);
    if (texts.join("\n") === WAIT_FOR_CANCEL) {
      await new Promise((resolve) => sessions.set(params.sessionId, resolve));
      sessions.set(params.sessionId, null);
      return { stopReason: "cancelled" };
    }
    for (const text of texts) {
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
      });
    }
    return { stopReason: "end_turn" };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    const end = sessions.get(params.sessionId);
    if (end) end();
  })
  // Extension methods take a params parser; the tool accepts any params and echoes them.
  .onRequest(TOOL_METHOD, (raw) => raw, ({ params }) => ({ outcome: "ok", value: { echo: params ?? null }, warnings: [] }));

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const connection = app.connect(stream);
await connection.closed;
