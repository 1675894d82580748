"""Marking a query's words in a hit's text (`**word**`) and cutting a snippet around them."""

from __future__ import annotations

from memory.search.matching import prefixes, word_stem, words_starting
from memory.search.words import Word
from memory.store.segment import bigrams, normalize

SNIPPET_CHARS = 200


def _marked(word: Word) -> list[str]:
    if word.kind == "cjk" and len(word.text) > 3:
        return bigrams(word.text)
    return [word.text, word.text[0]] if word.kind == "okurigana" else [word.text]


class Highlighter:
    """Marks the query's words in raw text (`**word**`) and cuts a window around them."""

    def __init__(self, words: list[Word]) -> None:
        self.stems = {s for w in words for s in w.stems}
        self.prefixes = prefixes(self.stems)
        self.cjk = sorted({m for w in words if w.kind != "latin" for m in _marked(w)})

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the words are; none when folding the text would move its characters."""
        folded = normalize(text)
        if len(folded) != len(text):
            return []
        found = [
            word.span()
            for word in words_starting(folded, self.prefixes)
            if word_stem(word.group()) in self.stems
        ]
        for term in self.cjk:
            start = folded.find(term)
            while start >= 0:
                found.append((start, start + len(term)))
                start = folded.find(term, start + 1)
        return _merge(found)

    def snippet(self, text: str) -> str:
        spans = self.spans(text)
        start = max(0, spans[0][0] - SNIPPET_CHARS // 3) if spans else 0
        end = min(len(text), start + SNIPPET_CHARS)
        out, position = [], start
        for left, right in spans:
            if left < position or right > end:
                continue
            out += [text[position:left], "**", text[left:right], "**"]
            position = right
        out.append(text[position:end])
        prefix = "…" if start > 0 else ""
        suffix = "…" if end < len(text) else ""
        return prefix + "".join(out).replace("\n", " ").strip() + suffix


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for left, right in sorted(spans):
        if merged and left <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], right))
        else:
            merged.append((left, right))
    return merged
