"""Near-duplicate notes: does a new entry only say again what an entry already says?

Models re-add what the notes hold in other words ("Prefers short replies." beside
"prefers short answers"), and within weeks the same fact fills a file ten times. The
check here is lexical and cheap (no model, no dictionary): both texts are normalised
(NFKC, case, punctuation, spaces, English stems and a few synonyms, Japanese sentence
endings) and the new one repeats the old one only when it brings nothing of its own:

- no content word, kanji or katakana character pair that the old entry lacks (Japanese
  is compared by character n-grams, since it has no spaces between words);
- no number the old entry lacks ("Meeting at 4pm" beside "Meeting at 3pm");
- the same negations and changes of state ("no longer", "used to", 「もう」「やめた」);
- its words close together in the old entry, not scattered over several facts, and in
  the same order around a comparison ("tea over coffee", 「コーヒーより紅茶」);
- at most one pair of hiragana the old entry lacks: okurigana may differ, a word
  written in kana (りんご, みかん) may not.

An update ("Moved to Osaka" beside "Lives in Tokyo") always brings a word of its own, so
it is never refused: the check is built to miss a paraphrase rather than refuse a new
fact (`tests/bench/bench_note_duplicates.py` measures both on a labelled set).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from memory.search.porter import porter_stem

_HAN = "\u3005\u3006\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KANA = "\u3041-\u309f\u30a1-\u30ff\u31f0-\u31ff"
_HIRAGANA_RUN = re.compile("[\u3041-\u309f]+")
_HARD_RUN = re.compile(f"[{_HAN}]+|[\u30a1-\u30ff\u31f0-\u31ff]+")
_TOKEN = re.compile(f"(\\d+)(?:\\s*(am|pm)\\b)?|([a-z]+)|([{_HAN}{_KANA}]+)")

_STOPWORD_LIST = """a an the and or but of to in on at by for from with into onto about as per via
    is are was were be been being am has have had having do does did doing will would
    can could should shall may might must get gets got i me my mine you your yours he him
    his she her hers it its we us our they them their this that these those there here
    who whom which what s d ll m re ve also just really very quite always usually
    generally typically currently now still big much too so user person use using"""
_STOPWORDS = frozenset(_STOPWORD_LIST.split())
"""Words that say nothing of the fact itself. Negations are not among them (`_MARKER_WORDS`)."""

_MARKER_LIST = """not no never without none nothing nobody neither nor anymore longer again
    former formerly previously ex stop stopped quit quits usedto"""
_MARKER_WORDS = frozenset(_MARKER_LIST.split())
"""Negations and changes of state: a new text must have the same ones as the old."""
_JA_MARKERS = re.compile(
    r"ない|なく|なかっ|ません|ず(?![っつ])|もう|やめ|辞め|止め|以前|かつて|元の"
)
_SYNONYMS = (
    "answer reply response respond",
    "short brief concise",
    "like love enjoy prefer fond favourite favorite",
    "dislike hate detest",
    "child children kid kids",
    "mother mum mom",
    "father dad",
    "bicycle bike cycle",
    "example sample",
    "colour color",
    "name named call called",
    "allergic allergy",
    "email mail",
    "postgresql postgres",
)
_NUMBER_LIST = "zero one two three four five six seven eight nine ten eleven twelve"
_NUMBER_WORDS = {word: str(value) for value, word in enumerate(_NUMBER_LIST.split())}
_PHRASES = (
    (re.compile(r"\bused to\b"), " usedto "),
    (re.compile(r"\bn't\b|n't\b"), " not "),
    (re.compile(r"\be-mail\b"), "email"),
    (re.compile(r"\bevery day\b"), " daily "),
    (re.compile(r"\bevery (week|month|year)\b"), r" \1ly "),
    (re.compile(r"\btwice\b"), " 2 times "),
    (re.compile(r"'s\b"), " "),
)
_COMPARISON = re.compile(r"\b(?:over|than|rather|instead|vs|versus)\b|より")
_JA_ENDINGS = (
    (re.compile(r"(?:でした|であります|である|です|だった|だ)$"), ""),
    (re.compile(r"[てで](?:います|いる|いた|いました|る)$"), ""),
    (re.compile(r"ません"), "ない"),
    (re.compile(r"ました$"), "た"),
    (re.compile(r"ます$"), ""),
    (re.compile(r"^ユーザー(?:は|が)"), ""),
    (re.compile(r"大(?=好き|嫌い)"), ""),
)
COMPARED_CHARS = 20_000
"""Longer texts (ten times a full MEMORY.md: a file edited by hand) are compared only as text."""
SPAN_SLACK = 2
"""How many words of the old entry may sit between those of the new one (scattered facts)."""
KANA_NEW = 1
"""How many pairs of hiragana the old entry lacks a new text may still hold (okurigana)."""


@dataclass(frozen=True)
class _Profile:
    """What a note says, in the forms the comparison needs."""

    plain: str
    units: tuple[str, ...]
    numbers: tuple[str, ...]
    markers: frozenset[str]
    pairs: frozenset[str]
    compares: bool


def plain_form(text: str) -> str:
    """NFKC, casefolded, punctuation and symbols as spaces, spaces collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(c if unicodedata.category(c)[0] in "LN" else " " for c in folded)
    return " ".join(kept.split())


