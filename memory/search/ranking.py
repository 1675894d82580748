"""Session search: any text in, ranked sessions out, never beyond the searcher's scope.

Finding. Each word of the query (see memory.search.words) becomes quoted FTS5 terms,
so no user text ever reaches FTS5's query syntax. Latin words are matched as FTS5
stems them (porter: plans/planned/planning), in British and American spelling alike
(colour/color); a CJK word is found by all of the bigrams the index holds for it (see
memory.store.segment), a long one also by any one of them; a kana written alone (シ
and ツ) is searched as itself.

Which turns are ranked is memory.search.candidates: the newest in scope holding each
word, and all of them, found at a cost that does not grow with how many turns match.

Ranking. The candidates are ranked by the query's *words*. A turn holds each word
fully, partly (some of a long CJK word's bigrams, only the kanji of a verb, or fewer
times than the query says it: memory.search.matching) or not, and a word weighs its
inverse document frequency. A session scores its best turn (words said together)
plus every word it holds in any turn, saturating as more turns repeat it (BM25's
term-frequency curve, over turns). A turn saying two words adjacent in the query close
together earns a small bonus on top (memory.search.proximity). Ties go to the newer.

Phrases (memory.search.phrases). A session whose turn says the query as typed, or
every quoted phrase and identifier in it, ranks above the rest; a turn that does not
say a quoted phrase is no hit (unless none does). A session's hits are its best turns:
those saying the phrases, then the highest scored, ties to the newer; each says why it
matched.

Scope: a person's search covers their DMs and the group chats they spoke in; of
those chats' sessions, the ones the person took part in.
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from memory.search.candidates import find, idf
from memory.search.everywhere import discounted, everywhere, newest_sessions
from memory.search.highlight import Highlighter
from memory.search.matching import Matcher
from memory.search.phrases import Phrases, read_phrases
from memory.search.proximity import Proximity
from memory.search.readable import Turn, in_period
from memory.search.scope import Reach, Scope, resolve
from memory.search.shown import contexts, result, sessions_by_id
from memory.search.when import Boost, Period, When, read
from memory.search.words import (
    MAX_TERMS,
    Word,
    english_stem,
    has_content,
    match_terms,
    query_words,
    spellings,
)
from memory.store.records import Hit, Reason, SessionResult, from_epoch
from memory.store.segment import normalize

if TYPE_CHECKING:
    from memory.store.database import Store

__all__ = [
    "Scope",
    "When",
    "english_stem",
    "match_terms",
    "named_periods",
    "query_words",
    "search",
    "search_in",
    "spellings",
]

HITS_PER_SESSION = 3
# BM25's k1: how fast repeating a word over more of a session's turns stops adding.
SATURATION = 1.2
# How much more a session scores for a matching turn said in a period the query names:
# the narrower the period, the surer the sign (a day; a range of days, a month or a
# season; a year).
DAY_BOOST = 2.0
MONTH_BOOST = 1.0
YEAR_BOOST = 0.5
# Turns of a period counted, at most, to weigh it.
PERIOD_COUNT = 5000


async def search(
    store: Store,
    query: str,
    scope: Scope,
    *,
    limit: int = 10,
    context: int = 2,
    when: When | None = None,
) -> list[SessionResult]:
    """Sessions matching `query` within `scope`, best first (at most `limit`). With `when`
    (the searcher's clock, and any since/until), time in the query narrows or boosts
    (memory.search.when); without it, time words are words like any other."""
    return await store.read(
        lambda db: search_in(db, query, scope, limit=limit, context=context, when=when)
    )


def search_in(
    db: sqlite3.Connection,
    query: str,
    scope: Scope,
    *,
    limit: int = 10,
    context: int = 2,
    when: When | None = None,
) -> list[SessionResult]:
    """`search` on a plain connection: the store runs it in one hop to a read connection
    (see memory.store.read_pool), and a short-lived command that reads state.db without
    opening the store calls it directly (see memory.store.quick_read).

    A query of nothing but time lists the period's sessions; one whose time holds none
    of what it finds is searched again as typed (see memory.search.when)."""
    reading = read(query, when)
    words = _searched(query_words(reading.text))
    listing = reading.timed and not has_content(reading.text)
    if not (words or listing) or limit <= 0:
        return []
    reach = resolve(db, scope)
    if not reach.scopes:
        return []
    if listing:
        words = []
        dated = replace(reach, period=reading.listed())
        ranked = _by_time(in_period(db, dated, limit, HITS_PER_SESSION))[:limit]
    else:
        narrowed = replace(reach, period=reading.narrowed())
        ranked = _dated_rank(db, reading.text, words, narrowed, reading.boosts)[:limit]
        if reading.text != query and not reading.holds([t.ts for s in ranked for t in s.turns]):
            words = _searched(query_words(query))
            ranked = _dated_rank(db, query, words, replace(reach, period=reading.bounds), ())
            ranked = ranked[:limit]
    if not ranked:
        return []
    sessions = sessions_by_id(db, [s.session_id for s in ranked])
    windows = contexts(db, [(s.session_id, s.turns[0].id) for s in ranked], context)
    marker, matcher = Highlighter(words), Matcher(words)
    return [
        result(
            sessions[s.session_id],
            s.score,
            [
                Hit(
                    t.id,
                    t.role,
                    from_epoch(t.ts),
                    marker.snippet(t.content),
                    t.content,
                    _reason(tier, matcher.found(normalize(t.content))),
                )
                for t, tier in zip(
                    s.turns[:HITS_PER_SESSION], s.tiers[:HITS_PER_SESSION], strict=True
                )
            ],
            windows.get(s.session_id, []),
        )
        for s in ranked
    ]


def _searched(words: list[Word]) -> list[Word]:
    """The words searched for: as many as fit in `MAX_TERMS` FTS5 terms, in query order."""
    kept, used = [], 0
    for word in words:
        used += len(word.terms)
        if used > MAX_TERMS:
            break
        kept.append(word)
    return kept


@dataclass(slots=True)
class _Ranked:
    """A session's score and its candidate turns, best first: each turn's score and
    phrase tier (memory.search.phrases.Phrases.tier) beside it."""

    session_id: int
    score: float
    turns: list[Turn]
    newest: float
    scores: list[float] = field(default_factory=list)
    tiers: list[int] = field(default_factory=list)


def _rank(
    words: list[Word], rows: list[Turn], found: list[int], total: int, newest: list[int]
) -> list[_Ranked]:
    """Sessions of the candidate `rows` by the query words they hold, best first.

    A word's weight comes from how many turns hold it: FTS5's count in scope (`found`)
    or, if more, the candidates holding it; `total` is about how many turns are
    stored, so a word is only as rare as the whole history makes it. A word in nearly
    all of the `newest` sessions weighs nothing (see memory.search.everywhere).
    """
    matcher, proximity = Matcher(words), Proximity(words)
    texts = [normalize(row.content) for row in rows]
    held = [matcher.held(text) for text in texts]
    columns = zip(*held, strict=True) if held else ()
    weights = discounted(
        [
            idf(max(count, len(column) - column.count(0.0)), max(total, len(rows)))
            for count, column in zip(found, columns, strict=False)
        ],
        everywhere(newest, [row.session_id for row in rows], held),
    )
    scores = [
        sum(map(operator.mul, weights, h)) + proximity.bonus(text, weights, h)
        for text, h in zip(texts, held, strict=True)
    ]
    order = sorted(range(len(rows)), key=lambda i: (-scores[i], len(rows[i].content), -rows[i].ts))
    sessions: dict[int, _Ranked] = {}
    repeats: dict[int, list[float]] = {}
    for index in order:
        row = rows[index]
        found = sessions.get(row.session_id)
        if found is None:
            sessions[row.session_id] = _Ranked(
                row.session_id, scores[index], [row], row.ts, [scores[index]]
            )
            repeats[row.session_id] = list(held[index])
            continue
        found.turns.append(row)
        found.scores.append(scores[index])
        found.newest = max(found.newest, row.ts)
        repeats[row.session_id] = list(map(operator.add, repeats[row.session_id], held[index]))
    for session in sessions.values():
        session.score += sum(
            w * n * (SATURATION + 1) / (n + SATURATION)
            for w, n in zip(weights, repeats[session.session_id], strict=True)
            if n
        )
    return sorted(sessions.values(), key=lambda s: (-s.score, len(s.turns[0].content), -s.newest))


def _phrases_first(ranked: list[_Ranked], phrases: Phrases, texts: dict[int, str]) -> list[_Ranked]:
    """Each session's turns saying the query's phrases first, then the best, ties to the
    newer; the sessions saying them before the rest (each group in its ranked order).
    `texts`: each turn's normalised text, by id."""
    for session in ranked:
        turns, scores = session.turns, session.scores
        tiers = [phrases.tier(texts[turn.id]) for turn in turns]
        if len(turns) == 1:
            session.tiers = tiers
            continue
        order = sorted(range(len(turns)), key=lambda i: (-tiers[i], -scores[i], -turns[i].ts))
        session.turns = [turns[i] for i in order]
        session.scores = [scores[i] for i in order]
        session.tiers = [tiers[i] for i in order]
    return sorted(ranked, key=lambda s: -s.tiers[0])


def _dated_rank(
    db: sqlite3.Connection,
    query: str,
    words: list[Word],
    reach: Reach,
    boosts: tuple[Boost, ...],
) -> list[_Ranked]:
    """`_rank` of the turns in `reach` (and its period), sessions with a matching turn in
    one of `boosts` raised (`_boost`); then the query's phrases first."""
    phrases = read_phrases(query, words)
    candidates = find(db, words, reach, phrases.sought)
    texts = {row.id: normalize(row.content) for row in candidates.rows}
    phrases = phrases.found_in(list(texts.values()))
    rows = [row for row in candidates.rows if phrases.allows(texts[row.id])]
    newest = newest_sessions(db, reach)
    ranked = _rank(words, rows, candidates.found, candidates.total, newest)
    if boosts:
        _boost(db, ranked, boosts, candidates.total)
    return _phrases_first(ranked, phrases, texts)


def _boost(
    db: sqlite3.Connection, ranked: list[_Ranked], boosts: tuple[Boost, ...], total: int
) -> None:
    """Raise the sessions with a matching turn said in a period the query names
    (`named_periods`), and sort again. The period counts as a word the session holds,
    weighed by how rare turns of that period are, or raises a session that holds the
    words well by its strength, whichever is more."""
    found = [turn.ts for session in ranked for turn in session.turns]
    for period, strength in named_periods(boosts, found):
        weight = idf(_turns_in(db, period), total)
        for session in ranked:
            if any(period.holds(turn.ts) for turn in session.turns):
                session.score = max(session.score * (1 + strength), session.score + weight)
    ranked.sort(key=lambda session: -session.score)


def named_periods(boosts: Sequence[Boost], found: Sequence[float]) -> list[tuple[Period, float]]:
    """The periods a query names that hold any of the turns said at `found` (of one
    named without a year, the latest that does), each with the share of its score a
    session with a turn in it gains: a search by meaning raises its sessions alike."""
    chosen = (boost.holding(found) for boost in boosts)
    return [(period, _strength(period)) for period in chosen if period is not None]


def _strength(period: Period) -> float:
    """How much of its score a session gains for a turn in `period`: a day (with its
    hour of daylight saving) the most, a year the least."""
    span = period.end - period.start
    if span <= 25 * 3600:
        return DAY_BOOST
    if span <= 93 * 86400:
        return MONTH_BOOST
    return YEAR_BOOST


def _turns_in(db: sqlite3.Connection, period: Period) -> int:
    """About how many turns were said in `period` (counted up to a bound, by time)."""
    return db.execute(
        "SELECT count(*) FROM (SELECT 1 FROM turns INDEXED BY turns_ts "
        f"WHERE ts >= ? AND ts < ? LIMIT {PERIOD_COUNT})",
        (period.start, period.end),
    ).fetchone()[0]


def _by_time(turns: list[Turn]) -> list[_Ranked]:
    """Sessions of `turns` (newest first, grouped by session) in the order they come."""
    sessions: dict[int, _Ranked] = {}
    for turn in turns:
        ranked = sessions.setdefault(turn.session_id, _Ranked(turn.session_id, 0.0, [], turn.ts))
        ranked.turns.append(turn)
        ranked.scores.append(0.0)
        ranked.tiers.append(0)
    return list(sessions.values())


def _reason(tier: int, found: list[float]) -> Reason:
    """Why a turn is a hit: a phrase of the query, its words, or (no words: a listing of
    a period) only when it was said."""
    if not found:
        return "period"
    if tier:
        return "phrase"
    return "all words" if all(share >= 1.0 for share in found) else "some words"
