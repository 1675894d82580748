"""How fully a turn holds each word of a query, read on the turn's normalised text.

A Latin word is held by any word of the turn with one of its stems; a CJK word by
the word itself (a lone kanji, or a verb's kanji without its kana, say little of the
word meant and count as a fragment; a long word found only in pieces, as its share
of them); a kana written alone by itself written alone. A word the query says more
than once (`msg-03-03`) is held in full only by a turn saying it as often.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator

from memory.search.words import Word, english_stem
from memory.store.segment import bigrams, normalize

# What a lone kanji (or a verb's kanji without its kana) is worth of the word meant;
# a long CJK word found only in pieces, at most.
FRAGMENT_WEIGHT = 0.3
PARTIAL_WEIGHT = 0.5

LATIN_WORD = re.compile(r"[^\W_\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")


class Matcher:
    """How fully a normalised turn holds each query word, from 0 to 1."""

    def __init__(self, words: list[Word]) -> None:
        self.size = len(words)
        self.times = [w.times for w in words]
        self.repeated = any(t > 1 for t in self.times)
        self.kanji = [i for i, w in enumerate(words) if w.kind == "kanji"]
        self.stems: dict[str, list[int]] = defaultdict(list)
        for index, word in enumerate(words):
            for stem in word.stems:
                self.stems[stem].append(index)
        self.prefixes = prefixes(self.stems)
        self.cjk = [
            (i, w.kind, w.text, bigrams(w.text) if w.kind == "cjk" and len(w.text) > 2 else [])
            for i, w in enumerate(words)
            if w.kind not in ("latin", "kana")
        ]
        self.kana = [
            (i, re.compile(rf"(?<!\w){re.escape(w.text)}(?!\w)"))
            for i, w in enumerate(words)
            if w.kind == "kana"
        ]

    def held(self, text: str) -> list[float]:
        """What each word adds to the turn's score: a lone kanji counts as a fragment."""
        held = self.found(text)
        for index in self.kanji:
            held[index] *= FRAGMENT_WEIGHT
        return held

    def found(self, text: str) -> list[float]:
        """How much of each word `text` holds: 1 for the word itself, as often as asked."""
        found = self._counted(text) if self.repeated else self._once(text)
        for index, kind, word, grams in self.cjk:
            if word in text:
                found[index] = min(text.count(word), self.times[index]) / self.times[index]
            elif kind == "okurigana" and word[0] in text:
                found[index] = FRAGMENT_WEIGHT
            elif grams:
                found[index] = _partial(grams, text)
        for index, pattern in self.kana:
            found[index] = min(len(pattern.findall(text)), self.times[index]) / self.times[index]
        return found

    def _once(self, text: str) -> list[float]:
        """Which Latin words `text` holds (no word is asked for twice)."""
        found = [0.0] * self.size
        for word in words_starting(text, self.prefixes):
            for index in self.stems.get(word_stem(word.group()), ()):
                found[index] = 1.0
        return found

    def _counted(self, text: str) -> list[float]:
        """How much of each Latin word `text` holds, counting its repeats."""
        # One word per start: a word starting with two of the prefixes counts once.
        said = {word.start(): word.group() for word in words_starting(text, self.prefixes)}
        counts = [0] * self.size
        for word in said.values():
            for index in self.stems.get(word_stem(word), ()):
                counts[index] += 1
        return [min(n, t) / t for n, t in zip(counts, self.times, strict=True)]


def prefixes(stems: Iterable[str]) -> tuple[str, ...]:
    """A word stems to one of `stems` only if it starts with it, less a final e or i
    that Porter may have written there (hoping -> hope, family -> famili)."""
    return tuple({s[:-1] if len(s) > 1 and s[-1] in "ei" else s for s in stems})


def words_starting(text: str, prefixes: tuple[str, ...]) -> Iterator[re.Match[str]]:
    """The Latin words of normalised `text` that start with any of `prefixes`."""
    for prefix in prefixes:
        start = text.find(prefix)
        while start >= 0:
            if start == 0 or not LATIN_WORD.match(text, start - 1):
                word = LATIN_WORD.match(text, start)
                if word:
                    yield word
            start = text.find(prefix, start + 1)


@functools.lru_cache(maxsize=65536)
def word_stem(word: str) -> str:
    """Words repeat across turns: stemming each distinct one once keeps ranking cheap."""
    return english_stem(normalize(word))


def _partial(grams: list[str], text: str) -> float:
    """The share of a long CJK word's characters that `text` holds in its bigrams."""
    covered = 0
    for start, gram in enumerate(grams):
        if gram in text:
            covered |= 3 << start
    return PARTIAL_WEIGHT * covered.bit_count() / (len(grams) + 1)
