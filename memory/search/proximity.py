"""Query words said close together in a turn: a bonus on top of what each word weighs.

Two words next to each other in the query are often one thing said in two words
("support group", "adoption agency", "京都 抹茶"); a turn holding them side by side,
or near each other, more likely speaks of that thing than one holding them in
different sentences. This is Metzler and Croft's sequential dependence model ("A
Markov random field model for term dependencies", SIGIR 2005) on the unigram
scores of memory.search.ranking: for each pair of words adjacent in the query, a
turn gains when it says them in order with at most `ORDERED_GAP` other words
between (their #1 feature, loosened for the words a query leaves out) or within
any `WINDOW` words in either order (their #uw8), each weighted as their model
weighs the three kinds of evidence (`UNIGRAM`, `ORDERED`, `UNORDERED`).

A pair weighs as its more common word does (as Rasolofo and Savoy's BM25TP
weighs it, "Term proximity scoring for keyword-based retrieval systems", ECIR
2003): a pair is no rarer than that. Its bonus, at most (`ORDERED` + `UNORDERED`) /
`UNIGRAM` (about a sixth) of that word's weight, lets words said together decide
between turns holding the same words; a turn holding one more word of the query
(unless one six times as common) still ranks above.

The index keeps no positions (memory.store.schema), so positions are read here on
the candidate turns' normalised text: Latin words by stem, stopwords not counted
(a query leaves them out, so "trip *to the* beach" says `trip beach` in order);
CJK by characters (a particle between two words is one character). Words adjacent
in the query are those left once the words weighing nothing are left out too (a
name said in every session, memory.search.everywhere): "book Mika recommended"
pairs `book` with `recommended`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from itertools import pairwise

from memory.search.matching import LATIN_WORD, word_stem
from memory.search.words import STOPWORDS, Word
from memory.store.segment import CJK_RUN

# The sequential dependence model's weights for single words, ordered pairs and
# unordered windows (Metzler and Croft's values, tuned on TREC collections).
UNIGRAM = 0.85
ORDERED = 0.10
UNORDERED = 0.05
# Other words allowed between an ordered pair; the unordered window's width.
ORDERED_GAP = 1
WINDOW = 8

_Span = tuple[int, int]
# A CJK run (first group) or a Latin word (second).
_TOKEN = re.compile(f"({CJK_RUN.pattern})|({LATIN_WORD.pattern})")


class Proximity:
    """The bonus a turn earns for saying the query's adjacent words close together."""

    def __init__(self, words: Sequence[Word]) -> None:
        self.size = len(words)
        self.stems: dict[str, list[int]] = defaultdict(list)
        for index, word in enumerate(words):
            for stem in word.stems if word.kind == "latin" else ():
                self.stems[stem].append(index)
        self.cjk = [(i, w.text) for i, w in enumerate(words) if w.kind != "latin"]
        # Each Latin word of the turns read, once: the query words it is (None: a stopword).
        self.seen: dict[str, tuple[int, ...] | None] = {}

    def bonus(self, text: str, weights: Sequence[float], held: Sequence[float]) -> float:
        """What normalised `text`, holding each word as much as `held`, gains over its
        unigram score for the pairs it says close together, words weighing `weights`
        (those weighing nothing left out of the query's order)."""
        weighed = [i for i in range(self.size) if weights[i]]
        pairs = [(a, b) for a, b in pairwise(weighed) if held[a] and held[b]]
        if not pairs:
            return 0.0
        spans = self.spans(text)
        gained = 0.0
        for a, b in pairs:
            ordered, near = _closeness(spans.get(a, ()), spans.get(b, ()))
            if near:
                share = (ORDERED if ordered else 0.0) + UNORDERED
                gained += min(weights[a], weights[b]) * share / UNIGRAM
        return gained

    def spans(self, text: str) -> dict[int, list[_Span]]:
        """Where in normalised `text` each query word is: first and last position, a
        Latin word counting one (stopwords none), a CJK character one."""
        found: dict[int, list[_Span]] = defaultdict(list)
        position = 0
        for run, latin in _TOKEN.findall(text):
            if latin:
                if latin not in self.seen:
                    self.seen[latin] = self._indexes(latin)
                indexes = self.seen[latin]
                if indexes is not None:
                    for index in indexes:
                        found[index].append((position, position))
                    position += 1
                continue
            for index, word in self.cjk:
                start = run.find(word)
                while start >= 0:
                    found[index].append((position + start, position + start + len(word) - 1))
                    start = run.find(word, start + 1)
            position += len(run)
        return found

    def _indexes(self, token: str) -> tuple[int, ...] | None:
        if token in STOPWORDS:
            return None
        return tuple(self.stems.get(word_stem(token), ()))


def _closeness(first: Sequence[_Span], second: Sequence[_Span]) -> tuple[bool, bool]:
    """Whether some occurrence of `second` follows one of `first` within `ORDERED_GAP`
    words, and whether some two lie within a `WINDOW` in either order."""
    near = False
    for a_start, a_end in first:
        for b_start, b_end in second:
            if 0 <= b_start - a_end - 1 <= ORDERED_GAP:
                return True, True
            if max(a_end, b_end) - min(a_start, b_start) < WINDOW:
                near = True
    return False, near
