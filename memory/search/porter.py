"""Porter's English stemmer, as FTS5's `porter` tokenizer applies it to every indexed word.

FTS5 decides which turns hold a query word (it finds `planning` for `plans`);
ranking then credits a turn for each word it holds. Both must stem alike, or a
turn FTS5 found would count for nothing (`families` found for `family`, but a
rougher stem calls them different words). This is M. F. Porter's algorithm ("An
algorithm for suffix stripping", 1980) with the two changes of his own C release
that SQLite keeps (`-logi` -> `-log`, `-bli` -> `-ble`), on lower-case text, and
like FTS5 it leaves words shorter than 3 or longer than 64 bytes as they are.
"""

from __future__ import annotations

import functools

_VOWELS = frozenset("aeiou")

# Steps 2, 3 and 4: the longest matching suffix is the only one tried.
_STEP2 = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("izer", "ize"),
    ("logi", "log"),
    ("bli", "ble"),
    ("alli", "al"),
    ("entli", "ent"),
    ("eli", "e"),
    ("ousli", "ous"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("alism", "al"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("biliti", "ble"),
)
_STEP3 = (
    ("icate", "ic"),
    ("ative", ""),
    ("alize", "al"),
    ("iciti", "ic"),
    ("ical", "ic"),
    ("ful", ""),
    ("ness", ""),
)
_STEP4 = (
    "al",
    "ance",
    "ence",
    "er",
    "ic",
    "able",
    "ible",
    "ant",
    "ement",
    "ment",
    "ent",
    "ion",
    "ou",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
)


def _by_length(rules: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(rules, key=lambda rule: -len(rule[0])))


_STEP2_RULES = _by_length(_STEP2)
_STEP3_RULES = _by_length(_STEP3)
_STEP4_RULES = _by_length(tuple((suffix, "") for suffix in _STEP4))


def _consonants(word: str) -> list[bool]:
    """Per letter, whether it is a consonant: y is one after a vowel or at the start."""
    out: list[bool] = []
    for char in word:
        out.append(char not in _VOWELS and not (char == "y" and out and out[-1]))
    return out


def _measure(stem: str) -> int:
    """Porter's m: how many vowel-consonant sequences `stem` holds ([C](VC)^m[V])."""
    flags = _consonants(stem)
    return sum(1 for i in range(1, len(flags)) if flags[i] and not flags[i - 1])


def _has_vowel(stem: str) -> bool:
    return not all(_consonants(stem))


def _cvc(stem: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y (hop, not hoop or snow)."""
    flags = _consonants(stem)
    return len(stem) >= 3 and flags[-3:] == [True, False, True] and stem[-1] not in "wxy"


def _apply(word: str, rules: tuple[tuple[str, str], ...], least: int) -> str:
    for suffix, replacement in rules:
        if word.endswith(suffix) and len(word) > len(suffix):
            stem = word[: -len(suffix)]
            if _measure(stem) > least and (suffix != "ion" or stem[-1] in "st"):
                return stem + replacement
            return word
    return word


def _step1(word: str) -> str:
    if (word.endswith("sses") and len(word) > 4) or (word.endswith("ies") and len(word) > 3):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if word.endswith("eed") and len(word) > 3:
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and len(word) > len(suffix) and _has_vowel(word[: -len(suffix)]):
            word = word[: -len(suffix)]
            if word.endswith(("at", "bl", "iz")):
                return word + "e"
            if word[-1] == word[-2:-1] and word[-1] not in "aeioulsz":
                return word[:-1]
            if _measure(word) == 1 and _cvc(word):
                return word + "e"
            return word
    return word


@functools.lru_cache(maxsize=65536)
def porter_stem(word: str) -> str:
    """The stem FTS5's porter tokenizer indexes lower-case `word` under."""
    if not 3 <= len(word.encode()) <= 64:
        return word
    word = _step1(word)
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    word = _apply(word, _STEP2_RULES, 0)
    word = _apply(word, _STEP3_RULES, 0)
    word = _apply(word, _STEP4_RULES, 1)
    if word.endswith("e"):
        stem = word[:-1]
        if _measure(stem) > 1 or (_measure(stem) == 1 and not _cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word[:-1]) > 1:
        word = word[:-1]
    return word
