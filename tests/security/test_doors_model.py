"""Door: what model servers send back, through the real `anthropic` and `openai` SDKs.

Every corpus item reaches the agent from the fake servers as a whole response body, as
one event of an otherwise good stream, and as a tool call's arguments; so do the shapes
a careless local server sends (no `choices`, numbers for names, a stream cut mid-event).
A bad response costs the person one short apology and loses nothing stored; bad
arguments become a tool error the model reads; the next message is answered as usual;
nothing is logged as an unhandled exception.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.build import build_agent
from agent.loop import MAX_CALLS_PER_REPLY, NOT_RUN
from agent.providers import Provider
from agent.providers.body import MAX_LINE_BYTES
from agent.providers.fields import MAX_ARGUMENT_CHARS
from agent.providers.openai_compat import OpenAICompatProvider
from agent.tools.context import ToolContext
from agent.tools.registry import Tool
from agent.turn import TurnOutcome
from inputs.limits import MAX_JSON_DEPTH
from memory.store.database import Store
from memory.store.records import NewMessage
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.scripted_server import Failure, Reply
from tests.helpers.agent_rig import Rig
from tests.helpers.doors import FAST, anthropic_provider, module_settings, no_unhandled
from tests.helpers.hostile import DEEP, ITEMS, text_items
from tests.helpers.model_streams import BROKEN, anthropic_text, as_event, deep_event, openai_text

pytestmark = pytest.mark.asyncio(loop_scope="module")

KINDS = ("anthropic", "openai")
APOLOGY = "The model gave a reply kioku could not read; please try again."
GOOD = "Here is your list."
NESTING = {
    "type": "object",
    "properties": {"x": {"$ref": "#/$defs/n"}},
    "$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}},
}
"""The `nest` tool's schema is recursive: jsonschema goes one call deeper per level of `x`."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def rigs(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Rig]]:
    """One fake server, agent and store per provider for the whole module."""
    home = tmp_path_factory.mktemp("doors-model") / "kioku-home"
    settings = module_settings(home)
    store = await Store.open(home / "state.db")
    async with FakeAnthropic() as anthropic_api, FakeOpenAI() as openai_api:
        local = OpenAICompatProvider(
            model="llama-test",
            base_url=openai_api.base_url,
            retry=FAST,
            timeout=10.0,
            context_window=settings.llm.known_window,
        )
        providers: dict[str, tuple[Provider, FakeAnthropic | FakeOpenAI]] = {
            "anthropic": (anthropic_provider(anthropic_api, settings), anthropic_api),
            "openai": (local, openai_api),
        }
        rigs = {
            kind: Rig(kind, api, build_agent(settings, store, provider), store, settings, home)
            for kind, (provider, api) in providers.items()
        }
        for rig in rigs.values():
            rig.agent.registry.register(Tool("nest", "Takes nested lists.", NESTING, _nest))
        try:
            yield rigs
        finally:
            for rig in rigs.values():
                await rig.agent.aclose()
            await store.close()


async def _nest(arguments: dict[str, Any], ctx: ToolContext) -> str:
    return "nested fine"


# -- what the person sees, what is stored, what is logged ---------------------------------


async def ask(rig: Rig, chat: str, text: str) -> TurnOutcome:
    session = await rig.dm(chat=chat)
    return await rig.agent.respond(rig.turn(session, text))


async def stored(rig: Rig) -> list[tuple[Any, ...]]:
    rows = await rig.store.read(
        lambda db: db.execute(
            "SELECT id, session_id, role, content, tool_name, tool_result FROM messages ORDER BY id"
        ).fetchall()
    )
    return [tuple(row) for row in rows]


async def apology_then_answer(rig: Rig, chat: str, caplog: pytest.LogCaptureFixture) -> TurnOutcome:
    """The scripted bad response is met with the apology; the next message is answered;
    what was stored before is untouched and the person's message is kept."""
    before, first = await stored(rig), "what is on my list?"
    with no_unhandled(caplog):
        outcome = await ask(rig, chat, first)
    assert outcome.text == APOLOGY, outcome
    assert outcome.error
    after = await stored(rig)
    assert after[: len(before)] == before
    assert [row[2:4] for row in after[len(before) :]] == [("user", first)]
    rig.say(GOOD)
    assert (await ask(rig, chat, "and tomorrow?")).text == GOOD
    return outcome


