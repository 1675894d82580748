"""Turns with files through the agent and the real SDKs: what the model is sent, what is
stored, and that a session's earlier messages stay byte-identical between calls."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import pytest
import structlog

from agent.build import build_agent
from agent.compaction import SUMMARY_SYSTEM
from agent.media.items import KeptFile, Prepared
from agent.providers import Document, Image
from agent.turn import Turn
from memory.access.identities import ensure_person
from memory.media import count_media, media_for_message, media_path
from memory.search.ranking import search
from memory.search.scope import Scope
from tests.fakes.scripted_server import Received

BOTH = pytest.mark.parametrize("provider_kind", ["anthropic", "openai"])
SMALL_WINDOW = {
    "KIOKU_LLM__CONTEXT_WINDOW": "2000",
    "KIOKU_AGENT__COMPACTION__KEEP_FIRST": "2",
    "KIOKU_AGENT__COMPACTION__KEEP_LAST": "2",
}


def jpeg(number: int) -> bytes:
    return b"\xff\xd8\xff\xe0" + bytes([number]) * 64 + bytes(range(256))


def photo(number: int) -> Prepared:
    stand_in = f"[photo 8x8: p{number}.jpg]"
    keep = KeptFile("image", f"p{number}.jpg", "image/jpeg", jpeg(number))
    return Prepared(stand_in, blocks=(Image("image/jpeg", jpeg(number), stand_in),), keep=keep)


def lease() -> Prepared:
    stand_in = "[document lease.pdf, 1 page]"
    text = f"{stand_in}\nThe rent is 900 a month."
    return Prepared(stand_in, blocks=(Document("application/pdf", b"%PDF-1.4 lease", text),))


def with_media(turn: Turn, *media: Prepared) -> Turn:
    return replace(turn, media=media)


def anthropic_files(request: Received) -> list[tuple[int, str, bytes]]:
    """(message index, block type, decoded bytes) of every file block sent."""
    return [
        (index, block["type"], base64.b64decode(block["source"]["data"]))
        for index, message in enumerate(request.json["messages"])
        for block in message["content"]
        if block["type"] in ("image", "document")
    ]


def without_breakpoints(messages: list[dict[str, Any]]) -> list[str]:
    """Each message's JSON without `cache_control`, which moves to the latest turns by design."""
    out = []
    for message in messages:
        content = [{k: v for k, v in b.items() if k != "cache_control"} for b in message["content"]]
        out.append(json.dumps({**message, "content": content}, sort_keys=True))
    return out


def assert_prefix_kept(earlier: Received, later: Received) -> None:
    before = without_breakpoints(earlier.json["messages"])
    assert without_breakpoints(later.json["messages"])[: len(before)] == before


@BOTH
async def test_an_image_reaches_the_model_after_the_text_and_its_stand_in_is_stored(rig) -> None:
    session = await rig.dm()
    rig.say("A receipt.")
    await rig.agent.respond(with_media(rig.turn(session, "what is this?"), photo(1)))
    if rig.kind == "anthropic":
        content = rig.api.last.json["messages"][0]["content"]
        assert [block["type"] for block in content] == ["text", "image"]
        assert content[0]["text"].endswith("\n[photo 8x8: p1.jpg]\nwhat is this?")
        assert anthropic_files(rig.api.last) == [(0, "image", jpeg(1))]
    else:
        parts = rig.api.last.json["messages"][1]["content"]
        assert [part["type"] for part in parts] == ["text", "image_url"]
        assert parts[0]["text"].endswith("\n[photo 8x8: p1.jpg]\nwhat is this?")
        url = parts[1]["image_url"]["url"]
        assert base64.b64decode(url.removeprefix("data:image/jpeg;base64,")) == jpeg(1)
    stored = await rig.store.messages(session.id)
    assert [(m.role, m.content) for m in stored] == [
        ("user", "[photo 8x8: p1.jpg]\nwhat is this?"),
        ("assistant", "A receipt."),
    ]


