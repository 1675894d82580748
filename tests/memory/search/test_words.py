"""Any text is a valid query: never an FTS5 syntax error, never a crash."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.access.identities import ensure_person
from memory.search.ranking import Scope, match_terms, search
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage
from memory.store.schema import SCOPE_MARK
from memory.store.segment import segment

NASTY = [
    "",
    " ",
    '"',
    '"unbalanced',
    "'single",
    "*",
    "^",
    "^start",
    ":",
    "body:secret",
    "scope:s1",
    "(",
    ")",
    "((a)",
    "a AND",
    "AND OR NOT",
    "NEAR(a b, 3)",
    "NEAR/2",
    "a - b",
    "-",
    "+",
    "{body}: x",
    "col:*",
    '"" "" ""',
    "🙂🙃🔥",
    "🙂 emoji",
    "\x00\x01\x02",
    "\u200b\u200d",
    "ﾊﾝｶｸ",
    "\uff26\uff55\uff4c\uff4c\u3000\uff57\uff49\uff44\uff54\uff48",  # full width
    "é" * 50,
    "a" * 10_000,
    "京都 " * 2_000,
    "x'); DROP TABLE messages; --",
    "rank:bm25",
    "\\",
    "[]{}<>",
]

FTS = sqlite3.connect(":memory:")
FTS.execute(
    "CREATE VIRTUAL TABLE t USING fts5(body, scope, "
    "tokenize='porter unicode61 remove_diacritics 2', detail=none, columnsize=0)"
)
FTS.execute("INSERT INTO t VALUES (?, ?)", (segment("京都で抹茶 planning 🙂"), f"{SCOPE_MARK}1"))


def fts_accepts(query: str) -> None:
    terms = match_terms(query)
    if terms:
        FTS.execute(
            "SELECT rowid FROM t WHERE t MATCH ?",
            (f'("{SCOPE_MARK}1") AND ({" OR ".join(terms)})',),
        ).fetchall()


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_arbitrary_text_builds_a_valid_match_expression(query: str) -> None:
    fts_accepts(query)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from('"*^:()-+ ANDORTNE京都茶ひらがなカタ🙂\\{}'), max_size=40))
def test_query_syntax_characters_build_a_valid_match_expression(query: str) -> None:
    fts_accepts(query)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        session = await opened.open_session(Conversation("cli", "1", "dm", "owner"))
        await opened.append(session.id, NewMessage("user", "AND OR NOT 京都 secret"))
        yield opened


@pytest.mark.parametrize("query", NASTY, ids=range(len(NASTY)))
async def test_nasty_queries_return_a_list(store: Store, query: str) -> None:
    assert isinstance(await search(store, query, Scope.of_person("owner")), list)


async def test_query_words_that_are_fts_operators_are_searched_as_words(store: Store) -> None:
    assert len(await search(store, "NOT", Scope.of_person("owner"))) == 1


async def test_a_column_filter_in_the_query_does_not_reach_other_scopes(store: Store) -> None:
    await ensure_person(store, "bob")
    other = await store.open_session(Conversation("cli", "2", "dm", "bob"))
    await store.append(other.id, NewMessage("user", "bob only"))
    assert await search(store, "scope:s2 OR body:bob", Scope.of_person("owner")) == []


async def test_a_turn_spelling_a_scope_token_does_not_reach_that_scope(store: Store) -> None:
    await ensure_person(store, "bob")
    other = await store.open_session(Conversation("cli", "2", "dm", "bob"))
    await store.append(other.id, NewMessage("user", f"{SCOPE_MARK}1 secret of bob"))
    found = await search(store, "secret", Scope.of_person("owner"))
    assert [hit.content for result in found for hit in result.hits] == ["AND OR NOT 京都 secret"]
