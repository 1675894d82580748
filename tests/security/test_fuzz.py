"""Fuzzing every boundary with hypothesis: arbitrary input never crashes a parser with an
unexpected exception (only its own, documented refusal) and never sends a traceback to a
person."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from telegram import Update

from adapters.cli.framer import Framer, FrameTooLong
from adapters.cli.protocol import BadFrame, parse_frame
from adapters.slack.mrkdwn import from_slack
from adapters.telegram.inbound import to_changed, to_inbound
from config.settings import NotesSettings
from gateway.commands.parsing import parse
from gateway.identity import link_argument
from memory.importers.jsonl import _jsonl_row
from memory.notes.journal import NotesJournal
from memory.notes.origin import NoteOrigin
from memory.notes.person_notes import PersonNotes
from memory.search.ranking import Scope, search
from memory.skills.format import SkillError, check_file_path, check_name, parse_skill
from memory.store.database import Store
from tests.helpers.gateway_rig import GatewayRig, gateway_rig

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
TEXT = st.text(st.characters(codec="utf-8"), max_size=300)
NASTY = st.sampled_from(
    ["/", "/ ", "/link", "/link@", "/@", "/search \x00", "\u202e/help", "/\uff33EARCH x",
     "/a" * 80, "/forget \"", "/remember §",
     "NEAR(a b)", "a* OR \"", "^x", "-x", "col:x", "'\"", "\\"]
)  # fmt: skip
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)


@FUZZ
@given(st.one_of(TEXT, NASTY))
def test_command_parsing_and_link_arguments_take_any_text(text: str) -> None:
    command = parse(text)
    assert command is None or command.name
    argument = link_argument(text)
    assert argument is None or isinstance(argument, str)


@FUZZ
@given(st.binary(max_size=400) | JSON.map(lambda v: json.dumps(v).encode()))
def test_a_socket_frame_is_a_message_or_a_bad_frame(line: bytes) -> None:
    try:
        parse_frame(line)
    except BadFrame as refusal:
        assert str(refusal)


@FUZZ
@given(st.lists(st.binary(max_size=200), max_size=10), st.integers(8, 256))
def test_the_framer_never_loses_or_invents_bytes(chunks: list[bytes], limit: int) -> None:
    framer = Framer(limit)
    frames = [frame for chunk in chunks for frame in framer.feed(chunk)]
    whole = b"".join(chunks)
    if not any(isinstance(f, FrameTooLong) for f in frames):
        kept = b"".join(f + b"\n" for f in frames if isinstance(f, bytes)) + (framer.rest() or b"")
        assert kept == whole


MESSAGE = st.fixed_dictionaries(
    {"message_id": st.integers(1, 10**6), "date": st.integers(0, 2**31),
     "chat": st.fixed_dictionaries({"id": st.integers(-(10**12), 10**12),
                                    "type": st.sampled_from(["private", "group", "supergroup",
                                                             "channel"])})},
    optional={"text": TEXT | NASTY, "caption": TEXT,
              "from": st.fixed_dictionaries({"id": st.integers(1, 10**10),
                                             "is_bot": st.booleans(), "first_name": TEXT}),
              "entities": st.lists(st.fixed_dictionaries(
                  {"type": st.sampled_from(["mention", "bot_command", "text_mention", "bold"]),
                   "offset": st.integers(-5, 400), "length": st.integers(0, 400)}), max_size=3),
              "photo": st.just([{"file_id": "f", "file_unique_id": "u", "width": 1,
                                 "height": 1}]),
              "message_thread_id": st.integers(1, 100)},
)  # fmt: skip


@FUZZ
@given(MESSAGE, st.sampled_from(["message", "edited_message", "channel_post"]))
def test_any_telegram_update_becomes_an_inbound_a_change_or_nothing(
    message: dict[str, Any], kind: str
) -> None:
    update = Update.de_json({"update_id": 1, kind: message}, None)
    inbound = to_inbound(update, 42, "kioku_bot")
    changed = to_changed(update, 42, "kioku_bot")
    assert inbound is None or inbound.platform == "telegram"
    assert changed is None or (changed.platform == "telegram" and kind == "edited_message")


@FUZZ
@given(TEXT | NASTY)
def test_skill_names_and_paths_are_valid_or_refused(text: str) -> None:
    for check in (
        check_name,
        lambda t: check_file_path(t, True),
        lambda t: parse_skill(t, "x", 5000),
    ):
        try:
            check(text)
        except SkillError as refusal:
            assert str(refusal)


@FUZZ
@given(TEXT | JSON.map(json.dumps))
def test_an_import_line_is_a_row_or_a_value_error(line: str) -> None:
    try:
        _jsonl_row(line)
    except ValueError as refusal:
        assert str(refusal)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "fuzz.db") as opened:
        yield opened


@FUZZ
@given(TEXT | NASTY)
async def test_any_search_query_returns_results_or_nothing(store: Store, query: str) -> None:
    assert isinstance(await search(store, query, Scope.of_person("aiko")), list)


@FUZZ
@given(JSON)
async def test_any_notes_request_is_applied_or_refused(
    tmp_path: Path, store: Store, request_: Any
) -> None:
    notes = PersonNotes(tmp_path, "aiko", NotesSettings(), NotesJournal(store))
    if not isinstance(request_, dict):
        request_ = {"operations": [request_]}
    result = await notes.apply(request_, origin=NoteOrigin("cli"))
    assert result.message


@pytest.fixture
async def rig(home: Path) -> AsyncIterator[GatewayRig]:
    async with gateway_rig(home, model=False) as rig:
        await rig.person("aiko", "telegram:1")
        yield rig


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.one_of(NASTY, TEXT.map(lambda t: "/" + t), TEXT))
async def test_no_message_gets_a_traceback_back(rig: GatewayRig, text: str) -> None:
    rig.count = getattr(rig, "count", 0) + 1
    await rig.gateway.handle(rig.dm("telegram:1", text, f"m{rig.count}"))
    while rig.telegram.pending():
        reply = await rig.telegram.next_text()
        assert "Traceback" not in reply and "Error:" not in reply and reply.strip()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=40),
            st.sampled_from(["<@UKIOKU>", "<@U123|ann>", "<#C1|general>", "<!here>", "&amp;"]),
            st.builds(lambda t: f"<{t}>", st.text(max_size=30)),
        ),
        max_size=12,
    )
)
def test_any_slack_text_reads_as_plain_text_without_kiokus_own_mention(parts: list[str]) -> None:
    text = "".join(parts)
    plain = from_slack(text, "UKIOKU")
    assert isinstance(plain, str)
    assert "<@UKIOKU>" not in plain
