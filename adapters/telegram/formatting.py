"""Markdown from the model -> the HTML subset Telegram accepts, or the same text plain.

Telegram's HTML knows b, i, s, code, pre (with `<code class="language-x">`), a href and
blockquote; anything else is rejected, so lists become bullet or number lines and
headings become bold lines. Both renderings come from one walk over the markdown-it
tokens, so the plain fallback (sent when Telegram refuses the entities) shows the same
words as the formatted message.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token

from adapters.chunking import split_message, utf16_length

_MARKDOWN = MarkdownIt("commonmark").enable("strikethrough")
_SAFE_LINK = re.compile(r"^(https?|tg|mailto):", re.IGNORECASE)
_INLINE_TAGS = {"strong": "b", "em": "i", "s": "s"}


def split_for_telegram(markdown: str, limit: int) -> list[str]:
    """Markdown chunks whose rendered text each fits `limit` UTF-16 units.

    Rendering can add a little (a blank line after a heading, a space after an empty
    list number), so a split whose chunk renders too long is redone a bit shorter.
    """
    target = limit
    while True:
        chunks = split_message(markdown, target, utf16_length)
        longest = max((_rendered_length(chunk) for chunk in chunks), default=0)
        if longest <= limit:
            return chunks
        target -= longest - limit + 16


def to_html(markdown: str) -> str:
    """Telegram HTML (parse_mode HTML) for one message's Markdown."""
    return _Renderer(markup=True).render(markdown)


def to_plain(markdown: str) -> str:
    """The same message without markup, for when Telegram cannot parse the HTML."""
    return _Renderer(markup=False).render(markdown)


@dataclass
class _Renderer:
    markup: bool
    out: list[str] = field(default_factory=list)
    # One entry per open list: the next number, or None for bullets.
    lists: list[int | None] = field(default_factory=list)
    # The closing tag of each open link: "" for a link shown as plain words.
    links: list[str] = field(default_factory=list)

    def render(self, markdown: str) -> str:
        for token in _MARKDOWN.parse(markdown):
            self._block(token)
        text = re.sub(r"\n{3,}", "\n\n", "".join(self.out))
        return text.strip()

    def _tag(self, text: str) -> None:
        if self.markup:
            self.out.append(text)

    def _close(self, tag: str) -> None:
        """Close `tag`, or drop its opening if nothing came after it (Telegram refuses
        empty entities)."""
        if not self.markup:
            return
        if self.out and _opens(self.out[-1]):
            self.out.pop()
        else:
            self.out.append(tag)

    def _text(self, text: str) -> None:
        self.out.append(html.escape(text, quote=False) if self.markup else text)

    def _newline(self) -> None:
        """Start a new line unless at the start of one (or just inside a block's tag)."""
        last = self.out[-1] if self.out else "\n"
        if not last.endswith("\n") and not _opens(last):
            self.out.append("\n")

    def _block(self, token: Token) -> None:
        kind = token.type
        if kind == "inline":
            for child in token.children or []:
                self._inline(child)
        elif kind == "paragraph_close" and not token.hidden:
            self.out.append("\n\n")
        elif kind == "heading_open":
            self._tag("<b>")
        elif kind == "heading_close":
            self._close("</b>")
            self.out.append("\n\n")
        elif kind in ("bullet_list_open", "ordered_list_open"):
            self._newline()
            start = token.attrGet("start") if kind == "ordered_list_open" else None
            numbered = kind == "ordered_list_open"
            self.lists.append(int(start or 1) if numbered else None)
        elif kind in ("bullet_list_close", "ordered_list_close"):
            self.lists.pop()
            if not self.lists:
                self.out.append("\n")
        elif kind == "list_item_open":
            self._list_item()
        elif kind == "list_item_close":
            self._newline()
        elif kind == "blockquote_open":
            self._tag("<blockquote>")
        elif kind == "blockquote_close":
            while self.out and self.out[-1].endswith("\n"):
                self.out[-1] = self.out[-1].rstrip("\n")
                if not self.out[-1]:
                    self.out.pop()
            self._close("</blockquote>")
            self.out.append("\n\n")
        elif kind in ("fence", "code_block"):
            self._code_block(token)
        elif kind == "hr":
            self.out.append("———\n\n")
        elif kind == "html_block":
            self._text(token.content)

    def _list_item(self) -> None:
        depth = len(self.lists) - 1
        number = self.lists[-1]
        if number is None:
            marker = "•"
        else:
            marker = f"{number}."
            self.lists[-1] = number + 1
        self.out.append("  " * depth + marker + " ")

    def _code_block(self, token: Token) -> None:
        language = token.info.strip().split(" ")[0] if token.type == "fence" else ""
        body = token.content.rstrip("\n")
        if not body.strip():
            return
        self._newline()
        if language:
            self._tag(f'<pre><code class="language-{html.escape(language)}">')
        else:
            self._tag("<pre>")
        self._text(body)
        self._tag("</code></pre>" if language else "</pre>")
        self.out.append("\n\n")

    def _inline(self, token: Token) -> None:
        kind = token.type
        if kind == "text":
            self._text(token.content)
        elif kind in ("softbreak", "hardbreak"):
            self.out.append("\n")
        elif kind == "code_inline":
            self._tag("<code>")
            self._text(token.content)
            self._close("</code>")
        elif kind.endswith("_open") and token.tag in ("strong", "em", "s"):
            self._tag(f"<{_INLINE_TAGS[token.tag]}>")
        elif kind.endswith("_close") and token.tag in ("strong", "em", "s"):
            self._close(f"</{_INLINE_TAGS[token.tag]}>")
        elif kind == "link_open":
            self._link_open(str(token.attrGet("href") or ""))
        elif kind == "link_close":
            closing = self.links.pop() if self.links else ""
            if closing:
                self._close(closing)
        elif kind == "image":
            self._image(token)
        elif kind == "html_inline":
            self._text(token.content)

    def _link_open(self, href: str) -> None:
        if _SAFE_LINK.match(href):
            self._tag(f'<a href="{html.escape(href, quote=True)}">')
            self.links.append("</a>")
        else:
            self.links.append("")

    def _image(self, token: Token) -> None:
        source = str(token.attrGet("src") or "")
        alt = token.content or source
        if _SAFE_LINK.match(source):
            self._tag(f'<a href="{html.escape(source, quote=True)}">')
            self._text(alt)
            self._tag("</a>")
        else:
            self._text(alt)


def _opens(item: str) -> bool:
    """Whether an output item is an opening tag (text is escaped, so "<" starts only tags)."""
    return item.startswith("<") and not item.startswith("</")


def _rendered_length(chunk: str) -> int:
    """The longer of what Telegram counts for the HTML message and for its plain fallback."""
    shown = html.unescape(re.sub(r"<[^>]+>", "", to_html(chunk)))
    return max(utf16_length(shown), utf16_length(to_plain(chunk)))