def same_text(one: str, other: str) -> bool:
    """True when the two differ at most in width, case, punctuation and spaces."""
    plain = plain_form(one)
    return bool(plain) and plain == plain_form(other)


def repeated_entry(new: str, entries: Sequence[str]) -> str | None:
    """The first of `entries` that `new` only repeats, or None when `new` says something new."""
    for entry in entries:
        if repeats(new, entry):
            return entry
    return None


def repeats(new: str, old: str) -> bool:
    """True when `new` brings nothing that `old` does not already say."""
    if max(len(new), len(old)) > COMPARED_CHARS:
        return same_text(new, old)
    fresh, kept = _profile(new), _profile(old)
    if fresh.plain == kept.plain:
        return bool(fresh.plain)
    if not fresh.units and not fresh.numbers:
        return False
    if fresh.markers != kept.markers or not _in_order(fresh.numbers, kept.numbers):
        return False
    if not set(fresh.units) <= set(kept.units):
        return False
    if fresh.compares and kept.compares and not _same_order(fresh.units, kept.units):
        return False
    if len(fresh.pairs - kept.pairs) > KANA_NEW:
        return False
    return not fresh.units or _span(fresh.units, kept.units) <= len(set(fresh.units)) + SPAN_SLACK


@functools.lru_cache(maxsize=512)
def _profile(text: str) -> _Profile:
    folded = unicodedata.normalize("NFKC", text).casefold()
    for pattern, replacement in _PHRASES:
        folded = pattern.sub(replacement, folded)
    units: list[str] = []
    numbers: list[str] = []
    markers: set[str] = set()
    pairs: set[str] = set()
    tokens = _TOKEN.findall(folded)
    for place, (number, clock, word, run) in enumerate(tokens):
        if number or word in _NUMBER_WORDS:
            numbers.append((number.lstrip("0") or "0") + clock if number else _NUMBER_WORDS[word])
            units.append("#" + numbers[-1])
        elif word:
            # "a" is an article before a word ("a cat"), a name otherwise ("blood type A").
            article = word == "a" and place + 1 < len(tokens) and tokens[place + 1][2]
            if word in _MARKER_WORDS or porter_stem(word) in _MARKER_STEMS:
                markers.add(porter_stem(word))
            elif word not in _STOPWORDS or (word == "a" and not article):
                units.append(_canonical(word))
        else:
            run = _japanese_plain(run)
            markers.update(_JA_MARKERS.findall(run))
            for kana in _HIRAGANA_RUN.findall(run):
                pairs.update(kana[i : i + 2] for i in range(len(kana) - 1))
            for hard in _HARD_RUN.findall(run):
                units += [hard[i : i + 2] for i in range(len(hard) - 1)] + list(hard)
    compares = bool(_COMPARISON.search(folded))
    return _Profile(
        plain_form(text),
        tuple(units),
        tuple(numbers),
        frozenset(markers),
        frozenset(pairs),
        compares,
    )


def _japanese_plain(run: str) -> str:
    """A Japanese run with its polite and copula endings made plain (です, ます, ています)."""
    for pattern, replacement in _JA_ENDINGS:
        run = pattern.sub(replacement, run)
    return run


def _canonical(word: str) -> str:
    stem = porter_stem(word)
    return _SYNONYM_OF.get(stem, stem)


def _in_order(wanted: Sequence[str], within: Sequence[str]) -> bool:
    """True when `wanted` is `within` with some items left out (a subsequence)."""
    rest = iter(within)
    return all(item in rest for item in wanted)


def _same_order(wanted: Sequence[str], within: Sequence[str]) -> bool:
    """True when the units of `wanted` come in the same order in `within` (first places)."""
    first = {unit: place for place, unit in reversed(list(enumerate(within)))}
    places = [first[unit] for unit in dict.fromkeys(wanted)]
    return places == sorted(places)


def _span(wanted: Sequence[str], within: Sequence[str]) -> int:
    """Length of the shortest stretch of `within` holding every unit of `wanted` (one pass)."""
    need = set(wanted)
    counts: dict[str, int] = {}
    best, start = len(within), 0
    for end, unit in enumerate(within):
        if unit not in need:
            continue
        counts[unit] = counts.get(unit, 0) + 1
        while len(counts) == len(need):
            first = within[start]
            if first in counts:
                best = min(best, end - start + 1)
                counts[first] -= 1
                if not counts[first]:
                    del counts[first]
            start += 1
    return best


_MARKER_STEMS = frozenset(porter_stem(word) for word in _MARKER_WORDS)
_SYNONYM_OF = {
    porter_stem(word): porter_stem(group.split()[0])
    for group in _SYNONYMS
    for word in group.split()
}
