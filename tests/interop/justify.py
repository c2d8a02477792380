#!/usr/bin/env python3
"""Prints the table of docs/interop.md from the JSON reports in target/interop/, with the
justification of every fail and warn. Exits 1 when a fail or warn has no justification here:
such a verdict is either a new peer behaviour to explain or a bug in parity."""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVERS = [
    ("everything", "@modelcontextprotocol/server-everything (TypeScript SDK)"),
    ("filesystem", "@modelcontextprotocol/server-filesystem (TypeScript SDK)"),
    ("memory", "@modelcontextprotocol/server-memory (TypeScript SDK)"),
    ("seqthink", "@modelcontextprotocol/server-sequential-thinking (TypeScript SDK)"),
    ("python", "tests/interop/py_server.py on PyPI `mcp`"),
    ("time", "PyPI `mcp-server-time` (on PyPI `mcp`)"),
    ("fetch", "PyPI `mcp-server-fetch` (on PyPI `mcp`, in a network namespace of its own)"),
    ("fastmcp", "tests/interop/py_fastmcp_server.py on PyPI `fastmcp`"),
    ("rmcp", "tests/interop/rmcp-server on crates.io `rmcp`"),
    ("py-acp", "tests/interop/py_acp_agent.py on PyPI `agent-client-protocol` (ACP profile)"),
    ("ts-acp", "tests/interop/node/acp_agent.mjs on npm `@agentclientprotocol/sdk` (ACP profile)"),
    ("everything-http", "@modelcontextprotocol/server-everything over Streamable HTTP (`streamableHttp`, profile mcp-http)"),
    ("python-http", "tests/interop/py_server.py --http on PyPI `mcp` (Streamable HTTP, profile mcp-http)"),
    ("fastmcp-http", "tests/interop/py_fastmcp_server.py --http on PyPI `fastmcp` (Streamable HTTP, profile mcp-http)"),
    ("rmcp-http", "tests/interop/rmcp-server --http on crates.io `rmcp` (Streamable HTTP, profile mcp-http)"),
]
# One stdio peer per SDK again, started 7 s late (tests/interop/delay-start.sh): each must give
# exactly the verdicts of its undelayed run, case by case, and no not-run or timeout.
DELAYED = ["memory", "time", "fastmcp", "rmcp", "py-acp", "ts-acp"]

