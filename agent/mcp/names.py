"""How a server's tool is named to the model: `<server>__<tool>`, in the providers' charset.

Anthropic and OpenAI both accept `^[a-zA-Z0-9_-]{1,64}$`; anything else becomes `_`, and a
name longer than 64 keeps its start plus a short hash of the whole, so it stays unique.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
SEPARATOR = "__"
_OUTSIDE_CHARSET = re.compile(r"[^A-Za-z0-9_-]")


def sanitise(part: str) -> str:
    """`part` with every character the providers refuse replaced by `_`."""
    return _OUTSIDE_CHARSET.sub("_", part) or "_"


def tool_name(server: str, tool: str) -> str:
    """The name the model sees for `tool` of `server`, at most 64 characters."""
    name = f"{sanitise(server)}{SEPARATOR}{sanitise(tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"
