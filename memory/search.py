"""Session search: any text in, ranked sessions out, never beyond the searcher's scope.

The MATCH expression is built here from extracted words, each quoted, so no user
text ever reaches FTS5's query syntax. Latin words are matched as FTS5 stems them
(porter: plans/planned/planning); CJK runs become phrases of the bigrams the index
holds (see memory.segment). Terms are OR-ed so BM25 ranks turns that match more of
them higher; sessions are then ranked by their best turns, ties going to the newer.

Scope is part of the same MATCH: every indexed turn carries its session's scope
token, and a person's search asks for their DM token OR the tokens of the groups
they spoke in, so FTS5 intersects the scope itself instead of a join after it.
Group sessions the person did not take part in are then dropped.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import aiosqlite

from memory.records import (
    ContextTurn,
    Hit,
    SessionResult,
    from_epoch,
    group_scope,
    person_scope,
)
from memory.segment import Piece, bigrams, normalize, query_pieces
from memory.store import Store

MAX_TERMS = 48
CANDIDATES = 200
HITS_PER_SESSION = 3
SNIPPET_CHARS = 200
HIT_WEIGHTS = (1.0, 0.5, 0.25)
_STOPWORD_LIST = """a about above after again all am an and any are as at be been before being below
    between both but by can could did do does doing down during each few for from further
    had has have having he her here hers him his how i if in into is it its itself just me
    more most my no nor not now of off on once only or other our ours out over own same she
    should so some such than that the their theirs them then there these they this those
    through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself"""
STOPWORDS = frozenset(_STOPWORD_LIST.split())


@dataclass(frozen=True)
class Scope:
    """On whose behalf a search runs: a person (their DMs and groups) or one group chat."""

    person: str | None = None
    group: tuple[str, str] | None = None

    @classmethod
    def of_person(cls, person: str) -> Scope:
        return cls(person=person)

    @classmethod
    def of_group(cls, platform: str, chat: str) -> Scope:
        return cls(group=(platform, chat))


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _cjk_terms(run: str) -> list[str]:
    """A 2-3 character run is one phrase; a longer one also matches by its parts."""
    if len(run) == 1:
        return [_quote(run) + "*"]
    grams = bigrams(run)
    phrase = _quote(" ".join(grams))
    return [phrase] if len(grams) <= 2 else [phrase, *(_quote(g) for g in grams)]


def _is_content(piece: Piece) -> bool:
    if piece.script == "latin":
        return piece.text not in STOPWORDS
    return piece.script == "han" or (piece.script == "kata" and len(piece.text) > 1)


def match_terms(query: str) -> list[str]:
    """The quoted FTS5 terms for `query`: stopwords and particles go when anything else is left."""
    pieces = list(query_pieces(query))
    keep_all = not any(_is_content(p) for p in pieces)
    terms: list[str] = []
    for index, piece in enumerate(pieces):
        after = pieces[index + 1] if index + 1 < len(pieces) else None
        if not keep_all and not _is_content(piece):
            continue
        if piece.script == "latin":
            terms.append(_quote(piece.text))
        elif len(piece.text) == 1 and piece.script == "han" and after and after.script == "hira":
            # A verb or adjective stem with its okurigana: 持ち物 -> 持ち, 食べた -> 食べ.
            terms.append(_quote(piece.text + after.text[0]))
        else:
            terms += _cjk_terms(piece.text)
    return list(dict.fromkeys(terms))[:MAX_TERMS]


async def search(
    store: Store, query: str, scope: Scope, *, limit: int = 10, context: int = 2
) -> list[SessionResult]:
    """Sessions matching `query` within `scope`, best first (at most `limit`)."""
    terms = match_terms(query)
    if not terms or limit <= 0:
        return []
    async with store.reading() as db:
        tokens, allowed_groups = await _scope_tokens(db, scope)
        if not tokens:
            return []
        expression = f"scope : ({' OR '.join(tokens)}) AND body : ({' OR '.join(terms)})"
        rows = await db.execute_fetchall(
            "SELECT c.rowid, c.score, m.session_id, m.role, m.ts, m.content, s.kind "
            "FROM (SELECT rowid, bm25(messages_fts, 1.0, 0.0) AS score FROM messages_fts "
            "WHERE messages_fts MATCH ? ORDER BY score LIMIT ?) AS c "
            "JOIN messages AS m ON m.id = c.rowid JOIN sessions AS s ON s.id = m.session_id",
            (expression, CANDIDATES),
        )
        by_session: dict[int, list[Any]] = defaultdict(list)
        for row in sorted(rows, key=lambda r: (r[1], -r[4])):
            if row[6] == "group" and allowed_groups is not None and row[2] not in allowed_groups:
                continue
            by_session[row[2]].append(row)
        ranked = sorted(
            by_session.items(),
            key=lambda item: (-_session_score(item[1]), -max(r[4] for r in item[1])),
        )[:limit]
        if not ranked:
            return []
        sessions = await _sessions(db, [sid for sid, _ in ranked])
        windows = await _context(db, [hits[0] for _, hits in ranked], context)
    marker = _Highlighter(query)
    return [
        SessionResult(
            session=sessions[sid][0],
            session_id=sid,
            platform=sessions[sid][1],
            title=sessions[sid][2],
            summary=sessions[sid][3],
            started_at=from_epoch(sessions[sid][4]),
            score=round(_session_score(hits), 6),
            hits=[
                Hit(r[0], r[3], from_epoch(r[4]), marker.snippet(r[5]), r[5])
                for r in hits[:HITS_PER_SESSION]
            ],
            context=windows.get(sid, []),
        )
        for sid, hits in ranked
    ]


def _session_score(hits: list[Any]) -> float:
    """bm25 is negative (lower is better): a session scores its best turns, the first most."""
    return sum(-row[1] * weight for row, weight in zip(hits, HIT_WEIGHTS, strict=False))


async def _scope_tokens(
    db: aiosqlite.Connection, scope: Scope
) -> tuple[list[str], set[int] | None]:
    """FTS scope tokens to search, and for a person the group sessions they took part in."""
    if scope.group is not None:
        rows = await db.execute_fetchall(
            "SELECT id FROM scopes WHERE name = ?", (group_scope(*scope.group),)
        )
        return [f'"s{r[0]}"' for r in rows], None
    if scope.person is None:
        raise ValueError("a search needs a person or a group scope")
    rows = await db.execute_fetchall(
        "SELECT s.scope_id, s.id FROM participants AS p JOIN sessions AS s ON s.id = p.session_id "
        "WHERE p.person_id = ? AND s.kind = 'group' "
        "UNION ALL SELECT id, NULL FROM scopes WHERE name = ?",
        (scope.person, person_scope(scope.person)),
    )
    tokens = sorted({f'"s{r[0]}"' for r in rows})
    return tokens, {r[1] for r in rows if r[1] is not None}


async def _sessions(db: aiosqlite.Connection, ids: list[int]) -> dict[int, tuple[Any, ...]]:
    marks = ",".join("?" * len(ids))
    rows = await db.execute_fetchall(
        "SELECT id, external_id, platform, title, summary, started_at FROM sessions "
        f"WHERE id IN ({marks})",
        ids,
    )
    return {r[0]: tuple(r[1:]) for r in rows}


async def _context(
    db: aiosqlite.Connection, best: list[Any], size: int
) -> dict[int, list[ContextTurn]]:
    """The `size` turns before and after each session's best hit, in one query."""
    if size <= 0:
        return {}
    parts, params = [], []
    for row in best:
        for op, order in (("<", "DESC"), (">", "ASC")):
            parts.append(
                "SELECT * FROM (SELECT id, session_id, role, ts, content FROM messages "
                f"WHERE session_id = ? AND id {op} ? ORDER BY id {order} LIMIT ?)"
            )
            params += [row[2], row[0], size]
    rows = await db.execute_fetchall(" UNION ALL ".join(parts), params)
    windows: dict[int, list[ContextTurn]] = defaultdict(list)
    for r in sorted(rows, key=lambda r: r[0]):
        windows[r[1]].append(ContextTurn(r[0], r[2], from_epoch(r[3]), r[4]))
    return windows


