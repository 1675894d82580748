"""An MCP server that sends what a careless or hostile one might, over stdio.

    python tests/fakes/hostile_mcp_server.py                   # hostile tools and results
    python tests/fakes/hostile_mcp_server.py --unreadable-list # its tool list cannot be read
    python tests/fakes/hostile_mcp_server.py --endless-pages   # pages its tool list forever

It speaks JSON-RPC line by line itself, without the SDK, so it can send any bytes. Its
tool list: three good tools (`echo`, `result`, `corpus`), one with a 10 MB description,
two whose schemas cannot check arguments (`UNCHECKABLE`), tools kioku must refuse
(`REFUSED`), then `FILLERS` more good ones, past kioku's per-server limit.

- `echo {text}` answers the text;
- `result {shape}` answers with the hostile result `shape` (one of `SHAPES`);
- `corpus {item, as}` answers with the corpus item: `as: "line"` sends its bytes as the
  whole answer line, `"text"` as a text block, `"structured"` as structured content.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.helpers.hostile import BIG, DEEP, ITEMS

FILLERS = 3_000
OBJECT = {"type": "object"}
GOOD = [
    {
        "name": "echo",
        "description": "Return the text unchanged.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {"name": "result", "description": "A hostile result.", "inputSchema": OBJECT},
    {"name": "corpus", "description": "A corpus item.", "inputSchema": OBJECT},
]


def _deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


REFUSED: dict[str, dict[str, Any]] = {
    "deep_schema": {"inputSchema": _deep(45)},
    "invalid_schema": {"inputSchema": {"type": 42}},
    "huge_schema": {
        "inputSchema": {"type": "object", "properties": {f"p{i}": OBJECT for i in range(5_000)}}
    },
    "n" * 200: {"inputSchema": OBJECT},
    "clash.me": {"inputSchema": OBJECT},
    "clash me": {"inputSchema": OBJECT},
}
"""Tools kioku leaves out, by name (`clash.me` is kept: `clash me` would have its name)."""
HUGE_DESCRIPTION = {"name": "huge_description", "description": "d" * BIG, "inputSchema": OBJECT}
UNCHECKABLE = [
    {"name": "ref_loop", "inputSchema": {"type": "object", "allOf": [{"$ref": "#"}]}},
    {
        "name": "remote_ref",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"$ref": "http://169.254.169.254/latest/meta-data"}},
        },
    },
]
"""Valid JSON Schema that cannot check arguments: a `$ref` loop, a `$ref` to a URL."""


def tool_list() -> list[dict[str, Any]]:
    refused = [{"name": name, **tool} for name, tool in REFUSED.items()]
    fillers = [{"name": f"filler_{i}", "inputSchema": OBJECT} for i in range(FILLERS)]
    return [*GOOD, HUGE_DESCRIPTION, *UNCHECKABLE, *refused, *fillers]


def _text(text: str, **extra: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], **extra}


def _line(request_id: int, result: bytes) -> bytes:
    """A whole answer line around `result`, bytes the fake does not encode itself."""
    return b'{"jsonrpc": "2.0", "id": %d, "result": ' % request_id + result + b"}"


def _result(shape: str, request_id: int) -> dict[str, Any] | bytes:
    """A result by name; bytes are sent as the whole answer line."""
    nested: Any = "bottom"
    for _ in range(100):
        nested = {"a": nested}
    if shape == "unreadable-deep":
        return _line(request_id, b"[" * DEEP + b"]" * DEEP)
    if shape == "lone-surrogate":
        return _line(request_id, b'{"content": [{"type": "text", "text": "a\\ud800b"}]}')
    if shape == "nan-structured":
        return _line(request_id, b'{"content": [], "structuredContent": {"n": NaN}}')
    return {
        "deep-structured": {"content": [], "structuredContent": nested},
        "ten-mb-text": _text("x" * BIG),
        "ten-mb-error": _text("e" * BIG, isError=True),
        "many-blocks": {"content": [{"type": "text", "text": "b"}] * 20_000},
        "invalid-content-type": {"content": [{"type": "video", "url": "file:///x"}]},
        "content-not-a-list": {"content": 42},
        "null-content": {"content": None},
    }[shape]


SHAPES = (
    "unreadable-deep",
    "lone-surrogate",
    "nan-structured",
    "deep-structured",
    "ten-mb-text",
    "ten-mb-error",
    "many-blocks",
    "invalid-content-type",
    "content-not-a-list",
    "null-content",
)


def _corpus(item: str, given_as: str, request_id: int) -> dict[str, Any] | bytes:
    raw = ITEMS[item]
    if given_as == "line":
        return raw
    if given_as == "text":
        return _text(raw.decode("utf-8", "replace"))
    return _line(request_id, b'{"content": [], "structuredContent": ' + raw + b"}")


def answer(request: dict[str, Any], mode: str, pages: int) -> dict[str, Any] | bytes | None:
    """The answer to one request: a result object, the whole line as bytes, or None."""
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "0"},
        }
    if method == "tools/list":
        if mode == "--unreadable-list":
            return _line(request["id"], b'{"tools": ' + b"[" * DEEP)
        if mode == "--endless-pages":
            return {
                "tools": [{"name": f"page_{pages}", "inputSchema": OBJECT}],
                "nextCursor": "more",
            }
        return {"tools": tool_list()}
    if method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments") or {}
        if name == "echo":
            return _text(str(arguments.get("text")))
        if name == "result":
            return _result(arguments["shape"], request["id"])
        if name == "corpus":
            return _corpus(arguments["item"], arguments.get("as", "line"), request["id"])
        return _text(f"{name} ran")
    return {} if "id" in request else None


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    out = sys.stdout.buffer
    pages = 0
    for line in sys.stdin.buffer:
        request = json.loads(line)
        reply = answer(request, mode, pages)
        pages += request.get("method") == "tools/list"
        if reply is None:
            continue
        if not isinstance(reply, bytes):
            reply = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": reply}).encode()
        out.write(reply + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
