"""How search reads a question: its framing words go, and every word stems as FTS5 stems it."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.search.porter import porter_stem
from memory.search.ranking import Scope, query_words, search
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage
from tests.helpers.paths import DATA

T0 = datetime(2026, 1, 1, tzinfo=UTC)
# Words whose Porter stems take each of its rules, besides the labelled set's own.
_TRICKY_LIST = """caresses ponies ties caress cats feed agreed plastered bled motoring sing
    conflated troubled sized hopping tanned falling hissing fizzed failing filing happy sky
    relational conditional rational valenci hesitanci digitizer conformabli radicalli
    differentli vileli analogousli vietnamization predication operator feudalism
    decisiveness hopefulness callousness formaliti sensitiviti sensibiliti triplicate
    formative formalize electriciti electrical hopeful goodness revival allowance inference
    airliner gyroscopic adjustable defensible irritant replacement adjustment dependent
    adoption homologou communism activate angulariti homologous effective bowdlerize probate
    rate cease controll roll generalization oscillators eed ies sses"""
TRICKY = _TRICKY_LIST.split()


def _fts5_stems(words: list[str]) -> list[str]:
    """What SQLite's own porter tokenizer indexes each of `words` under."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(b, tokenize='porter unicode61')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    db.execute("INSERT INTO t(rowid, b) VALUES (1, ?)", (" ".join(words),))
    at = {offset: term for term, offset in db.execute("SELECT term, offset FROM v")}
    return [at[index] for index in range(len(words))]


def test_every_word_stems_as_fts5_stems_it() -> None:
    text = (DATA / "search_eval" / "sessions.jsonl").read_text(encoding="utf-8").lower()
    words = sorted(set(re.findall(r"[a-z0-9]+", text)) | set(TRICKY))
    assert [porter_stem(w) for w in words] == _fts5_stems(words)


def _texts(query: str) -> list[str]:
    return [w.text for w in query_words(query)]


def test_a_question_loses_the_words_that_only_frame_it() -> None:
    assert _texts("What did Ben say about the garden?") == ["ben", "garden"]
    assert _texts("Would Aiko likely enjoy the jazz festival") == [
        "aiko",
        "enjoi",
        "jazz",
        "festiv",
    ]


def test_a_question_made_only_of_framing_words_still_searches_them() -> None:
    assert _texts("what did she say?") == ["sai"]


def test_framing_words_outside_a_question_are_searched() -> None:
    assert _texts("say hello to the team") == ["sai", "hello", "team"]


def test_dropping_likely_keeps_like() -> None:
    assert _texts("What do her kids like?") == ["kid", "like"]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        yield opened


async def remember(store: Store, chat: str, text: str, days: int) -> int:
    session = await store.open_session(Conversation("telegram", chat, "dm", "owner"))
    await store.append(session.id, NewMessage("user", text, ts=T0 + timedelta(days=days)))
    await store.close_session(session.id, "idle")
    return session.id


async def test_a_turn_found_by_an_inflected_word_counts_it(store: Store) -> None:
    both = await remember(store, "a", "our families swap recipes every single winter", 1)
    one = await remember(store, "b", "recipes", 2)
    found = await search(store, "family recipes", Scope.of_person("owner"))
    assert [r.session_id for r in found] == [both, one]


async def test_a_question_in_the_base_form_finds_the_irregular_past(store: Store) -> None:
    bought = await remember(store, "a", "We bought a kayak at the harbour shop", 1)
    await remember(store, "b", "the harbour shop opens at nine", 2)
    found = await search(store, "When did we buy the kayak?", Scope.of_person("owner"))
    assert found[0].session_id == bought
    assert found[0].hits[0].reason == "all words"


async def test_a_past_form_searched_is_not_widened_to_its_base(store: Store) -> None:
    paid = await remember(store, "a", "they paid the invoice", 1)
    pay = await remember(store, "b", "pay the invoice soon", 2)
    found = await search(store, "paid invoice", Scope.of_person("owner"))
    reasons = {r.session_id: r.hits[0].reason for r in found}
    assert reasons[paid] != "some words"
    assert reasons[pay] == "some words"
