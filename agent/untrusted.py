"""Small checks for what reaches the agent from servers it does not control: model
endpoints (a local one may send anything) and MCP servers.

A `str` parsed from JSON may hold a lone surrogate (`"\\ud800"`), which SQLite, the
platforms and the model APIs all refuse; a parsed value may nest deeper than the
recursive code after it (`json.dumps`, jsonschema) can follow; a message from such a
server may be megabytes long. These helpers measure and repair that before use, and
`fenced` marks a file's text as data in a prompt.
"""

from __future__ import annotations

import re
from typing import Any

from inputs.text import well_formed

SHORT = 300
"""Characters of a remote message kept in a log line or an error (it says what, not all)."""


def shorten(text: str, limit: int = SHORT) -> str:
    """`text` on one line and at most `limit` characters (an ellipsis marks a cut)."""
    flat = " ".join(well_formed(text[: limit * 4]).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def nesting(value: Any, stop_at: int) -> int:
    """How deep lists and dicts nest in `value` (a scalar is 0), counted without recursion;
    counting stops once `stop_at` is passed, so a hostile value costs little."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > deepest:
            deepest = depth
            if deepest > stop_at:
                break
        pending.extend((child, depth + 1) for child in children)
    return deepest


def fenced(tag: str, name: str, body: str) -> str:
    """`body` between `<tag name="…">` and `</tag>` lines, for text the model must read as
    data (a document's text, an image's description): the name is one line, and a closing
    tag inside `body` (in any case) is broken up, so the data cannot end its own fence and
    pose as kioku's words."""
    flat = " ".join(well_formed(name).split())
    quoted = flat.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    closing = re.compile(f"</({re.escape(tag)})", re.IGNORECASE)
    inner = closing.sub(lambda found: f"<\\/{found.group(1)}", well_formed(body))
    return f'<{tag} name="{quoted}">\n{inner}\n</{tag}>'
