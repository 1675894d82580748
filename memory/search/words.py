"""The words of a query: what `memory.search.ranking` looks for, and the FTS5 terms that find them.

Any text is split into Latin words and CJK runs (memory.store.segment); stopwords and
particles go when anything else is left, and so do the words that only frame a
question ("what did she *say* about…", "would he *likely*…"); kanji joined by
okurigana are one word; a Latin word is searched in its British and American
spellings and ranked by its Porter stem (memory.search.porter); each word becomes
quoted FTS5 terms, so no user text ever reaches FTS5's query syntax.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import groupby
from typing import Literal

from memory.search.irregular import verb_forms
from memory.search.porter import porter_stem
from memory.store.segment import Piece, bigrams, normalize, query_pieces

MAX_TERMS = 48
_STOPWORD_LIST = """a about above after again all am an and any are as at be been before being below
    between both but by can could did do does doing down during each few for from further
    had has have having he her here hers him his how i if in into is it its itself just me
    more most my no nor not now of off on once only or other our ours out over own same she
    should so some such than that the their theirs them then there these they this those
    through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself s d ll m re ve"""
STOPWORDS = frozenset(_STOPWORD_LIST.split())
# Words that frame a question about what was said rather than say what it is about:
# reporting verbs ("what did X say/mention about…"), hedges ("would X likely…",
# "what might…") and "how many/much". Stemming would make `likely` the word `like`.
_FRAME_LIST = """likely unlikely probably possibly perhaps maybe might say says said mention
    mentions mentioned tell tells told describe describes described think thinks considered
    based according many much"""
QUESTION_FRAME = frozenset(_FRAME_LIST.split())
# A query whose first word is one of these (or that ends in "?") is a question.
_OPENER_LIST = """what when where who whom whose which why how did does do is are was were
    has have had can could would will should"""
_QUESTION_OPENERS = frozenset(_OPENER_LIST.split())
# Kana that end a word rather than inflect it: 京都の抹茶, お店は.
PARTICLES = frozenset("はがをにでとのもへやか")


Kind = Literal["latin", "cjk", "okurigana", "kanji", "kana"]


@dataclass(frozen=True)
class Word:
    """One word of the query: found by any of its FTS terms, credited once per turn.

    `text` is a Latin word's stem or the normalised CJK word; `stems` are a Latin
    word's stems in each of its spellings; `times` how often the query says it as it is
    written, which a turn must match as often (`msg-03-03` asks for two `03`s).
    """

    kind: Kind
    text: str
    terms: tuple[str, ...]
    stems: tuple[str, ...] = ()
    times: int = 1


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _cjk_terms(run: str) -> list[str]:
    """A CJK word is all of its bigrams; a long one (4+ characters) also any of them.

    The index keeps no positions (memory.store.schema v5), so not a phrase: a turn holding
    the bigrams apart is a candidate too, and the ranking checks the word itself.
    """
    grams = [_quote(g) for g in bigrams(run)]
    together = grams[0] if len(grams) == 1 else "(" + " AND ".join(grams) + ")"
    return [together] if len(grams) <= 2 else [together, *grams]


def _latin_term(word: str) -> str:
    """A Latin word as FTS5 terms that are each one token: all its parts, if it has several.

    Without positions in the index a quoted string of two tokens (a phrase) is an
    error. SQLite's tokenizer knows Unicode 6.1 and cuts at marks (0\u093a0) and at
    letters newer than that, so the word is cut wherever it might be: at anything
    that was not a letter or digit already in Unicode 3.2.
    """
    if word.isascii():
        return _quote(word)
    parts = ["".join(run) for old, run in groupby(word, key=_old_alnum) if old]
    if len(parts) <= 1:
        return _quote(parts[0] if parts else word)
    return "(" + " AND ".join(_quote(p) for p in parts) + ")"


def _old_alnum(char: str) -> bool:
    return unicodedata.ucd_3_2_0.category(char)[0] in "LN"


_LONE_KANA = re.compile(r"(?<!\w)[\u3041-\u309f\u30a1-\u30ff](?!\w)")


def _is_content(piece: Piece, lone: set[str]) -> bool:
    """Not a stopword or particle; a kana alone counts when written alone (シ and ツ)."""
    if piece.script == "latin":
        return piece.text not in STOPWORDS
    if piece.script == "han" or len(piece.text) > 1:
        return piece.script != "hira"
    return piece.text in lone


_SPELLINGS = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        # organise/organize, analyse/analyze, colour/color (not floor/flour),
        # practise/practice, licence/license, centre/center, catalogue/catalog.
        (r"(?<=\w\w\w)([iy])s(e|es|ed|ing|ation|ations)$", r"\1z\2"),
        (r"(?<=\w\w\w)([iy])z(e|es|ed|ing|ation|ations)$", r"\1s\2"),
        (r"(?<=\w\w\w)our(s|ed|ing|ite|ites|able|ful)?$", r"or\1"),
        (r"(?<=\w\w[^\Wo])or(s|ed|ing|ite|ites|able|ful)?$", r"our\1"),
        (r"(?<=\w\w)(cti|en)c(e|es|ed|ing)$", r"\1s\2"),
        (r"(?<=\w\w)(cti|en)s(e|es|ed|ing)$", r"\1c\2"),
        (r"(?<=\w\w\w)([tb])re(s)?$", r"\1er\2"),
        (r"(?<=\w\w\w)([tb])er(s)?$", r"\1re\2"),
        (r"(?<=\w\w\w)ogue(s)?$", r"og\1"),
        (r"(?<=\w\w\w)og(s)?$", r"ogue\1"),
    )
)


# Every ending one of _SPELLINGS could rewrite: most words have none, and skip them all.
_SPELLING_ENDS = re.compile(
    r"(?:[iy][sz](?:e|es|ed|ing|ations?)|ou?r(?:s|ed|ing|ites?|able|ful)?"
    r"|(?:cti|en)[cs](?:e|es|ed|ing)|[tb](?:re|er)s?|og(?:ue)?s?)$"
)


def spellings(word: str) -> list[str]:
    """`word` and its other English spellings, British or American, so either finds both;
    for an irregular verb, its other forms too (buy, bought: memory.search.irregular)."""
    found = [word, *verb_forms(word)]
    if not _SPELLING_ENDS.search(word):
        return found
    for pattern, replacement in _SPELLINGS:
        other = pattern.sub(replacement, word)
        if other not in found:
            found.append(other)
    return found


def _words(pieces: list[Piece]) -> Iterator[tuple[Piece, str]]:
    """Each piece with the word it starts: kanji joined through okurigana (持ち物, 作り置き).

    A lone kana between two kanji is okurigana unless it is a particle (京都の抹茶), and
    a word ending in one kanji keeps the kana after it (食べた -> 食べ): the stem of a
    verb or adjective, as near as a segmenter without a dictionary can tell.
    """
    index = 0
    while index < len(pieces):
        piece = pieces[index]
        word, index = piece.text, index + 1
        if piece.script != "han":
            yield piece, word
            continue
        last = piece.text
        while (
            index + 1 < len(pieces)
            and pieces[index].script == "hira"
            and len(pieces[index].text) == 1
            and pieces[index].text not in PARTICLES
            and pieces[index + 1].script == "han"
        ):
            last = pieces[index + 1].text
            word += pieces[index].text + last
            index += 2
        after = pieces[index] if index < len(pieces) else None
        if len(last) == 1 and after and after.script == "hira" and after.text[0] not in PARTICLES:
            word += after.text[0]
        yield piece, word


def _framing(query: str, pieces: list[Piece], lone: set[str]) -> frozenset[str]:
    """The words of `QUESTION_FRAME` to leave out: all of them if `query` is a question
    that says something else too, else none ("what did she say?" searches `say`)."""
    latin = [p.text for p in pieces if p.script == "latin"]
    asked = normalize(query).rstrip().endswith("?") or bool(latin and latin[0] in _QUESTION_OPENERS)
    if asked and any(_is_content(p, lone) and p.text not in QUESTION_FRAME for p in pieces):
        return QUESTION_FRAME
    return frozenset()


def query_words(query: str) -> list[Word]:
    """The words searched for: stopwords, particles and a question's framing words go
    when anything else is left."""
    pieces = list(query_pieces(query))
    lone = set(_LONE_KANA.findall(normalize(query)))
    keep_all = not any(_is_content(p, lone) for p in pieces)
    framing = _framing(query, pieces, lone)
    found: dict[tuple[Kind, str], Word] = {}
    said: Counter[str] = Counter()
    for piece, text in _words(pieces):
        if not keep_all and (not _is_content(piece, lone) or piece.text in framing):
            continue
        if piece.script == "latin":
            variants = spellings(text)
            stems = tuple(dict.fromkeys(english_stem(v) for v in variants))
            word = Word("latin", stems[0], tuple(_latin_term(v) for v in variants), stems)
        elif text in lone:
            word = Word("kana", text, (_quote(text),))
        elif len(text) == 1:
            word = Word("kanji", text, (_quote(text) + "*",))
        elif len(text) == 2 and len(piece.text) == 1:
            word = Word("okurigana", text, (_quote(text),))
        else:
            word = Word("cjk", text, tuple(_cjk_terms(text)))
        said[text] += 1
        known = found.get((word.kind, word.text))
        if known is not None:
            word = Word(
                word.kind,
                word.text,
                tuple(dict.fromkeys(known.terms + word.terms)),
                tuple(dict.fromkeys(known.stems + word.stems)),
                max(known.times, said[text]),
            )
        found[(word.kind, word.text)] = word
    return list(found.values())


def has_content(query: str) -> bool:
    """Whether `query` holds a word other than stopwords and particles (what is left of
    "what did we do last week" once the time is read holds none)."""
    lone = set(_LONE_KANA.findall(normalize(query)))
    return any(_is_content(p, lone) for p in query_pieces(query))


def terms(words: list[Word]) -> list[str]:
    return list(dict.fromkeys(t for w in words for t in w.terms))[:MAX_TERMS]


def match_terms(query: str) -> list[str]:
    """The quoted FTS5 terms for `query`."""
    return terms(query_words(query))


def english_stem(word: str) -> str:
    """The stem a lower-case word is ranked and highlighted by: the one FTS5 found it by."""
    return porter_stem(word)