# Each rule: (peers, check id, verdict, a substring the case's message must contain, why).
# A fail or warn matches only a rule naming its server, check, verdict and message; the spec
# sentence is the check's own quote (docs/checks.md), the text says what the server did.
# The TypeScript SDK's servers, and the PyPI `mcp` SDK's (FastMCP serves through it too).
TS = {"everything", "filesystem", "memory", "seqthink"}
PY = {"python", "time", "fetch", "fastmcp"}
ALL = TS | PY
ACP = {"py-acp"}
# The servers over Streamable HTTP (run.sh's `-http` reports, profile mcp-http).
HTTP = {"everything-http", "python-http", "fastmcp-http", "rmcp-http"}
RULES = [
    (ALL | {"rmcp"}, "mcp.base.parse-error", "fail", "the unparsable line \"garbage\" got no response: the server answered the request sent after it",
     "The line `garbage` gets no reply at all, though the ping sent after it is answered. JSON-RPC 2.0 §5: \"When a rpc call is made, the Server MUST reply with a Response\", and its own example answers invalid JSON with -32700 and id null."),
    (ALL, "mcp.base.invalid-request", "fail", "a request without `jsonrpc` got no response: the server answered the request sent after it",
     "A request without `jsonrpc` gets no reply, though the ping sent after it is answered. JSON-RPC 2.0 §5 requires a Response with an `error` member (-32600 Invalid Request)."),
    (ALL, "mcp.base.batch", "fail", "a batch of two requests got no response: the server answered the request sent after it",
     "After `initialize` at 2025-03-26, a batch of two pings gets no reply, though the ping sent after it is answered. 2025-03-26 `basic#batching`: implementations \"MUST support receiving JSON-RPC batches\"."),
    (ALL, "mcp.base.batch-rejected", "warn", "no answer at all",
     "A batch in a revision without batching gets no answer: an advisory (-32600 is the natural reply)."),
    (TS, "mcp.base.id-echo", "warn", "9007199254740993",
     "Request id 2^53 + 1 is dropped by the TypeScript SDK; RFC 8259 §6 calls such integers not interoperable, so a warning."),
    ({"everything"}, "mcp.lifecycle.stdin-eof", "warn", "did not exit",
     "After answering the client's roots/list, the server keeps running after stdin closes (reproduced by hand). 2026-07-28 stdio: servers SHOULD exit promptly."),
    (ALL | {"rmcp"} | HTTP, "mcp.tools.invalid-cursor", "warn", "an invalid cursor was accepted",
     "An unknown cursor returns the first page. Pagination: invalid cursors SHOULD get -32602."),
    (TS | {"python", "fastmcp", "everything-http", "python-http", "fastmcp-http"}, "mcp.tools.unknown-tool", "warn", "tool execution error (isError)",
     "An unknown tool is an `isError` result rather than a JSON-RPC error (robustness)."),
    # Streamable HTTP (profile mcp-http).
    ({"everything-http"}, "mcp.base.id-echo", "warn", "9007199254740993",
     "Request id 2^53 + 1 gets HTTP 400 with -32700 `Parse error: Invalid JSON-RPC message` and id null: the TypeScript SDK's id schema (`z.number().int()`) rejects integers beyond JavaScript's safe range. RFC 8259 §6 calls such integers not interoperable, so a warning."),
    ({"everything-http"}, "mcp.base.invalid-request", "warn", "answered with code -32700",
     "A request without `jsonrpc` gets HTTP 400 with -32700 `Parse error: Invalid JSON-RPC message`, id null: the TypeScript SDK's HTTP transport answers every body that fails its message schema with -32700. JSON-RPC 2.0 §5.1: -32700 is for invalid JSON, -32600 for \"The JSON sent is not a valid Request object\"; an error reply does come, hence an advisory."),
    ({"everything-http"}, "mcp.base.batch-rejected", "warn", "served one by one in a revision without batches",
     "At 2025-11-25 a batch body is served as at 2025-03-26 (200, one SSE event per request): the TypeScript SDK's HTTP transport accepts arrays in every revision. 2025-11-25 transports: \"The body of the POST request MUST be a single JSON-RPC request, notification, or response\" binds the client, so an advisory."),
    ({"everything-http"}, "mcp.http.origin", "fail", "foreign Origin was answered HTTP 200",
     "`initialize` with `Origin: http://parity-rebinding.invalid` is served (200, `Access-Control-Allow-Origin: *`): the server's Express app enables CORS for every origin and does not turn on the SDK's DNS-rebinding protection. 2025-11-25 transports: \"Servers MUST validate the Origin header on all incoming connections ... If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden.\""),
    ({"everything-http"}, "mcp.http.session-id", "fail", "ended session was answered HTTP 400",
     "After `DELETE` ends the session (200), a request carrying its id gets HTTP 400 `Bad Request: No valid session ID provided`: the server's Express app answers every unknown session id with 400. 2025-11-25 transports: \"The server MAY terminate the session at any time, after which it MUST respond to requests containing that session ID with HTTP 404 Not Found.\""),
    ({"python-http", "fastmcp-http"}, "mcp.base.invalid-request", "fail", "a request with `\"id\": null` got no response: the server answered the request sent after it",
     "`{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}` gets HTTP 202 Accepted and no response: the SDK's pydantic `JSONRPCNotification` ignores the extra `id`, so the request is taken for a notification. JSON-RPC 2.0 §4.1: a Notification is a Request object without an `id` member; §5: the Server MUST reply (MCP forbids null ids, so -32600)."),
    ({"python-http", "fastmcp-http"}, "mcp.base.batch", "fail", "a batch was not answered with a batch",
     "After `initialize` at 2025-03-26, which it accepts, a batch body gets a single -32602 `Validation error` with id null: the SDK parses every POST body as one message. 2025-03-26 `basic#batching`: implementations \"MUST support receiving JSON-RPC batches\" (and 2025-03-26 transports allow \"An array batching one or more requests and/or notifications\" as a POST body)."),
    ({"fastmcp-http"}, "mcp.http.origin", "fail", "foreign Origin was answered HTTP 200",
     "`initialize` (and at 2026-07-28 `server/discover`) with `Origin: http://parity-rebinding.invalid` is served (200): the server as FastMCP's `run(transport=\"http\")` starts it does not refuse the foreign Origin, where the `mcp` SDK's own server (python-http) answers 403. 2025-11-25 transports (and 2026-07-28 streamable-http): \"If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden.\""),
    ({"rmcp-http"}, "mcp.http.origin", "fail", "foreign Origin was answered HTTP 200",
     "`initialize` (and at 2026-07-28 `server/discover`) with `Origin: http://parity-rebinding.invalid` is served (200): the SDK's `StreamableHttpService` with `StreamableHttpServerConfig::default()` does not refuse the foreign Origin. 2025-11-25 transports (and 2026-07-28 streamable-http): \"If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden.\""),
    ({"rmcp"}, "mcp.base.batch", "fail", "a batch was not answered with a batch: {\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600",
     "After `initialize` at 2025-03-26, which it accepts, a batch of two pings gets one -32600 `Invalid request` with no id. 2025-03-26 `basic#batching`: implementations \"MUST support receiving JSON-RPC batches\"."),
    ({"rmcp-http"}, "mcp.base.batch", "fail", "refused by HTTP status with no JSON-RPC response (POST a batch",
     "After `initialize` at 2025-03-26, a batch body gets HTTP 415 `fail to deserialize request body unrecognized JSON-RPC message` (plain text): the SDK's HTTP service deserializes each body as one message. 2025-03-26 `basic#batching`: implementations \"MUST support receiving JSON-RPC batches\"."),
    ({"rmcp-http"}, "mcp.base.parse-error", "warn", "was refused by HTTP status with no JSON-RPC error response",
     "A body that is not JSON gets HTTP 415 with a plain-text body `fail to deserialize request body …` and no JSON-RPC error: the client is told no, but JSON-RPC 2.0 §5 asks for a Response (-32700, id null) it could read, and the transport pages set no rule of their own for such a body; an advisory."),
    ({"rmcp-http"}, "mcp.base.invalid-request", "warn", "was refused by HTTP status with no JSON-RPC error response",
     "A request without `jsonrpc` gets HTTP 415 with a plain-text body `fail to deserialize request body unrecognized JSON-RPC message`: refused, but without the -32600 error JSON-RPC 2.0 §5 asks for; an advisory, as for the unparsable body."),
    ({"rmcp"}, "mcp.base.cancellation", "fail", "after cancelling request 0, the server closed its stdout instead of answering",
     "At 2026-07-28, after two `server/discover` requests (both answered), `notifications/cancelled` for request 0, which had just been answered, makes the server exit with status 1; its stderr says `ExpectedInitializeRequest(Some(Notification(… CancelledNotification …)))`: rmcp's stdio service treats `server/discover` as a probe before an `initialize` handshake and ends on any other first message. A later request (after a `tools/list`) is served statelessly, so the crash needs a notification right after discovery. 2026-07-28 cancellation §Timing Considerations: the notification may arrive after the request completed, and \"Both parties MUST handle these race conditions gracefully\"."),
    # Server features (resources, prompts, logging): every server that declares the capability.
    (TS | PY | HTTP, "mcp.resources.invalid-cursor", "warn", "an invalid resources/list cursor was accepted",
     "`resources/list` with a cursor the server never issued returns the first page (an empty list where the server has no resources), as for `tools/list`. Pagination §Error Handling: \"Invalid cursors SHOULD result in an error with code -32602 (Invalid params).\""),
    (TS | PY | HTTP, "mcp.resources.unknown-uri", "warn", "got code -32602, not -32002",
     "`resources/read` of a URI the server never listed gets -32602 (the TypeScript SDK's `McpError(InvalidParams, \"Resource … not found\")`, the Python SDK's resource error). 2025-11-25 `server/resources` §Error Handling: \"Servers SHOULD return standard JSON-RPC errors for common failure cases: Resource not found: -32002\"; the SDKs already follow 2026-07-28, which requires -32602 instead, hence a warn at 2025-11-25 only."),
    ({"everything", "everything-http"}, "mcp.logging.invalid-level", "warn", "got code -32603, not -32602",
     "`logging/setLevel` with the level `parity-no-such-level` gets -32603 whose message is the zod validation error (`invalid_value`, the eight allowed levels): the TypeScript SDK reports a params-schema failure inside the handler as an internal error. 2025-11-25 `server/utilities/logging` §Error Handling: \"Servers SHOULD return standard JSON-RPC errors for common failure cases: Invalid log level: -32602 (Invalid params)\"."),
    ({"python", "time", "python-http"}, "mcp.prompts.unknown-name", "warn", "prompts/get of an unknown prompt name got code",
     "`prompts/get` of `parity_no_such_prompt_4b1d` gets `{\"code\": 0, \"message\": \"Unknown prompt: …\"}` at 2025-11-25 and -32603 `Internal server error` at 2026-07-28: the PyPI `mcp` SDK's low-level server turns the handler's exception into error code 0 (legacy) or an internal error (modern). `server/prompts` §Error Handling: \"Servers SHOULD return standard JSON-RPC errors for common failure cases: Invalid prompt name: -32602 (Invalid params)\"."),
    (ACP, "acp.base.parse-error", "fail", "an unparsable line got no error response, although the agent answered the initialize request sent after it",
     "The line `{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": ` gets no reply, while the `initialize` sent after it as a barrier is answered, so the agent read it; the agent's stderr shows the SDK's `Error parsing JSON-RPC message` traceback (`acp/_transport.py` logs the JSONDecodeError and reads the next line). JSON-RPC 2.0 §5: the Server MUST reply, with −32700 and id null for invalid JSON. The agent's (SDK's) fault."),
    (ACP, "acp.init.version-negotiation", "fail", "the agent echoed 65535",
     "`initialize` at 65535 is answered 65535: the agent keeps the SDK example's echo of the requested version (`examples/echo_agent.py`). ACP v1 `initialization`: \"Otherwise, the Agent MUST respond with the latest version it supports.\" The example's fault (B23 mirror), kept as shipped upstream."),
    (ACP, "acp.base.invalid-request", "fail", "closed stdout after `5`",
     "The line `5` (JSON, but not a Request object) kills the agent: its stderr shows `AttributeError: 'int' object has no attribute 'get'` in `acp/connection.py` `_process_message`, then `Receive loop failed`, and stdout closes. JSON-RPC 2.0 §5: the Server MUST reply (-32600 Invalid Request). The agent's (SDK's) fault."),
]


def why_for(server, case):
    for servers, check, verdict, needle, why in RULES:
        if server in servers and case["check"] == check and case["verdict"] == verdict and needle in case["message"]:
            return why
    return None


def load(name):
    path = os.path.join(ROOT, "target", "interop", name + ".json")
    with open(path) as f:
        return json.load(f)


def main() -> int:
    # INTEROP_ONLY (run.sh's) limits the reports read to the runs it names.
    only = set(os.environ.get("INTEROP_ONLY", "").split())
    picked = lambda name: not only or name in only
    missing = []
    out = []
    out.append("| server | case | verdict | why |")
    out.append("|---|---|---|---|")
    summaries = []
    reports = {}
    for name, label in SERVERS:
        if not picked(name):
            continue
        try:
            report = load(name)
        except OSError as e:
            print(f"justify: {e}", file=sys.stderr)
            return 2
        reports[name] = report
        s = report["summary"]
        summaries.append(f"- {label}: eras {report['eras']}; " + ", ".join(f"{v} {k}" for k, v in s.items()))
        for case, r in report["cases"].items():
            v = r["verdict"]
            if v in ("pass", "skip"):
                continue
            if v in ("not-run", "timeout"):
                # A real server must be fully judged: a case that could not run is a harness
                # or setup problem, never an accepted outcome.
                missing.append(f"{name}: {case}: {v}: {r['message']}")
                out.append(f"| {name} | `{case}` | {v} | **not judged**: {r['message']} |")
                continue
            why = why_for(name, r)
            if why is None:
                missing.append(f"{name}: {case}: {v}: {r['message']}")
                why = "**not justified**: " + r["message"]
            out.append(f"| {name} | `{case}` | {v} | {why} |")
    # The delayed runs: same cases, same verdicts, as the undelayed run of the same peer.
    delayed_lines = []
    for name in DELAYED:
        late = "delayed-" + name
        if not picked(late):
            continue
        try:
            got = load(late)["cases"]
        except OSError as e:
            print(f"justify: {e}", file=sys.stderr)
            return 2
        if name not in reports:
            try:
                reports[name] = load(name)
            except OSError as e:
                print(f"justify: {late} has no undelayed run to compare with: {e}", file=sys.stderr)
                return 2
        want = reports[name]["cases"]
        diffs = []
        for case in sorted(set(want) | set(got)):
            a = want.get(case, {}).get("verdict", "absent")
            b = got.get(case, {}).get("verdict", "absent")
            if a != b:
                diffs.append(f"{late}: {case}: {b} started 7 s late, {a} undelayed")
            if b in ("not-run", "timeout"):
                diffs.append(f"{late}: {case}: {b}: {got[case].get('message', '')}")
        missing.extend(diffs)
        verdict = "same verdicts" if not diffs else f"{len(diffs)} difference(s)"
        delayed_lines.append(f"- {late}: {len(got)} cases, {verdict} as `{name}`")
    print("\n".join(summaries))
    if delayed_lines:
        print()
        print("Started 7 s late (tests/interop/delay-start.sh):")
        print("\n".join(delayed_lines))
    print()
    print("\n".join(out))
    if missing:
        print("\nunjustified verdicts:", *missing, sep="\n", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
