"""Tidy with the fake model: it runs in the background once a file passes 80 % of its cap,
no reply waits on it, it is bounded like reflection, and its change is one write that
never overwrites a change made meanwhile."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
import pytest_asyncio

from agent.tidy import TidyOutcome, tidy_due, tidy_file
from config.settings import ReflectionSettings
from memory.notes.format import Target, char_count, parse_entries
from memory.notes.journal import NotesJournal
from memory.notes.origin import NoteOrigin
from memory.notes.person_notes import NotesResult, PersonNotes
from memory.notes.tidy_marks import mark_path, read_mark
from memory.store.records import Conversation
from tests.helpers.gateway_rig import GatewayRig, gateway_rig

ENTRIES = (
    "Lives in Tokyo, in a flat near Shinjuku station",
    "Likes green tea in the morning",
    "Drinks green tea every morning before work",
    "Works as a nurse at a hospital in Tokyo",
)
MERGE = {
    "operations": [
        {
            "action": "replace",
            "target": "memory",
            "old_text": "Likes green tea",
            "content": "Green tea every morning before work",
        },
        {"action": "remove", "target": "memory", "old_text": "Drinks green tea"},
        {
            "action": "replace",
            "target": "memory",
            "old_text": "Lives in Tokyo",
            "content": "Lives in Osaka since 2026",
        },
    ]
}
TIDIED = (
    "Lives in Osaka since 2026",
    "Green tea every morning before work",
    "Works as a nurse at a hospital in Tokyo",
)
TIDY_WORD = "kioku tidy"


class Recorded(PersonNotes):
    """The person's notes, noting each rewrite with its origin."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.rewrites: list[tuple[str, NoteOrigin]] = []

    async def rewrite(
        self,
        target: Target,
        text: str,
        expected: Sequence[str] | None = None,
        *,
        origin: NoteOrigin,
    ) -> NotesResult:
        self.rewrites.append((target, origin))
        return await super().rewrite(target, text, expected, origin=origin)


pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[GatewayRig]:
    """One gateway for the module (a fake model, a store, aiko with a 200-char MEMORY.md)."""
    home = tmp_path_factory.mktemp("tidy") / "kioku-home"
    with pytest.MonkeyPatch.context() as env:
        for name in list(os.environ):
            if name.startswith(("KIOKU_", "ANTHROPIC_", "OPENAI_")):
                env.delenv(name)
        env.setenv("KIOKU_HOME", str(home))
        env.setenv("KIOKU_WEB__ENABLED", "false")
        env.setenv("KIOKU_MEMORY__NOTES__MEMORY_LIMIT", "200")
        async with gateway_rig(home) as rig:
            await rig.person("aiko", "telegram:100")
            yield rig


@pytest_asyncio.fixture(loop_scope="module")
async def rig(shared: GatewayRig) -> GatewayRig:
    """The shared gateway with aiko's MEMORY.md at 167/200 chars, never tidied, and a fresh
    script and request log."""
    api = shared.api
    assert api is not None
    await shared.agent.idle()
    api.requests.clear()
    api.gates.clear()
    api.arrived.clear()
    api.clear_script()
    shared.settings.agent.reflection = ReflectionSettings()
    folder = shared.home / "people" / "aiko"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MEMORY.md").write_text("\n§\n".join(ENTRIES) + "\n", encoding="utf-8")
    mark_path(folder, "memory").unlink(missing_ok=True)
    assert char_count(ENTRIES) >= 160  # 80 % of 200
    return shared


ALL_TIME = (datetime(2000, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC))


def memory_entries(rig: GatewayRig) -> tuple[str, ...]:
    text = (rig.home / "people" / "aiko" / "MEMORY.md").read_text(encoding="utf-8")
    return tuple(parse_entries(text))


def notes(rig: GatewayRig) -> PersonNotes:
    return rig.agent.services.notes("aiko")


def tidy_requests(rig: GatewayRig) -> list[Any]:
    assert rig.api is not None
    return [r for r in rig.api.requests if TIDY_WORD in r.body.decode()]


async def tidy(rig: GatewayRig, person_notes: PersonNotes, **options: Any) -> TidyOutcome:
    provider, settings = rig.agent.provider, rig.settings
    return await tidy_file(provider, rig.store, person_notes, "memory", settings, **options)


async def test_a_file_past_80_percent_is_tidied_after_its_session_closes_while_replies_go_on(
    rig: GatewayRig,
) -> None:
    assert rig.api is not None
    assert await rig.ask(rig.dm("telegram:100", "We moved to Osaka last month", "m1"))
    gate = rig.api.gate(TIDY_WORD)
    assert await rig.ask(rig.dm("telegram:100", "/new", "m2")) == "New session started."
    await asyncio.wait_for(rig.api.arrived[TIDY_WORD].wait(), 30)

    answer = await rig.ask(rig.dm("telegram:100", "Are you there?", "m3"))
    assert answer == "echo: Are you there?"  # answered while the tidy's call is held
    assert memory_entries(rig) == ENTRIES

    rig.api.reply_tool_use("memory", MERGE)
    rig.api.reply_text("done")
    gate.set()
    await rig.agent.idle()
    assert memory_entries(rig) == TIDIED
    brief = tidy_requests(rig)[0].body.decode()
    assert "We moved to Osaka last month" in brief and "Lives in Tokyo" in brief
    spent = await rig.store.usage_totals("kind", ALL_TIME[0], ALL_TIME[1], person="aiko")
    assert {t.key: t.calls for t in spent}.get("tidy") == len(tidy_requests(rig))


