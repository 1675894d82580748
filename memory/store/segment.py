"""Text normalisation and segmentation shared by the search index and its queries.

FTS5's unicode61 tokenizer splits on spaces and punctuation, which is right for
English (porter then stems it) but finds nothing inside unspaced Japanese or
Chinese. So before indexing, each CJK run is rewritten as its overlapping
character bigrams plus the run's last character: 抹茶店 -> "抹茶 茶店 店". Any
CJK word of two or more characters is then a phrase of consecutive bigrams, and a
single character is a prefix query ("茶"*). Latin text is left as it is.

Everything is NFKC-normalised and casefolded first, so full-width Latin letters
match ASCII and half-width ｶﾅ matches カナ, on both the document and the query side.

`segment` runs once per stored turn on the event loop, so it is kept cheap: ASCII
text (most English turns) takes a shortcut, and CJK runs are cut by one regex split
rather than a Python callback per run.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

_HAN = "\u3005\u3006\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_HIRAGANA = "\u3041-\u309f"
_KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
CJK_RUN = re.compile(f"[{_HAN}{_HIRAGANA}{_KATAKANA}]+")
_CJK_SPLIT = re.compile(f"({CJK_RUN.pattern})")
_SCRIPT_RUN = re.compile(f"(?P<han>[{_HAN}]+)|(?P<kata>[{_KATAKANA}]+)|(?P<hira>[{_HIRAGANA}]+)")


def normalize(text: str) -> str:
    """NFKC + casefold: the one canonical form used for indexing, querying and highlighting."""
    if text.isascii():
        # NFKC leaves ASCII as it is, and casefold is lower() there.
        return text.lower()
    return unicodedata.normalize("NFKC", text).casefold()


def bigrams(run: str) -> list[str]:
    """Overlapping character pairs of a CJK run (a single character is its own unigram)."""
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def segment(text: str | None) -> str:
    """The indexed form of `text`: normalised, with CJK runs rewritten as bigrams."""
    if not text:
        return ""
    if text.isascii():
        # NFKC leaves ASCII as it is, casefold is lower() there, and there is no CJK.
        return text.lower()
    return segment_text(text)


def stored_form(text: str) -> str | None:
    """What `turns.body` keeps for `text`: its segmented form, or None when FTS5 would
    tokenize `text` itself into the same terms (ASCII: its tokenizer folds case)."""
    if text.isascii():
        return None
    segmented = segment_text(text)
    return None if segmented == text else segmented


def segment_text(text: str) -> str:
    """`segment` without the ASCII shortcut (which must give exactly the same string)."""
    parts = _CJK_SPLIT.split(normalize(text))
    for index in range(1, len(parts), 2):
        run = parts[index]
        if len(run) > 1:
            parts[index] = " " + " ".join([*bigrams(run), run[-1]]) + " "
        else:
            parts[index] = " " + run + " "
    return "".join(parts)


Script = Literal["latin", "han", "kata", "hira"]


@dataclass(frozen=True)
class Piece:
    """One unit of a query: a Latin word, or a run of one CJK script."""

    script: Script
    text: str


def query_pieces(query: str) -> Iterator[Piece]:
    """Split a normalised query into Latin words and single-script CJK runs, in order."""
    text = normalize(query)
    position = 0
    for run in CJK_RUN.finditer(text):
        yield from _latin_words(text[position : run.start()])
        for part in _SCRIPT_RUN.finditer(run.group()):
            kind = part.lastgroup
            assert kind in ("han", "kata", "hira")
            yield Piece(kind, part.group())
        position = run.end()
    yield from _latin_words(text[position:])


def _latin_words(text: str) -> Iterator[Piece]:
    """Maximal runs of letters, digits and combining marks: what unicode61 keeps in a token."""
    start = None
    for index, char in enumerate(text + " "):
        if unicodedata.category(char)[0] in "LNM":
            start = index if start is None else start
        elif start is not None:
            word = text[start:index]
            if any(unicodedata.category(c)[0] in "LN" for c in word):
                yield Piece("latin", word)
            start = None
