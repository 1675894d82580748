"""Slack text both ways: Markdown to Slack mrkdwn, and Slack message text to plain words.

Slack does not render Markdown: bold is `*one star*`, italics `_underscores_`, links
`<url|label>`, there are no headings or list syntax, and `&`, `<`, `>` must be escaped
everywhere (code included) because Slack reads `<...>` as links and mentions. Incoming
text carries the same encoding (`<@U123>`, `<https://x|x>`, `&amp;`), which the model
should see as plain words.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

_PARSER = MarkdownIt("commonmark").enable("strikethrough")
_LISTS = ("bullet_list", "ordered_list")
_INDENT = "    "
_WRAP = {"strong": "*", "em": "_", "s": "~"}
_ENTITY = re.compile(r"<([^<>\n]*)>")


def escape(text: str) -> str:
    """Slack's three control characters, as its docs ask."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_mrkdwn(markdown: str) -> str:
    """Slack mrkdwn for one message's worth of Markdown (render each chunk on its own)."""
    tree = SyntaxTreeNode(_PARSER.parse(markdown))
    return _blocks(tree.children, 0).strip("\n")


def _blocks(nodes: list[SyntaxTreeNode], depth: int, separator: str = "\n\n") -> str:
    return separator.join(_block(node, depth) for node in nodes)


def _block(node: SyntaxTreeNode, depth: int) -> str:
    kind = node.type
    if kind == "paragraph":
        return _inline(node.children[0]) if node.children else ""
    if kind == "heading":
        return f"*{_plain(node)}*"
    if kind in ("fence", "code_block"):
        return f"```\n{escape(node.content.rstrip(chr(10)))}\n```"
    if kind == "blockquote":
        inner = _blocks(node.children, depth)
        return "\n".join(f"> {line}" if line else ">" for line in inner.split("\n"))
    if kind in _LISTS:
        return _list(node, depth)
    if kind == "hr":
        return "──────────"
    return escape(node.content.rstrip("\n"))


def _list(node: SyntaxTreeNode, depth: int) -> str:
    ordered = node.type == "ordered_list"
    number = int(str(node.attrs.get("start", 1)))
    lines: list[str] = []
    for item in node.children:
        marker = f"{number}." if ordered else "•"
        number += 1
        body = _blocks(item.children, depth + 1, "\n")
        lines.append(f"{_INDENT * depth}{marker} {body.lstrip()}")
    return "\n".join(lines)


def _inline(node: SyntaxTreeNode) -> str:
    parts: list[str] = []
    for child in node.children:
        kind = child.type
        if kind == "text":
            parts.append(escape(child.content))
        elif kind in _WRAP:
            mark = _WRAP[kind]
            parts.append(f"{mark}{_inline(child)}{mark}")
        elif kind == "code_inline":
            parts.append(f"`{escape(child.content)}`")
        elif kind in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif kind in ("link", "image"):
            parts.append(_link(child))
        else:
            parts.append(escape(child.content))
    return "".join(parts)


def _link(node: SyntaxTreeNode) -> str:
    target = str(node.attrs.get("href" if node.type == "link" else "src", ""))
    label = _plain(node) if node.type == "link" else escape(node.content)
    url = escape(target)
    if not label or label in (url, url.removeprefix("mailto:")):
        return f"<{url}>"
    return f"<{url}|{label.replace('|', '¦')}>"


def _plain(node: SyntaxTreeNode) -> str:
    """The words of a node without its formatting (link labels, headings)."""
    if node.type in ("text", "code_inline"):
        return escape(node.content)
    if node.type in ("softbreak", "hardbreak"):
        return " "
    return "".join(_plain(child) for child in node.children)


def from_slack(text: str, bot_user_id: str | None) -> str:
    """Plain text of a Slack message: kioku's own mention removed, others as `@name`,
    links as `label (url)`, entities decoded."""

    def entity(match: re.Match[str]) -> str:
        target, _, label = match.group(1).partition("|")
        if target.startswith("@"):
            return "" if target[1:] == bot_user_id else f"@{label or target[1:]}"
        if target.startswith("#"):
            return f"#{label or target[1:]}"
        if target.startswith("!"):
            return f"@{label or target[1:].split('^')[0]}"
        address = target.removeprefix("mailto:")
        return f"{label} ({address})" if label and label != address else address

    plain = _ENTITY.sub(entity, text)
    plain = plain.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return plain.strip()