# -- whole bodies and single events from the corpus ---------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("placement", ["body", "event"])
@pytest.mark.parametrize("name", list(ITEMS))
async def test_a_corpus_item_as_the_response_or_one_event_costs_one_apology(
    rigs: dict[str, Rig], kind: str, placement: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """`body`: the item is the whole response; `event`: one event after a good start."""
    rig = rigs[kind]
    if placement == "body":
        rig.api.malformed(ITEMS[name], content_type="text/event-stream")
    else:
        rig.api.enqueue(Reply({}, as_event(kind, ITEMS[name])))
    await apology_then_answer(rig, f"{placement}-{kind}-{name}", caplog)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("status", [400, 503])
@pytest.mark.parametrize("name", ["deep-objects", "ten-mb-string"])
async def test_a_deep_or_huge_error_body_costs_one_apology(
    rigs: dict[str, Rig], kind: str, status: int, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    rig = rigs[kind]
    rig.api.enqueue(Failure(status, ITEMS[name]))
    outcome = await apology_then_answer(rig, f"error-{kind}-{status}-{name}", caplog)
    assert "kioku reads" in (outcome.error or "")


@pytest.mark.parametrize("kind", KINDS)
async def test_a_long_pretty_printed_error_body_is_still_read(
    rigs: dict[str, Rig], kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An error body is checked whole: a hundred indented objects nest two levels, not a
    hundred, so the server's own message still reaches the log."""
    rig = rigs[kind]
    error = {"message": "busy, try later", "type": "overloaded", "code": None}
    body = json.dumps({"error": error, "seen": [{"n": n} for n in range(100)]}, indent=2)
    rig.api.enqueue(Failure(503, body.encode()))
    with no_unhandled(caplog):
        outcome = await ask(rig, f"pretty-{kind}", "are you there?")
    assert "busy, try later" in (outcome.error or ""), outcome


# -- shapes a careless server sends -------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "shape"), [(kind, shape) for kind, shapes in BROKEN.items() for shape in shapes]
)
async def test_a_malformed_reply_costs_one_apology(
    rigs: dict[str, Rig], kind: str, shape: str, caplog: pytest.LogCaptureFixture
) -> None:
    rig = rigs[kind]
    rig.api.enqueue(Reply({}, BROKEN[kind][shape]))
    await apology_then_answer(rig, f"shape-{kind}-{shape}", caplog)


@pytest.mark.parametrize("kind", KINDS)
async def test_text_that_is_not_text_never_reaches_the_person(
    rigs: dict[str, Rig], kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    rig = rigs[kind]
    rig.api.enqueue(Reply({}, anthropic_text(12345) if kind == "anthropic" else openai_text(12345)))
    seen: list[str] = []

    async def relay(delta: str) -> None:
        seen.append(delta)

    session = await rig.dm(chat=f"relay-{kind}")
    with no_unhandled(caplog):
        outcome = await rig.agent.respond(rig.turn(session, "count for me"), relay)
    assert outcome.text == APOLOGY
    assert seen == []


@pytest.mark.parametrize("kind", KINDS)
async def test_an_unknown_stop_reason_still_delivers_the_answer(
    rigs: dict[str, Rig], kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Servers and new API versions add stop reasons of their own; only a reason that is
    not a string is malformed."""
    rig = rigs[kind]
    events = (
        anthropic_text("All done.", stop="pause_for_thought")
        if kind == "anthropic"
        else openai_text("All done.", finish="eos_token")
    )
    rig.api.enqueue(Reply({}, events))
    with no_unhandled(caplog):
        assert (await ask(rig, f"stop-{kind}", "are you done?")).text == "All done."


@pytest.mark.parametrize("kind", KINDS)
async def test_a_lone_surrogate_in_the_text_is_replaced_and_the_reply_stored(
    rigs: dict[str, Rig], kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """`"\\ud800"` decodes to a string SQLite and the platforms refuse: it becomes U+FFFD."""
    rig = rigs[kind]
    text = "broken \ud800 pair"
    rig.api.enqueue(Reply({}, anthropic_text(text) if kind == "anthropic" else openai_text(text)))
    chat = f"surrogate-{kind}"
    with no_unhandled(caplog):
        outcome = await ask(rig, chat, "say something odd")
    assert outcome.text.startswith("broken \ufffd") and outcome.text.endswith(" pair")
    session = await rig.dm(chat=chat)
    assert (await rig.store.messages(session.id))[-1].content == outcome.text


@pytest.mark.parametrize("kind", KINDS)
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(event=deep_event(), cut=st.integers(1, 64))
async def test_an_event_nested_across_data_lines_is_refused_before_the_sdk_parses_it(
    rigs: dict[str, Rig], kind: str, event: bytes, cut: int, caplog: pytest.LogCaptureFixture
) -> None:
    rig = rigs[kind]
    body = (b"event: content_block_delta\n" if kind == "anthropic" else b"") + event
    chunks = [body[i : i + cut] for i in range(0, len(body), cut)]
    rig.api.enqueue(Reply({}, [as_event(kind, b"1")[0], *chunks]))
    with no_unhandled(caplog):
        assert (await ask(rig, f"lines-{kind}", "hello?")).text == APOLOGY


# -- tool-call arguments ------------------------------------------------------------------


def tool_result(rig: Rig) -> tuple[str, bool]:
    """The result of the one tool call, as the model was sent it on the next request."""
    messages = rig.api.last.json["messages"]
    if rig.kind == "anthropic":
        block = next(b for b in messages[-1]["content"] if b["type"] == "tool_result")
        return block["content"], bool(block.get("is_error"))
    tool = next(m for m in reversed(messages) if m["role"] == "tool")
    return tool["content"].removeprefix("Error: "), tool["content"].startswith("Error: ")


async def arguments_are_refused(
    rig: Rig, chat: str, raw: str, caplog: pytest.LogCaptureFixture, tool: str = "memory"
) -> str:
    """The model calls `tool` with `raw` arguments: it reads a tool error, answers, and
    nothing is written; returns the error it read."""
    notes = sorted((p, p.read_bytes()) for p in (rig.home / "people").rglob("*") if p.is_file())
    rig.call_tool(tool, raw)
    rig.say("Sorry, let me fix that.")
    with no_unhandled(caplog):
        outcome = await ask(rig, chat, "remember this for me")
    assert outcome.text == "Sorry, let me fix that.", outcome
    text, is_error = tool_result(rig)
    assert is_error, text
    assert len(text) < 2_000, text[:300]
    after = sorted((p, p.read_bytes()) for p in (rig.home / "people").rglob("*") if p.is_file())
    assert after == notes
    rig.say(GOOD)
    assert (await ask(rig, chat, "and tomorrow?")).text == GOOD
    return text


PARSE_AS_AN_OBJECT = {"invalid-utf8", "empty", "whitespace-only", "duplicate-keys", "wrong-types"}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("name", "raw"), text_items(), ids=[name for name, _ in text_items()])
async def test_a_corpus_item_as_tool_arguments_is_a_tool_error_the_model_reads(
    rigs: dict[str, Rig], kind: str, name: str, raw: str, caplog: pytest.LogCaptureFixture
) -> None:
    text = await arguments_are_refused(rigs[kind], f"args-{kind}-{name}", raw, caplog)
    if name not in PARSE_AS_AN_OBJECT:  # those reach the tool, which refuses them itself
        assert text.startswith("Arguments for memory must be"), text


@pytest.mark.parametrize("kind", KINDS)
async def test_a_100000_deep_argument_is_refused_before_jsonschema_sees_it(
    rigs: dict[str, Rig], kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """`nest`'s schema is recursive: jsonschema would follow 100,000 levels into a
    RecursionError; the depth limit before validation stops it first."""
    raw = '{"x": ' + "[" * DEEP + "]" * DEEP + "}"
    text = await arguments_are_refused(rigs[kind], f"deep-{kind}", raw, caplog, tool="nest")
    assert text.startswith(
        f"Arguments for nest must be nested at most {MAX_JSON_DEPTH} levels deep"
    )


@pytest.mark.parametrize("kind", KINDS)
async def test_arguments_at_the_depth_limit_are_validated_and_run(
    rigs: dict[str, Rig], kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    rig = rigs[kind]
    inner = MAX_JSON_DEPTH - 1
    rig.call_tool("nest", '{"x": ' + "[" * inner + "]" * inner + "}")
    rig.say("Nested.")
    with no_unhandled(caplog):
        assert (await ask(rig, f"limit-{kind}", "nest it")).text == "Nested."
    assert tool_result(rig) == ("nested fine", False)


@pytest.mark.parametrize("kind", KINDS)
async def test_arguments_past_the_size_limit_are_a_tool_error(
    rigs: dict[str, Rig], kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    raw = json.dumps({"action": "add", "target": "user", "content": "x" * MAX_ARGUMENT_CHARS})
    assert len(raw) < MAX_LINE_BYTES  # the fake sends it in two events: it reaches the check
    text = await arguments_are_refused(rigs[kind], f"size-{kind}", raw, caplog)
    assert text.startswith(f"Arguments for memory must be at most {MAX_ARGUMENT_CHARS:,}")


@pytest.mark.parametrize("kind", KINDS)
async def test_tool_calls_past_the_per_reply_limit_are_answered_not_run(
    rigs: dict[str, Rig], kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    rig = rigs[kind]
    count = MAX_CALLS_PER_REPLY + 6
    if isinstance(rig.api, FakeAnthropic):
        blocks = [("tool_use", {"id": f"t{i}", "name": "nest", "input": {}}) for i in range(count)]
        rig.api.reply(blocks, stop_reason="tool_use")
    else:
        rig.api.reply_tool_calls(*[("nest", {})] * count)
    rig.say("Done.")
    with no_unhandled(caplog):
        outcome = await ask(rig, f"many-{kind}", "nest a lot")
    assert (outcome.text, outcome.tool_calls) == ("Done.", count)
    body = json.dumps(rig.api.last.json)
    assert body.count("nested fine") == MAX_CALLS_PER_REPLY
    assert body.count(NOT_RUN) == 6
    session = await rig.dm(chat=f"many-{kind}")
    tool_rows = [m for m in await rig.store.messages(session.id) if m.role == "tool"]
    assert len(tool_rows) == MAX_CALLS_PER_REPLY


async def test_every_corpus_item_is_covered() -> None:
    """The corpus is shared: a new item reaches this door's tests without an edit here."""
    assert {name for name, _ in text_items()} == set(ITEMS)


# -- what the agent reads back: the closing summary, stored tool rows ---------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("summary", "title"),
    [
        ('{"title": ' + "[" * DEEP + "]" * DEEP + "}", "plan the garden trip"),
        ('{"title": "odd \\ud800 title", "summary": "s"}', "odd \ufffd title"),
    ],
    ids=["deep", "lone-surrogate"],
)
async def test_a_hostile_closing_summary_still_closes_the_session(
    rigs: dict[str, Rig], kind: str, summary: str, title: str, caplog: pytest.LogCaptureFixture
) -> None:
    rig = rigs[kind]
    chat = f"summary-{kind}-{len(summary)}"
    rig.say("Sure.")
    await ask(rig, chat, "plan the garden trip")
    session = await rig.dm(chat=chat)
    rig.say("nothing to save")  # the closing review
    rig.say(summary)
    with no_unhandled(caplog):
        await rig.agent.close_session(session.id, "test")
    rows = await rig.store.read(
        lambda db: db.execute("SELECT title FROM sessions WHERE id = ?", (session.id,)).fetchall()
    )
    assert [row["title"] for row in rows] == [title]


@pytest.mark.parametrize("kind", KINDS)
async def test_unreadable_stored_tool_arguments_are_sent_back_empty(
    rigs: dict[str, Rig], kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A tool row edited or imported into 100,000 levels of nesting: the rebuilt
    conversation after a restart shows the call with no arguments, beside its result."""
    rig = rigs[kind]
    session = await rig.dm(chat=f"stored-{kind}")
    await rig.store.append(session.id, NewMessage("user", "earlier", speaker="aiko"))
    deep = NewMessage("tool", "", tool_name="memory", tool_arguments="[" * DEEP, tool_result="ok")
    await rig.store.append(session.id, deep)
    restarted = build_agent(rig.settings, rig.store, rig.agent.provider)
    rig.say(GOOD)
    with no_unhandled(caplog):
        outcome = await restarted.respond(rig.turn(session, "and now?"))
    assert outcome.text == GOOD
    sent = json.dumps(rig.api.last.json)
    assert '"input": {}' in sent or '"arguments": "{}"' in sent