_SUFFIXES = ("ational", "ations", "ation", "ings", "ing", "edly", "ed", "ies", "es", "s", "ly")
_LATIN_WORD = re.compile(r"[^\W_\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")


def light_stem(word: str) -> str:
    """A rough English stem for highlighting only (FTS5's porter decides what matches)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


@functools.lru_cache(maxsize=65536)
def _word_stem(word: str) -> str:
    """Words repeat across hits: stemming each distinct one once keeps snippets cheap."""
    return light_stem(normalize(word))


class _Highlighter:
    """Marks the query's words in raw text (`**word**`) and cuts a window around them."""

    def __init__(self, query: str) -> None:
        pieces = list(query_pieces(query))
        keep_all = not any(_is_content(p) for p in pieces)
        chosen = [p for p in pieces if keep_all or _is_content(p)]
        self.stems = {light_stem(p.text) for p in chosen if p.script == "latin"}
        cjk = [p.text for p in chosen if p.script != "latin"]
        self.cjk = sorted({g for run in cjk for g in ([run] if len(run) <= 3 else bigrams(run))})

    def spans(self, text: str) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        if self.stems:
            for word in _LATIN_WORD.finditer(text):
                if _word_stem(word.group()) in self.stems:
                    found.append(word.span())
        folded = unicodedata.normalize("NFKC", text)
        if len(folded) == len(text):
            for term in self.cjk:
                found += [(m.start(), m.end()) for m in re.finditer(re.escape(term), folded)]
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
