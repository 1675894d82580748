"""The phrases a query asks for, and whether a turn says them: its words in order, together.

The index keeps no positions (memory.store.schema: `detail=none`), so FTS5 finds the
turns holding a phrase's words anywhere; whether a turn says them together and in
order is read here, on its normalised text. A phrase is a run of consecutive tokens
as the index cuts them: Latin words (matched by stem, as the query's words are) with
only spaces or punctuation between them, and CJK text contiguous. A query asks for:

- each `"quoted phrase"`: a turn that does not say it is no hit at all (a quote left
  unpaired is ordinary text, and so is a quotation no candidate turn says);
- each identifier, letters and digits joined by - . / : + (`2026-03-03`, `v2.17.1`,
  `JP3312-3312`, `msg-03-03`): its pieces adjacent and in that order;
- the query itself, as typed (less stopwords at either end).

`Phrases.tier` ranks a turn saying the whole query first, then one saying every quoted
phrase and identifier; `Phrase.like` lets memory.search.candidates look for a phrase's
turns in SQL, bounded, when its words are each too common to find them by (further
back for a quoted phrase or an identifier, typed to be found as such).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

from memory.search.matching import prefixes, word_stem
from memory.search.words import STOPWORDS, Word, english_stem, spellings
from memory.store.segment import CJK_RUN, bigrams, normalize

# A query longer than this many tokens is not read as one phrase; at most this many
# quoted phrases and identifiers are asked for (later quotes are ordinary text).
MAX_PARTS = 48
MAX_PHRASES = 8
# A phrase longer than this is searched as its words: no one types one, and its LIKE
# pattern would pass SQLite's limit (50,000 bytes) or cost a scan of its own.
MAX_PHRASE_CHARS = 1000

# Between CJK runs (memory.store.segment.CJK_RUN), the index's Latin tokens and the
# identifiers made of them.
_WORD = re.compile(r"[^\W_]+")
# Starts only where a word starts, and never gives back letters it took: scanning a long
# run of letters or digits stays linear (a backtracking pattern took minutes on 100k digits).
_IDENTIFIER = re.compile(r"(?<![^\W_])[^\W_]++(?:[-./:+][^\W_]++)+")
_QUOTE = re.compile('["\u201c\u201d]')


@dataclass(frozen=True, slots=True)
class Part:
    """One token of a phrase: a Latin word (with its stems) or a CJK run."""

    text: str
    stems: frozenset[str]

    @property
    def cjk(self) -> bool:
        return not self.stems


class Phrase:
    """Consecutive tokens a turn must say together, in order.

    `words`: the indexes of the query words it is made of (what FTS5 can look for);
    `like`: a LIKE pattern that every indexed text saying it matches (see
    memory.store.schema: `coalesce(body, content)` is the indexed text); `asked`: typed
    to be found as such (quoted, an identifier), so worth looking for further back.
    """

    def __init__(self, parts: tuple[Part, ...], words: tuple[int, ...], asked: bool) -> None:
        self.parts = parts
        self.words = words
        self.asked = asked
        # What each part starts with: any text saying the phrase holds them all, and (Latin
        # words) in order with only what the index does not keep between them.
        self.starts = [p.text if p.cjk else _shared_start(prefixes(p.stems)) for p in parts]
        self.like = _like(parts, self.starts)
        latin = len(parts) > 1 and not any(p.cjk for p in parts)
        words = (re.escape(start) + r"[^\W_]*" for start in self.starts)
        self.near = re.compile(r"[\W_]+".join(words)) if latin else None

    def said_in(self, text: str) -> bool:
        """Whether normalised `text` says the phrase: tried only where its first part is."""
        if not all(start in text for start in self.starts):
            return False
        if self.near is not None and not self.near.search(text):
            return False
        if len(self.parts) == 1 and self.parts[0].cjk:
            return True
        at = text.find(self.starts[0])
        while at >= 0:
            if self._said_at(text, at):
                return True
            at = text.find(self.starts[0], at + 1)
        return False

    def _said_at(self, text: str, at: int) -> bool:
        """Whether the phrase is said from `at`: a Latin first part is the word starting
        there, a CJK one ends the run it is in."""
        first, rest = self.parts[0], self.parts[1:]
        last = len(self.parts) - 1
        if first.cjk:
            after = at + len(first.text)
            if after < len(text) and CJK_RUN.match(text, after):
                return False
            tokens = list(islice(_tokens_from(text, after), last))
            parts = list(enumerate(rest, 1))
        else:
            if at and _WORD.match(text, at - 1) and not CJK_RUN.match(text, at - 1):
                return False
            tokens = list(islice(_tokens_from(text, at), last + 1))
            parts = list(enumerate(self.parts))
        return len(tokens) == len(parts) and all(
            _fits(part, token, n, last) for (n, part), token in zip(parts, tokens, strict=True)
        )


@dataclass(frozen=True, slots=True)
class Phrases:
    """What a query asks to be said together: `whole` (the query, if more than one word),
    the `quoted` phrases and the `identifiers`."""

    whole: Phrase | None
    quoted: tuple[Phrase, ...]
    identifiers: tuple[Phrase, ...]

    def found_in(self, texts: list[str]) -> Phrases:
        """These phrases less the quoted ones none of normalised `texts` says: a quotation
        nobody said (a title remembered wrong) is searched as its words, not as nothing."""
        quoted = tuple(p for p in self.quoted if any(p.said_in(text) for text in texts))
        return Phrases(self.whole, quoted, self.identifiers)

    def allows(self, text: str) -> bool:
        """A turn is a hit only if it says every quoted phrase."""
        return all(phrase.said_in(text) for phrase in self.quoted)

    def tier(self, text: str) -> int:
        """2: normalised `text` says the whole query; 1: every quoted phrase and identifier
        (when the query has any); 0: neither."""
        if self.whole is not None and self.whole.said_in(text):
            return 2
        asked = self.quoted + self.identifiers
        return 1 if asked and all(phrase.said_in(text) for phrase in asked) else 0

    @property
    def sought(self) -> tuple[Phrase, ...]:
        """The phrases whose turns memory.search.candidates makes sure of: the quoted ones
        and identifiers, else the query itself."""
        asked = self.quoted + self.identifiers
        return asked or ((self.whole,) if self.whole is not None else ())


def read_phrases(query: str, words: list[Word]) -> Phrases:
    """The phrases `query` asks for, made of the searched `words`."""
    text = normalize(query)
    quotes = [m.start() for m in _QUOTE.finditer(text)][: 2 * MAX_PHRASES]
    quoted = [
        _phrase(_tokens(text[start + 1 : end]), words, asked=True)
        for start, end in zip(quotes[::2], quotes[1::2], strict=False)
    ]
    found = islice(_identifiers(text), MAX_PHRASES)
    identifiers = [p for m in found if (p := _phrase(_tokens(m), words, asked=True))]
    whole = _trimmed(_tokens(text))
    # One Latin word, or one CJK run that is one word, is a word: no phrase to say.
    several = len(whole) > 1 or (len(whole) == 1 and whole[0][0] and len(words) > 1)
    return Phrases(
        _phrase(whole, words, asked=False) if several else None,
        tuple(p for p in quoted if p is not None),
        tuple(identifiers),
    )


def _tokens(text: str) -> list[tuple[bool, str]]:
    """Normalised `text` as the index cuts it: Latin words, and CJK runs whole (whether
    CJK, the token)."""
    return list(_tokens_from(text, 0))


def _tokens_from(text: str, position: int) -> Iterator[tuple[bool, str]]:
    """The tokens of normalised `text` from `position` on (see `_tokens`)."""
    for match in _WORD.finditer(text, position):
        chunk = match.group()
        start = 0
        for run in CJK_RUN.finditer(chunk):
            if run.start() > start:
                yield False, chunk[start : run.start()]
            yield True, run.group()
            start = run.end()
        if start < len(chunk):
            yield False, chunk[start:]


def _identifiers(text: str) -> Iterator[str]:
    """The identifiers in normalised `text` (never across CJK, which the index cuts apart)."""
    position = 0
    for run in [*CJK_RUN.finditer(text), None]:
        end = len(text) if run is None else run.start()
        yield from (m.group() for m in _IDENTIFIER.finditer(text, position, end))
        position = end if run is None else run.end()


def _fits(part: Part, token: tuple[bool, str], n: int, last: int) -> bool:
    """Whether `token` is the phrase's `n`th `part` (of `last` + 1, not the first if CJK:
    see `Phrase._said_at`): a Latin word by its stem, a CJK run whole (the last part
    starts one)."""
    cjk, text = token
    if part.cjk != cjk:
        return False
    if not cjk:
        return word_stem(text) in part.stems
    return text.startswith(part.text) if n == last else text == part.text


def _trimmed(tokens: list[tuple[bool, str]]) -> list[tuple[bool, str]]:
    """`tokens` less stopwords at either end, unless nothing else is left."""
    content = [n for n, (cjk, text) in enumerate(tokens) if cjk or text not in STOPWORDS]
    return tokens[content[0] : content[-1] + 1] if content else tokens


def _phrase(tokens: list[tuple[bool, str]], words: list[Word], asked: bool) -> Phrase | None:
    """The phrase of `tokens` (see `_tokens`), made of those of `words` it holds; None for
    none, or one too long to look for as a phrase."""
    if not tokens or len(tokens) > MAX_PARTS:
        return None
    if sum(len(text) for _, text in tokens) > MAX_PHRASE_CHARS:
        return None
    parts = [
        Part(text, frozenset() if cjk else frozenset(english_stem(s) for s in spellings(text)))
        for cjk, text in tokens
    ]
    held = tuple(
        index
        for index, word in enumerate(words)
        if any(
            (part.cjk and word.kind != "latin" and word.text in part.text)
            or part.stems.intersection(word.stems)
            for part in parts
        )
    )
    return Phrase(tuple(parts), held, asked)


def _like(parts: tuple[Part, ...], starts: list[str]) -> str:
    """`starts` in order, a CJK run's as the bigrams the index stores (memory.store.segment).

    A token holds letters, digits and CJK only, never a LIKE wildcard (% _)."""
    pieces = ["%".join(bigrams(s)) if p.cjk else s for p, s in zip(parts, starts, strict=True)]
    return "%" + "%".join(piece for piece in pieces if piece) + "%"


def _shared_start(texts: tuple[str, ...]) -> str:
    """What all of `texts` start with (colour, color: colo)."""
    first, last = min(texts), max(texts)
    pairs = enumerate(zip(first, last, strict=False))
    return first[: next((n for n, (a, b) in pairs if a != b), len(first))]
