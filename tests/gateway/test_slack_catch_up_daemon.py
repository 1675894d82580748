"""Nothing said to kioku on Slack is lost while it is away: `kioku serve` on the fake Slack,
stopped (or killed) and started again over the same KIOKU_HOME. What Alice sent
meanwhile is read back from Slack's history and answered once, each message stored with
the time Slack gave it; an edit reaches what the model reads, or the stored turn; a
deletion erases the turn."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from adapters.slack.inbound import sent_at
from tests.fakes.slack import FakeSlack
from tests.helpers.daemon import WAIT, killed_at_end
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.slack_daemons import SlackKioku, sent
from tests.helpers.slack_rig import ALICE

DAY = 86_400
BOB = "U0BOB"
Kioku = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
async def kioku_on_slack(
    home: Path, api: GatedAnthropic, tmp_path: Path
) -> AsyncIterator[SlackKioku]:
    async with FakeSlack(users={ALICE: "Alice", BOB: "Bob"}) as fake, killed_at_end() as daemons:
        yield SlackKioku(home, api, tmp_path, fake, daemons)


async def away(slack: SlackKioku) -> None:
    """Kioku talked with Alice in her DM three days ago (so it reads the DM again on
    start: what came after that), and is stopped."""
    daemon = await slack.start()
    await slack.fake.push(slack.fake.dm(ALICE, "hello", ts=sent(3 * DAY)))
    await slack.answer_saying("hello")
    await slack.stop(daemon)


def model_read(api: GatedAnthropic, text: str) -> bool:
    """Whether any request to the model held `text`."""
    return any(text in json.dumps(request.json) for request in api.requests)


async def test_three_messages_sent_while_away_get_one_answer_each_stored_at_its_time(
    kioku_on_slack: SlackKioku,
) -> None:
    slack = kioku_on_slack
    await away(slack)
    said = {
        "tomatoes": sent(300),
        "basil": sent(200),
        "mozzarella": sent(100),
    }
    for text, ts in said.items():
        slack.fake.history.keep(slack.fake.dm(ALICE, f"buy {text}", ts=ts))
    daemon = await slack.start()
    await slack.answer_saying(*said)
    await slack.answered("after")  # anything queued before it has been answered
    await slack.stop(daemon)
    assert len(slack.posts_saying("tomatoes")) == 1
    turns = slack.user_turns()
    for text, ts in said.items():
        [turn] = [row for row in turns if row["platform_message_id"] == ts]
        assert turn["content"] == f"buy {text}"
        assert turn["ts"] == pytest.approx(sent_at(ts).timestamp(), abs=1e-3)


async def test_a_kill_during_catch_up_still_gives_exactly_one_answer(
    kioku_on_slack: SlackKioku,
) -> None:
    slack = kioku_on_slack
    await away(slack)
    for text in ("one", "two", "three"):
        slack.fake.history.keep(slack.fake.dm(ALICE, f"number {text}"))
    # The answer's first step (the :eyes: reaction) is made to wait a minute: the three
    # are taken in, not yet stored as turns, when kioku is killed.
    reactions = len(slack.fake.made("reactions.add"))
    slack.fake.retry_after = 60
    slack.fake.ratelimit("reactions.add")
    daemon = await slack.start()
    await slack.fake.wait_for(lambda: len(slack.fake.made("reactions.add")) > reactions, WAIT)
    await slack.kill(daemon)
    slack.fake.retry_after = 1
    daemon = await slack.start()
    await slack.answer_saying("one", "two", "three")
    await slack.answered("after")
    await slack.stop(daemon)
    assert len(slack.posts_saying("number two")) == 1
    stored = [row["content"] for row in slack.user_turns()]
    assert [stored.count(f"number {text}") for text in ("one", "two", "three")] == [1, 1, 1]


async def test_a_kill_while_the_model_answers_what_was_missed_still_gives_exactly_one_answer(
    kioku_on_slack: SlackKioku, api: GatedAnthropic
) -> None:
    slack = kioku_on_slack
    await away(slack)
    for text in ("red", "green", "blue"):
        slack.fake.history.keep(slack.fake.dm(ALICE, f"paint it {text}"))
    held = api.gate("paint it blue")  # the three are stored as turns, the answer not out
    daemon = await slack.start()
    async with asyncio.timeout(WAIT):
        await api.arrived["paint it blue"].wait()
    await slack.kill(daemon)
    held.set()
    daemon = await slack.start()
    await slack.answer_saying("red", "green", "blue")
    await slack.answered("after")
    await slack.stop(daemon)
    assert len(slack.posts_saying("paint it green")) == 1
    stored = [row["content"] for row in slack.user_turns()]
    assert [stored.count(f"paint it {text}") for text in ("red", "green", "blue")] == [1, 1, 1]


async def test_a_message_older_than_max_age_is_stored_not_answered(
    kioku_on_slack: SlackKioku,
) -> None:
    slack = kioku_on_slack
    await away(slack)
    slack.fake.history.keep(slack.fake.dm(ALICE, "an ancient wish", ts=sent(2 * DAY)))
    slack.fake.history.keep(slack.fake.dm(ALICE, "a fresh wish", ts=sent(60)))
    daemon = await slack.start()
    await slack.answer_saying("fresh wish")
    await slack.stop(daemon)
    assert slack.posts_saying("ancient") == []
    assert "an ancient wish" in [row["content"] for row in slack.user_turns()]


async def test_an_edit_before_the_answer_is_what_the_model_reads(
    kioku_on_slack: SlackKioku, api: GatedAnthropic
) -> None:
    slack = kioku_on_slack
    daemon = await slack.start()
    busy = api.gate("first thing")
    await slack.fake.push(slack.fake.dm(ALICE, "first thing"))
    async with asyncio.timeout(WAIT):
        await api.arrived["first thing"].wait()
    asked = slack.fake.dm(ALICE, "meet me at the station")
    await slack.taken_in(asked)  # waiting in the DM's line behind "first thing"
    await slack.taken_in(slack.fake.history.edited(asked, "meet me at the harbour"))
    busy.set()
    await slack.answer_saying("harbour")
    await slack.stop(daemon)
    assert not model_read(api, "station")
    assert slack.posts_saying("station") == []


async def test_an_edit_while_away_is_what_the_model_reads(
    kioku_on_slack: SlackKioku, api: GatedAnthropic
) -> None:
    slack = kioku_on_slack
    await away(slack)
    asked = slack.fake.history.keep(slack.fake.dm(ALICE, "call the plumber", ts=sent(60)))
    slack.fake.history.edited(asked, "call the electrician")
    daemon = await slack.start()
    await slack.answer_saying("electrician")
    await slack.stop(daemon)
    assert not model_read(api, "plumber")


async def test_an_edit_after_the_answer_is_what_search_finds_and_is_not_answered_again(
    kioku_on_slack: SlackKioku, api: GatedAnthropic, kioku: Kioku
) -> None:
    slack = kioku_on_slack
    daemon = await slack.start()
    asked = slack.fake.dm(ALICE, "my locker code is rhubarb")
    api.reply_text("Noted.")  # not an echo: the answer holds no code
    await slack.fake.push(asked)
    await slack.answer_saying("Noted.")
    await slack.taken_in(slack.fake.history.edited(asked, "my locker code is parsnip"))
    await slack.answered("after")  # an edit waiting for the turn's end is made before it
    await slack.stop(daemon)
    assert slack.posts_saying("parsnip") == []
    assert "parsnip" in kioku("search", "parsnip", "--person", "owner").stdout
    gone = kioku("search", "rhubarb", "--person", "owner").stdout
    assert gone == "No sessions match 'rhubarb'.\n"


async def test_a_deleted_message_is_gone_from_state_db(
    kioku_on_slack: SlackKioku, api: GatedAnthropic
) -> None:
    slack = kioku_on_slack
    daemon = await slack.start()
    asked = slack.fake.dm(ALICE, "my secret is marzipan")
    api.reply_text("Noted.")
    await slack.fake.push(asked)
    await slack.answer_saying("Noted.")
    await slack.taken_in(slack.fake.history.deleted(asked))
    await slack.answered("after")
    await slack.stop(daemon)
    assert [row["content"] for row in slack.user_turns()] == ["after"]
    assert slack.holding("marzipan") == []


async def test_a_mention_in_a_thread_while_away_is_answered_in_that_thread(
    kioku_on_slack: SlackKioku,
) -> None:
    slack = kioku_on_slack
    daemon = await slack.start()
    top = slack.fake.mention(ALICE, "plan the picnic")
    await slack.fake.push(top)
    await slack.answer_saying("plan the picnic")
    await slack.stop(daemon)
    thread = {"thread_ts": top["ts"]}
    slack.fake.history.keep(slack.fake.mention(ALICE, "who brings bread?", **thread))
    chatter = slack.fake.mention(BOB, "", **thread)
    slack.fake.history.keep(chatter | {"text": "not for kioku: bring cheese"})
    daemon = await slack.start()
    answer = await slack.answer_saying("bread")
    await slack.stop(daemon)
    assert (answer["channel"], answer["thread_ts"]) == ("C0CHAN", top["ts"])
    assert slack.posts_saying("cheese") == []
    stored = [row["content"] for row in slack.user_turns()]
    assert "who brings bread?" in stored and not any("cheese" in text for text in stored)