async def test_a_tidys_calls_change_a_draft_saved_in_one_write_with_origin_tidy(
    rig: GatewayRig,
) -> None:
    assert rig.api is not None
    merge, remove, move = MERGE["operations"]
    rig.api.reply_tool_use("memory", remove, tool_id="t1")
    rig.api.reply_tool_use("memory", {"operations": [merge, move]}, tool_id="t2")
    rig.api.reply_text("done")
    recorded = Recorded(rig.home, "aiko", rig.settings.memory.notes, NotesJournal(rig.store))
    outcome = await tidy(rig, recorded, session_id=7)
    assert (outcome.status, outcome.after) == ("saved", TIDIED)
    assert recorded.rewrites == [("memory", NoteOrigin("tidy", 7))]
    assert memory_entries(rig) == TIDIED
    assert "-Drinks green tea every morning before work" in outcome.diff()


async def test_a_tidy_is_one_journaled_change_that_one_revert_undoes(rig: GatewayRig) -> None:
    assert rig.api is not None
    rig.api.reply_tool_use("memory", MERGE)
    rig.api.reply_text("done")
    person_notes = notes(rig)
    session = await rig.store.open_session(Conversation("telegram", "100", "dm", "aiko"))
    await tidy(rig, person_notes, session_id=session.id)
    [tidied, *_] = await person_notes.journal.events("aiko", "memory", 10)
    assert (tidied.source, tidied.session_id) == ("tidy", session.id)
    assert len(tidied.changes) == 3  # two replaced, one removed, in one event
    reverted = await person_notes.revert(tidied.id, origin=NoteOrigin("revert"))
    assert reverted.ok and reverted.changed
    text = (rig.home / "people" / "aiko" / "MEMORY.md").read_text(encoding="utf-8")
    assert text == "\n§\n".join(ENTRIES) + "\n"


async def test_a_tidy_stops_after_the_reflection_rounds_and_keeps_its_draft(
    rig: GatewayRig,
) -> None:
    assert rig.api is not None
    rig.settings.agent.reflection.max_rounds = 2
    for index, piece in enumerate(("Likes green", "Drinks green", "Works as")):
        remove = {"action": "remove", "target": "memory", "old_text": piece}
        rig.api.reply_tool_use("memory", remove, tool_id=f"t{index}")
    outcome = await tidy(rig, notes(rig))
    assert len(tidy_requests(rig)) == 2 and rig.api.pending == 1
    assert outcome.after == (ENTRIES[0], ENTRIES[3]) == memory_entries(rig)


async def test_a_tidy_past_its_time_limit_writes_nothing(rig: GatewayRig) -> None:
    assert rig.api is not None
    rig.settings.agent.reflection.timeout = 0.2
    rig.api.hang()
    with pytest.raises(TimeoutError):
        await tidy(rig, notes(rig))
    assert memory_entries(rig) == ENTRIES


async def test_a_file_changed_during_the_tidy_keeps_that_change(rig: GatewayRig) -> None:
    assert rig.api is not None
    gate = rig.api.gate(TIDY_WORD)
    person_notes = notes(rig)
    running = asyncio.create_task(tidy(rig, person_notes))
    await asyncio.wait_for(rig.api.arrived[TIDY_WORD].wait(), 30)
    added = await person_notes.add("memory", "Has a cat named Mochi", origin=NoteOrigin("person"))
    assert added.changed
    rig.api.reply_tool_use("memory", MERGE)
    rig.api.reply_text("done")
    gate.set()
    outcome = await running
    assert outcome.status == "conflict" and "changed on disk" in outcome.message
    assert memory_entries(rig) == (*ENTRIES, "Has a cat named Mochi")
    assert read_mark(person_notes.directory, "memory") is None  # so it is tried again


async def test_a_full_file_the_model_left_as_it_was_is_not_sent_again(rig: GatewayRig) -> None:
    assert rig.api is not None
    rig.api.reply_text("done")
    person_notes = notes(rig)
    first = await tidy_due(rig.agent.provider, rig.store, person_notes, rig.settings, None)
    assert [o.status for o in first] == ["unchanged"]
    again = await tidy_due(rig.agent.provider, rig.store, person_notes, rig.settings, None)
    assert again == [] and len(tidy_requests(rig)) == 1


async def test_a_file_below_80_percent_is_not_tidied(rig: GatewayRig) -> None:
    person_notes = notes(rig)
    await person_notes.remove("memory", "Drinks green", origin=NoteOrigin("cli"))
    outcomes = await tidy_due(rig.agent.provider, rig.store, person_notes, rig.settings, None)
    assert outcomes == [] and tidy_requests(rig) == []


async def test_a_background_review_is_followed_by_a_tidy_of_a_full_file(rig: GatewayRig) -> None:
    assert rig.api is not None
    rig.settings.agent.reflection = ReflectionSettings(every_user_turns=1)
    rig.api.gate(TIDY_WORD).set()  # open: only to know when the tidy's call came
    assert await rig.ask(rig.dm("telegram:100", "Remember that I moved", "r1"))
    await asyncio.wait_for(rig.api.arrived[TIDY_WORD].wait(), 30)
    await rig.agent.idle()  # the review was echoed (no change), so is the tidy
    assert len(tidy_requests(rig)) == 1
    assert memory_entries(rig) == ENTRIES
    assert read_mark(rig.home / "people" / "aiko", "memory") is not None
