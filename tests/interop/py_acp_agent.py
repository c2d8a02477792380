"""A small ACP v1 agent built on the PyPI `agent-client-protocol` SDK (pinned in
requirements-acp.txt), modelled on the SDK's own `examples/echo_agent.py`.

parity's interop tests run it as a real third-party ACP agent:

    tests/interop/.venv/bin/python tests/interop/py_acp_agent.py

- `initialize` echoes the requested version, as the SDK's example does (so it fails parity's
  version-negotiation check, see docs/interop.md), names itself in `agentInfo`, and advertises
  its tool method under `agentCapabilities._meta`;
- `session/new` hands out a fresh session id;
- `session/prompt` echoes every text block as an `agent_message_chunk` and ends `end_turn`;
  the prompt `wait_for_cancel` keeps the turn open until `session/cancel`, then ends
  `cancelled` (what a model-backed agent does when its turn is cancelled);
- `session/cancel` ends the session's open turn;
- the extension request `_interop/tool` answers `{"outcome": "ok", "value": {"echo": params},
  "warnings": []}`; any other `_`-prefixed request is -32601, other extension notifications
  are ignored.

It never writes to stdout itself: stdout carries only ACP messages.
"""

import asyncio
from typing import Any
from uuid import uuid4

from acp import (
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    run_agent,
)
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AudioContentBlock,
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    HttpMcpServer,
    ImageContentBlock,
    Implementation,
    McpServerStdio,
    ResourceContentBlock,
    SseMcpServer,
    TextContentBlock,
)

TOOL_METHOD = "_interop/tool"
WAIT_FOR_CANCEL = "wait_for_cancel"


class InteropAgent(Agent):
    _conn: Client

    def __init__(self) -> None:
        # session id -> the event that ends its open turn (set by session/cancel)
        self._sessions: dict[str, asyncio.Event | None] = {}

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        # As the SDK's own examples/echo_agent.py does: echo the requested version. ACP's
        # negotiation rule wants the agent's latest supported version when the request names one
        # it does not support; parity's acp.init.version-negotiation reports that (docs/interop.md).
        return InitializeResponse(
            protocol_version=protocol_version,
            agent_capabilities=AgentCapabilities(field_meta={"interop": {"toolMethod": TOOL_METHOD}}),
            agent_info=Implementation(name="parity-interop-py-acp", title="parity interop agent", version="0.1.0"),
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[HttpMcpServer | SseMcpServer | McpServerStdio] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        session_id = uuid4().hex
        self._sessions[session_id] = None
        return NewSessionResponse(session_id=session_id)

    async def prompt(
        self,
        session_id: str,
        prompt: list[
            TextContentBlock
            | ImageContentBlock
            | AudioContentBlock
            | ResourceContentBlock
            | EmbeddedResourceContentBlock
        ],
        **kwargs: Any,
    ) -> PromptResponse:
        if session_id not in self._sessions:
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "unknown session"})
        texts = [getattr(block, "text", "") for block in prompt if getattr(block, "type", None) == "text"]
        if "\n".join(texts) == WAIT_FOR_CANCEL:
            cancelled = asyncio.Event()
            self._sessions[session_id] = cancelled
            try:
                await cancelled.wait()
            finally:
                self._sessions[session_id] = None
            return PromptResponse(stop_reason="cancelled")
        for text in texts:
            chunk = AgentMessageChunk(session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text))
            await self._conn.session_update(session_id=session_id, update=chunk)
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        turn = self._sessions.get(session_id)
        if turn is not None:
            turn.set()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        # The SDK strips the leading `_` of extension method names before calling this.
        if "_" + method == TOOL_METHOD:
            return {"outcome": "ok", "value": {"echo": params}, "warnings": []}
        raise RequestError.method_not_found("_" + method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


async def main() -> None:
    await run_agent(InteropAgent())


if __name__ == "__main__":
    asyncio.run(main())