@pytest.mark.parametrize("agent_env", [{"KIOKU_MEDIA__IMAGES_IN_CONTEXT": "3"}])
async def test_earlier_messages_stay_identical_until_the_fourth_image_demotes_the_first(
    rig,
) -> None:
    session = await rig.dm()
    rig.say("one")
    await rig.agent.respond(with_media(rig.turn(session, "first"), photo(1)))
    first = rig.api.last
    # a turn without files, with a tool round inside it
    rig.call_tool("session_search", {"query": "receipt"})
    rig.say("nothing earlier")
    await rig.agent.respond(rig.turn(session, "seen this before?"))
    tool_round, answer = rig.api.requests[-2:]
    assert_prefix_kept(first, tool_round)
    assert_prefix_kept(tool_round, answer)
    for number in (2, 3):
        rig.say(f"photo {number}")
        await rig.agent.respond(with_media(rig.turn(session, f"photo {number}"), photo(number)))
        assert_prefix_kept(answer, rig.api.last)
        answer = rig.api.last
    assert [f[2] for f in anthropic_files(answer)] == [jpeg(1), jpeg(2), jpeg(3)]

    rig.say("photo 4")
    await rig.agent.respond(with_media(rig.turn(session, "photo 4"), photo(4)))
    fourth = rig.api.last
    assert [f[2] for f in anthropic_files(fourth)] == [jpeg(2), jpeg(3), jpeg(4)]
    demoted = fourth.json["messages"][0]["content"]
    assert [block["type"] for block in demoted] == ["text", "text"]
    assert demoted[1]["text"] == "[photo 8x8: p1.jpg]"
    kept = without_breakpoints(answer.json["messages"])
    assert without_breakpoints(fourth.json["messages"])[1 : len(kept)] == kept[1:]
    rig.say("ok")
    await rig.agent.respond(rig.turn(session, "thanks"))
    assert_prefix_kept(fourth, rig.api.last)


async def test_a_pdf_goes_whole_until_the_next_file_then_as_its_text(rig) -> None:
    session = await rig.dm()
    rig.say("Rent is 900.")
    await rig.agent.respond(with_media(rig.turn(session, "how much rent?"), lease()))
    assert anthropic_files(rig.api.last) == [(0, "document", b"%PDF-1.4 lease")]
    rig.say("Yes, monthly.")
    await rig.agent.respond(rig.turn(session, "monthly?"))
    assert anthropic_files(rig.api.last) == [(0, "document", b"%PDF-1.4 lease")]
    rig.say("A receipt.")
    await rig.agent.respond(with_media(rig.turn(session, "and this?"), photo(1)))
    assert anthropic_files(rig.api.last) == [(4, "image", jpeg(1))]
    first_turn = rig.api.last.json["messages"][0]["content"]
    assert first_turn[1]["text"] == "[document lease.pdf, 1 page]\nThe rent is 900 a month."


@BOTH
async def test_undo_after_an_image_turn_takes_the_image_out_of_the_next_call(rig) -> None:
    session = await rig.dm()
    rig.say("hi")
    await rig.agent.respond(rig.turn(session, "hello"))
    rig.say("A cat.")
    await rig.agent.respond(with_media(rig.turn(session, "what is this?"), photo(1)))
    assert rig.agent.drop_last_exchange(session.id)
    rig.say("hi again")
    await rig.agent.respond(rig.turn(session, "never mind"))
    body = rig.api.last.body
    assert base64.b64encode(jpeg(1)) not in body
    assert "p1.jpg" not in rig.texts_of(rig.api.last)
    assert "what is this?" not in rig.texts_of(rig.api.last)
    assert "hello" in rig.texts_of(rig.api.last)


@pytest.mark.parametrize("agent_env", [SMALL_WINDOW])
async def test_compaction_summarises_an_image_by_its_stand_in_never_its_bytes(rig) -> None:
    session = await rig.dm()
    for index in range(4):
        rig.say(f"answer {index}", prompt_tokens=100)
        turn = rig.turn(session, f"question {index}")
        await rig.agent.respond(with_media(turn, photo(index)) if index == 2 else turn)
        await rig.agent.after_turn(session.id, "aiko")
    rig.say("answer 4", prompt_tokens=1500)
    rig.api.reply_text("They looked at a photo of a receipt.")
    await rig.agent.respond(rig.turn(session, "question 4"))
    await rig.agent.after_turn(session.id, "aiko")
    summary_request = rig.api.last
    assert summary_request.json["system"][0]["text"] == SUMMARY_SYSTEM
    transcript = summary_request.json["messages"][0]["content"][0]["text"]
    assert "user sent: [photo 8x8: p2.jpg]" in transcript
    assert anthropic_files(summary_request) == []
    assert base64.b64encode(jpeg(2)) not in summary_request.body

    rig.say("answer 5")
    await rig.agent.respond(rig.turn(session, "question 5"))
    assert "They looked at a photo of a receipt." in rig.texts_of(rig.api.last)
    assert anthropic_files(rig.api.last) == []


