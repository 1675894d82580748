"""Split a Markdown reply into messages a platform accepts, never breaking a code block.

Every platform caps a message (Telegram 4,096 UTF-16 units, Discord 2,000 characters,
Slack a few thousand). A cut prefers a paragraph break, then a line break, then the
end of a sentence, then a space; a cut inside a fenced code block closes the fence
and reopens it, with its language, at the start of the next message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Measure = Callable[[str], int]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# Full stops: Latin ones need a space after them; CJK ones (U+3002, U+FF01, U+FF1F) need none.
_SENTENCE_END = re.compile("(?<=[.!?\u3002\uff01\uff1f])\\s+|(?<=[\u3002\uff01\uff1f])")


def utf16_length(text: str) -> int:
    """Telegram's measure: characters outside the BMP (most emoji) count twice."""
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True)
class _Line:
    text: str
    fence: str | None  # the opening fence line in force *after* this line, if any
    opens_inside: str | None  # the opening fence line in force *before* this line


def split_message(text: str, limit: int, measure: Measure = len) -> list[str]:
    """Chunks of `text`, each at most `limit` by `measure`, code fences balanced in each."""
    if limit < 40:
        raise ValueError("a message limit under 40 leaves no room for code fences")
    if measure(text) <= limit:
        return [text] if text else []
    lines = _annotate(text.split("\n"))
    chunks: list[str] = []
    current: list[_Line] = []
    for line in lines:
        if current and _fits([*current, line], limit, measure):
            current.append(line)
            continue
        if not current:
            current = [line]
            if _fits(current, limit, measure):
                continue
        else:
            cut = _paragraph_cut(current, limit, measure)
            chunks.append(_render(current[:cut]))
            current = [*current[cut:], line]
            if _fits(current, limit, measure):
                continue
            if len(current) > 1:
                chunks.append(_render(current[:-1]))
                current = [line]
                if _fits(current, limit, measure):
                    continue
        # One line longer than a message: cut it by sentences, words, or characters.
        pieces = _split_line(current[0], limit, measure)
        chunks.extend(_render([piece]) for piece in pieces[:-1])
        current = [pieces[-1]]
    if current:
        chunks.append(_render(current))
    return [chunk.strip("\n") for chunk in chunks if chunk.strip()]


def _annotate(raw: list[str]) -> list[_Line]:
    lines: list[_Line] = []
    fence: str | None = None
    for text in raw:
        before = fence
        match = _FENCE.match(text)
        if match:
            marker = match.group(1)
            if fence is None:
                fence = text.strip()
            elif marker.startswith(_marker(fence)) and not match.group(2).strip():
                fence = None
        lines.append(_Line(text, fence, before))
    return lines


def _marker(opening: str) -> str:
    match = _FENCE.match(opening)
    assert match is not None
    return match.group(1)


def _render(lines: list[_Line]) -> str:
    """The chunk's text: reopen the fence it starts inside, close the one it ends inside."""
    body = [line.text for line in lines]
    first, last = lines[0], lines[-1]
    if first.opens_inside is not None:
        body.insert(0, first.opens_inside)
    if last.fence is not None:
        body.append(_marker(last.fence))
    return "\n".join(body)


def _fits(lines: list[_Line], limit: int, measure: Measure) -> bool:
    return measure(_render(lines)) <= limit


def _paragraph_cut(lines: list[_Line], limit: int, measure: Measure) -> int:
    """Where to end the chunk: after the last blank line outside code if that keeps at
    least half a message, else after all the lines gathered."""
    for index in range(len(lines) - 1, 0, -1):
        line = lines[index]
        if not line.text.strip() and line.fence is None and line.opens_inside is None:
            if measure(_render(lines[:index])) >= limit // 2:
                return index
            break
    return len(lines)


def _split_line(line: _Line, limit: int, measure: Measure) -> list[_Line]:
    """Cut one over-long line into pieces that each fit with the fences around them."""
    overhead = measure(_render([_Line("", line.fence, line.opens_inside)]))
    budget = limit - overhead
    pieces: list[str] = []
    rest = line.text
    while measure(rest) > budget:
        head = _longest_prefix(rest, budget, measure)
        pieces.append(head.rstrip() if line.fence is None else head)
        rest = rest[len(head) :]
        if line.fence is None:
            rest = rest.lstrip()
    pieces.append(rest)
    return [_Line(piece, line.fence, line.opens_inside) for piece in pieces]


def _longest_prefix(text: str, budget: int, measure: Measure) -> str:
    """The longest start of `text` within `budget`, ending at a sentence or word if possible."""
    low, high = 1, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if measure(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    hard = text[:low]
    for pattern in (_SENTENCE_END, re.compile(r"\s+")):
        ends = [match.end() for match in pattern.finditer(hard) if match.end() < len(hard)]
        if ends and ends[-1] >= len(hard) // 2:
            return hard[: ends[-1]]
    return hard
