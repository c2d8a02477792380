#!/usr/bin/env python3
"""Prints the table of docs/interop.md from the JSON reports in target/interop/, with the
justification of every fail and warn. Exits 1 when a fail or warn has no justification here:
such a verdict is either a new server behaviour to explain or a bug in parity."""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVERS = [
    ("everything", "@modelcontextprotocol/server-everything"),
    ("filesystem", "@modelcontextprotocol/server-filesystem"),
    ("python", "tests/interop/py_server.py on PyPI `mcp`"),
]

# check id -> (verdict, justification). The spec sentence is the check's own quote (see
# docs/checks.md); the text here says what the server did and why the verdict follows.
WHY = {
    ("mcp.base.parse-error", "fail"): "The line `garbage` gets no reply at all. JSON-RPC 2.0 §5: \"When a rpc call is made, the Server MUST reply with a Response\", and its own example answers invalid JSON with -32700 and id null. The official TypeScript and Python SDKs drop unparsable lines silently.",
    ("mcp.base.invalid-request", "fail"): "A request without `jsonrpc` (and one with id null, and one with `params: \"x\"`) gets no reply. JSON-RPC 2.0 §5 requires a Response with an `error` member (-32600 Invalid Request); MCP requires every message to be JSON-RPC 2.0 and ids never to be null.",
    ("mcp.base.batch", "fail"): "After `initialize` at 2025-03-26 (which the server accepts), a batch of two pings gets no reply. 2025-03-26 `basic#batching`: implementations \"MUST support receiving JSON-RPC batches\".",
    ("mcp.base.batch-rejected", "warn"): "In 2025-11-25 (and 2026-07-28), where batching does not exist, a batch gets no answer at all. No MUST covers the answer, so this is an advisory: JSON-RPC's -32600 is the natural reply and a client otherwise waits for its deadline.",
    ("mcp.base.id-echo", "warn"): "Request id 9007199254740993 (2^53 + 1) is dropped without a reply: the TypeScript SDK rejects integers beyond JavaScript's safe range. The id is valid MCP (an integer), but RFC 8259 §6 says such numbers are not interoperable, so parity warns instead of failing. Ids 0, -1, 2^53 - 1, \"1\" and a non-ASCII string are echoed exactly.",
    ("mcp.lifecycle.stdin-eof", "warn"): "With the client's `roots` capability declared, the server asks `roots/list`, gets an answer, and then keeps running after stdin closes (it had to be sent SIGTERM). 2026-07-28 `basic/transports/stdio`: \"Servers SHOULD exit promptly when their standard input is closed\"; earlier revisions leave this to the client's shutdown sequence, hence a warn.",
    ("mcp.tools.invalid-cursor", "warn"): "`tools/list` with a cursor the server never issued returns the first page. Pagination §Error Handling: \"Invalid cursors SHOULD result in an error with code -32602 (Invalid params).\"",
    ("mcp.tools.unknown-tool", "warn"): "`tools/call` of an unknown tool returns a result with `isError: true` (the SDKs' tool dispatch turns every failure into a tool result). The tools page lists unknown tools under protocol errors and its example uses -32602; the schema says such errors \"should be reported as an MCP error response\" — no RFC keyword, so a robustness warn.",
    ("mcp.modern.meta-required", "fail"): "At 2026-07-28, `tools/list` whose `_meta` lacks `io.modelcontextprotocol/clientCapabilities` gets -32600 instead of -32602. `basic#meta`: \"A request missing any required field is malformed; the server MUST reject it with JSON-RPC error code -32602 (Invalid params).\"",
    ("mcp.modern.meta-required", "warn"): "At 2026-07-28, a request with no `_meta` at all gets -32601, as if it were legacy traffic (the server is dual-era); the rule asks for -32602, so parity reports an advisory.",
}


def main() -> int:
    missing = []
    out = []
    out.append("| server | case | verdict | why |")
    out.append("|---|---|---|---|")
    summaries = []
    for name, label in SERVERS:
        path = os.path.join(ROOT, "target", "interop", name + ".json")
        try:
            with open(path) as f:
                report = json.load(f)
        except OSError as e:
            print(f"justify: {path}: {e}", file=sys.stderr)
            return 2
        s = report["summary"]
        summaries.append(f"- {label}: eras {report['eras']}; " + ", ".join(f"{v} {k}" for k, v in s.items()))
        for case, r in report["cases"].items():
            v = r["verdict"]
            if v not in ("fail", "warn"):
                continue
            why = WHY.get((r["check"], v))
            if why is None:
                missing.append(f"{name}: {case}: {v}: {r['message']}")
                why = "**not justified**: " + r["message"]
            out.append(f"| {name} | `{case}` | {v} | {why} |")
    print("\n".join(summaries))
    print()
    print("\n".join(out))
    if missing:
        print("\nunjustified verdicts:", *missing, sep="\n", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
