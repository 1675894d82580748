"""Session ranking: each query word counts once, wherever in the session it was said."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.search.ranking import Scope, match_terms, query_words, search, spellings
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A history with unrelated sessions too, so that no query word is in most turns."""
    async with await Store.open(tmp_path / "state.db") as opened:
        for n in range(8):
            await remember(opened, f"filler-{n}", f"今日は晴れ {n}", "walked the dog", days=30 + n)
        yield opened


async def remember(store: Store, chat: str, *turns: str, days: int = 0) -> int:
    """A closed DM session of the owner holding `turns` (user, assistant, user...)."""
    session = await store.open_session(Conversation("telegram", chat, "dm", "owner"))
    for n, text in enumerate(turns):
        ts = T0 + timedelta(days=days, minutes=n)
        role = "user" if n % 2 == 0 else "assistant"
        await store.append(session.id, NewMessage(role, text, ts=ts))
    await store.close_session(session.id, "idle")
    return session.id


async def ranked(store: Store, query: str) -> list[int]:
    return [r.session_id for r in await search(store, query, Scope.of_person("owner"))]


async def test_a_session_saying_the_words_over_several_turns_beats_one_with_some_of_them(
    store: Store,
) -> None:
    spread = await remember(
        store,
        "sports-day",
        "娘の運動会のお知らせが来た",
        "10月11日の土曜日ですね",
        "持ち物はレジャーシートとお弁当",
    )
    await remember(
        store,
        "trip",
        "遠足の持ち物を確認したい",
        "持ち物は水筒と帽子です",
        "持ち物にお菓子も入れていい",
        days=1,
    )
    await remember(store, "football", "運動会の前にサッカー大会がある", days=2)
    assert (await ranked(store, "運動会の持ち物"))[0] == spread


async def test_a_long_cjk_word_weighs_as_one_word_not_as_its_bigrams(store: Store) -> None:
    await remember(store, "deduction", "医療費控除を申告したい")
    both = await remember(store, "receipts", "領収書を集めて控除を申告する", days=1)
    assert (await ranked(store, "医療費控除の領収書"))[0] == both


async def test_a_lone_kanji_weighs_less_than_a_whole_word(store: Store) -> None:
    await remember(store, "summer", "夏が来た。夏祭りと夏休みが楽しみ")
    trip = await remember(store, "trip", "旅行の予約をした", days=1)
    assert (await ranked(store, "夏 旅行"))[0] == trip


async def test_rarer_words_weigh_more(store: Store) -> None:
    for n in range(6):
        await remember(store, f"plans-{n}", f"plans for week {n}", days=n)
    rare = await remember(store, "sourdough", "sourdough starter", days=10)
    common = await remember(store, "plans", "plans plans plans", days=11)
    assert (await ranked(store, "sourdough plans"))[:1] == [rare]
    assert common in await ranked(store, "sourdough plans")


def kinds(query: str) -> set[tuple[str, str]]:
    return {(w.kind, w.text) for w in query_words(query)}


def test_a_verb_keeps_its_okurigana_and_a_lone_kanji_stays_a_fragment() -> None:
    assert kinds("京都で食べた抹茶") == {("cjk", "京都"), ("okurigana", "食べ"), ("cjk", "抹茶")}
    assert kinds("茶") == {("kanji", "茶")}


@pytest.mark.parametrize(
    ("query", "word"),
    [
        ("運動会の持ち物", "持ち物"),
        ("作り置きの献立", "作り置き"),
        ("取り扱い説明書", "取り扱い説明書"),
    ],
)
def test_kanji_joined_by_okurigana_are_one_word(query: str, word: str) -> None:
    assert ("cjk", word) in kinds(query)


def test_a_particle_after_a_kanji_is_not_taken_for_okurigana() -> None:
    assert kinds("お店はどこ") == {("kanji", "店")}
    assert kinds("京都の抹茶") == {("cjk", "京都"), ("cjk", "抹茶")}


async def test_a_kanji_before_a_particle_finds_the_kanji_alone(store: Store) -> None:
    shop = await remember(store, "shop", "宇治のお店、すごく良かった")
    assert await ranked(store, "お店はどこ") == [shop]


async def test_a_kana_written_alone_is_searched_as_itself(store: Store) -> None:
    letters = await remember(store, "kana", "I keep mixing up シ and ツ", "ツ looks down.")
    await remember(store, "shirt", "Tell me about the new Tシャツ", days=1)
    assert (await ranked(store, "How do I tell シ and ツ apart?"))[0] == letters


def test_kana_inside_a_word_or_sentence_stays_out_of_the_query() -> None:
    assert kinds("シャツの色") == {("cjk", "シャツ"), ("kanji", "色")}
    assert kinds("は and が") == {("kana", "は"), ("kana", "が")}
    assert ("kana", "の") not in kinds("Pythonの環境")


@pytest.mark.parametrize(
    ("british", "american"),
    [
        ("practise", "practice"),
        ("colour", "color"),
        ("organisation", "organization"),
        ("analysed", "analyzed"),
        ("licence", "license"),
        ("centre", "center"),
        ("catalogue", "catalog"),
    ],
)
def test_british_and_american_spellings_give_each_other(british: str, american: str) -> None:
    assert american in spellings(british)
    assert british in spellings(american)


@pytest.mark.parametrize("word", ["floor", "hour", "four", "tour", "sense", "water", "blog"])
def test_words_that_only_look_british_or_american_keep_one_spelling(word: str) -> None:
    assert spellings(word) == [word]


async def test_a_british_spelling_finds_the_american_one_and_back(store: Store) -> None:
    practice = await remember(store, "kana", "Practice katakana with loanwords")
    colour = await remember(store, "paint", "Which colour for the fence?", days=1)
    assert await ranked(store, "katakana practise") == [practice]
    assert await ranked(store, "fence color") == [colour]


def test_contraction_endings_are_not_words_but_a_negation_is() -> None:
    terms = ['"maya"', '"party"', '"sure"', '"go"', '"went"', '"gone"']
    assert match_terms("Maya's party, I'm sure we'll go") == terms
    assert '"t"' in match_terms("the bread wouldn't rise")