@BOTH
async def test_a_photo_in_a_group_reaches_the_model_and_is_stored_as_the_groups(rig) -> None:
    session = await rig.group(members=("aiko", "ben"))
    rig.say("Nice view.")
    await rig.agent.respond(
        with_media(rig.turn(session, "from the hike", speaker="ben", name="Ben"), photo(7))
    )
    sent = rig.texts_of(rig.api.last)
    assert "from Ben" in sent and "[photo 8x8: p7.jpg]\nfrom the hike" in sent
    body = rig.api.last.body
    assert base64.b64encode(jpeg(7)) in body
    stored = await rig.store.messages(session.id)
    assert (stored[0].speaker, stored[0].content) == ("ben", "[photo 8x8: p7.jpg]\nfrom the hike")
    kept = (await media_for_message(rig.store, [stored[0].id]))[stored[0].id]
    assert [item.owner for item in kept] == [session.conversation]
    assert media_path(rig.home, kept[0]).is_relative_to(rig.home / "groups")
    assert not (rig.home / "people" / "ben" / "media").exists()


async def test_the_files_are_kept_with_the_stored_turn(rig) -> None:
    session = await rig.dm()
    rig.say("A receipt.")
    await rig.agent.respond(with_media(rig.turn(session, "keep this"), photo(1)))
    turn = (await rig.store.messages(session.id))[0]
    kept = (await media_for_message(rig.store, [turn.id]))[turn.id]
    assert [(item.kind, item.mime, item.owner) for item in kept] == [
        ("image", "image/jpeg", "aiko")
    ]
    path = media_path(rig.home, kept[0])
    assert path.is_relative_to(rig.home / "people" / "aiko" / "media")
    assert path.read_bytes() == jpeg(1)


@pytest.mark.parametrize("agent_env", [{"KIOKU_MEDIA__KEEP": "false"}])
async def test_with_keep_off_no_file_is_kept(rig) -> None:
    session = await rig.dm()
    rig.say("A receipt.")
    await rig.agent.respond(with_media(rig.turn(session, "look"), photo(1)))
    assert (await count_media(rig.store)).files == 0
    assert anthropic_files(rig.api.last) == [(0, "image", jpeg(1))]


async def test_a_file_that_cannot_be_kept_is_logged_and_the_turn_answered(rig) -> None:
    session = await rig.dm()
    (rig.home / "people" / "aiko").mkdir(parents=True, exist_ok=True)
    (rig.home / "people" / "aiko" / "media").write_text("not a folder")
    rig.say("A receipt.")
    with structlog.testing.capture_logs() as logs:
        outcome = await rig.agent.respond(with_media(rig.turn(session, "look"), photo(1)))
    assert outcome.text == "A receipt."
    failed = [entry for entry in logs if entry["event"] == "media_keep_failed"]
    assert len(failed) == 1 and "not a folder" in failed[0]["error"]
    stored = await rig.store.messages(session.id)
    assert stored[0].content == "[photo 8x8: p1.jpg]\nlook"
    assert (await count_media(rig.store)).files == 0


@BOTH
async def test_a_voice_note_is_stored_as_a_transcript_the_person_can_search_for(rig) -> None:
    session = await rig.dm()
    await ensure_person(rig.store, "ben")
    note = Prepared(
        "[voice 0:21]",
        transcript="buy oat milk tomorrow",
        keep=KeptFile("voice", "voice.ogg", "audio/ogg", b"OggS voice"),
    )
    rig.say("Noted.")
    await rig.agent.respond(with_media(rig.turn(session, "buy oat milk tomorrow"), note))
    assert "[voice 0:21, transcribed]\nbuy oat milk tomorrow" in rig.texts_of(rig.api.last)
    stored = (await rig.store.messages(session.id))[0]
    assert stored.content == "[voice 0:21, transcribed]\nbuy oat milk tomorrow"
    assert [r.session_id for r in await search(rig.store, "oat milk", Scope.of_person("aiko"))] == [
        session.id
    ]
    assert [r.session_id for r in await search(rig.store, "oat milk", Scope.of_person("ben"))] == []
    kept = (await media_for_message(rig.store, [stored.id]))[stored.id]
    assert [(item.kind, item.mime) for item in kept] == [("voice", "audio/ogg")]


@BOTH
async def test_after_a_restart_the_session_shows_its_photo_as_the_stand_in(rig) -> None:
    session = await rig.dm()
    rig.say("A receipt.")
    await rig.agent.respond(with_media(rig.turn(session, "what is this?"), photo(1)))
    restarted = build_agent(rig.settings, rig.store, rig.agent.provider)
    rig.say("12.50")
    await restarted.respond(rig.turn(session, "how much?"))
    assert base64.b64encode(jpeg(1)) not in rig.api.last.body
    assert "[photo 8x8: p1.jpg]\nwhat is this?" in rig.texts_of(rig.api.last)
