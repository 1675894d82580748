"""A reply as Matrix message contents: `org.matrix.custom.html` rendered from the Markdown,
with the Markdown itself as the plain `body` every client can show, split to fit.

An event may hold 65,536 bytes in all; a piece of at most `LIMIT` bytes of Markdown
leaves room for its HTML beside it. Raw HTML in a reply is shown as text, never
rendered (markdown-it's `html` off). In a thread a reply carries the `m.thread`
relation (with the message answered as its `m.in_reply_to`); in a group room outside a
thread the first piece replies to the message that addressed kioku.
"""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt

from adapters.base import Address
from adapters.chunking import split_message

LIMIT = 16_000
HTML = "org.matrix.custom.html"
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable(["strikethrough", "table"])


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def pieces(text: str) -> list[str]:
    """The reply cut into messages of at most `LIMIT` bytes, code fences kept whole."""
    return split_message(text, LIMIT, _bytes)


def content(piece: str, address: Address, *, first: bool, direct: bool) -> dict[str, Any]:
    """One `m.room.message` of the reply."""
    message: dict[str, Any] = {
        "msgtype": "m.text",
        "body": piece,
        "format": HTML,
        "formatted_body": _MARKDOWN.render(piece).strip(),
    }
    if address.thread:
        relation: dict[str, Any] = {"rel_type": "m.thread", "event_id": address.thread}
        answered = address.reply_to if first and address.reply_to else address.thread
        relation["is_falling_back"] = not (first and address.reply_to)
        relation["m.in_reply_to"] = {"event_id": answered}
        message["m.relates_to"] = relation
    elif first and address.reply_to and not direct:
        message["m.relates_to"] = {"m.in_reply_to": {"event_id": address.reply_to}}
    return message
