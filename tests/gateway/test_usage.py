"""Usage through a real gateway, store and agent against the fake model API, which
answers with known token counts: `/usage` and `kioku usage --json` add up to them by
person and kind, background calls are charged to whoever caused them, and nobody sees
another's usage."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.base import Inbound
from agent.prompt import TurnContext
from tests.fakes.anthropic_api import FakeAnthropic
from tests.helpers.attachments import attached
from tests.helpers.cli_batch import Job, kioku_batch_async
from tests.helpers.gateway_rig import Chat, GatewayRig, gateway_rig
from tests.helpers.media_files import jpeg_with_gps

AIKO, BEN = "telegram:1", "telegram:2"
# USD per million tokens of the rig's model, so the costs below are exact.
PRICES = {"claude-test": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}}
TOOL_ROUND = {
    "input_tokens": 100,
    "output_tokens": 10,
    "cache_read_input_tokens": 50,
    "cache_creation_input_tokens": 20,
}
ANSWER = {"input_tokens": 200, "output_tokens": 30}
BENS = {"input_tokens": 40, "output_tokens": 4}
AIKO_COST = (300 * 3 + 40 * 15 + 50 * 0.3 + 20 * 3.75) / 1e6  # $0.00159
BEN_COST = (40 * 3 + 4 * 15) / 1e6  # $0.00018


@pytest.fixture
async def rig(home: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[GatewayRig]:
    monkeypatch.setenv("KIOKU_LLM__PRICES", json.dumps(PRICES))
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        await rig.person("ben", BEN)
        yield rig


async def talk(rig: GatewayRig) -> tuple[Chat, Chat]:
    """aiko: a tool round and an answer; ben: one answer, each with known counts. Their
    DMs, to go on in."""
    assert rig.api is not None
    aiko, ben = Chat(rig, AIKO), Chat(rig, BEN)
    rig.api.reply_tool_use("skills_list", {}, usage=TOOL_ROUND)
    rig.api.reply_text("done", usage=ANSWER)
    assert await aiko("what skills do I have?") == "done"
    rig.api.reply_text("hi ben", usage=BENS)
    assert await ben("hello") == "hi ben"
    return aiko, ben


async def test_usage_shows_a_persons_own_calls_by_kind_and_no_one_elses(rig: GatewayRig) -> None:
    to_aiko, to_ben = await talk(rig)

    aiko = await to_aiko("/usage")
    ben = await to_ben("/usage")

    mine = "2 model calls, 370 tokens in (50 from the cache), 40 out, $0.0016"
    assert f"Today: {mine}" in aiko and f"• reply: {mine}" in aiko
    assert "Today: 1 model call, 40 tokens in, 4 out, $0.0002" in ben
    assert "370" not in ben and "$0.0016" not in ben


async def test_usage_is_refused_in_a_group(rig: GatewayRig) -> None:
    reply = await Chat(rig, AIKO, group=True)("/usage")
    assert reply == "Send /usage to me in a direct message: what you use is yours to see."


async def test_kioku_usage_json_adds_up_to_the_models_counts(
    rig: GatewayRig, tmp_path: Path
) -> None:
    await talk(rig)
    jobs = [
        Job("all", ["usage", "--json"], rig.home),
        Job("aiko", ["usage", "--person", "aiko", "--by", "kind", "--json"], rig.home),
        Job("models", ["usage", "--by", "model", "--since", "2000-01-01", "--json"], rig.home),
    ]

    ran = await kioku_batch_async(jobs, tmp_path / "batch")

    everyone = json.loads(ran["all"].stdout)
    rows = {row["key"]: row for row in everyone["rows"]}
    assert everyone["by"] == "person" and set(rows) == {"aiko", "ben"}
    assert [rows["aiko"][k] for k in ("calls", "input_tokens", "output_tokens")] == [2, 300, 40]
    assert [rows["aiko"][k] for k in ("cache_read_tokens", "cache_write_tokens")] == [50, 20]
    assert rows["aiko"]["cost_usd"] == pytest.approx(AIKO_COST)
    assert rows["ben"]["cost_usd"] == pytest.approx(BEN_COST)
    assert everyone["total"]["calls"] == 3
    assert everyone["total"]["cost_usd"] == pytest.approx(AIKO_COST + BEN_COST)
    (kind,) = json.loads(ran["aiko"].stdout)["rows"]
    assert (kind["key"], kind["calls"], kind["output_tokens"]) == ("reply", 2, 40)
    (model,) = json.loads(ran["models"].stdout)["rows"]
    assert (model["key"], model["calls"]) == ("claude-test", 3)


async def test_kioku_usage_refuses_bad_values_saying_what_to_write(
    rig: GatewayRig, tmp_path: Path
) -> None:
    jobs = [
        Job("by", ["usage", "--by", "week"], rig.home),
        Job("since", ["usage", "--since", "yesterday"], rig.home),
        Job("ghost", ["usage", "--person", "ghost"], rig.home),
    ]

    ran = await kioku_batch_async(jobs, tmp_path / "batch")

    for job in ran.values():
        job.assert_clean()
    assert ran["by"].code == 2
    assert "'week' is not a grouping; use one of person, kind, model, day" in ran["by"].stderr
    assert ran["since"].code == 2
    assert "'yesterday' is not a date; write it as 2026-01-01" in ran["since"].stderr
    assert ran["ghost"].code == 1
    assert "no person 'ghost'; `kioku people list` shows them" in ran["ghost"].stderr


async def test_background_calls_are_charged_to_who_caused_them(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_AGENT__REFLECTION__EVERY_USER_TURNS", "1")
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        await rig.person("ben", BEN)
        aiko = Chat(rig, AIKO)
        await aiko("remember I like tea")
        await rig.agent.idle()  # the review the turn started
        await aiko("/new")  # closing: the session's title and summary
        group = Chat(rig, BEN, group=True)
        await group("@kioku hello group")
        await rig.agent.idle()
        await group("/new")  # the group's summary: nobody's but the group's
        job = Inbound("telegram", "2", BEN, "my week", True, addressed=True)
        await rig.gateway.turns.answer_job(job, "ben", TurnContext(datetime.now(UTC), "telegram"))
        await rig.agent.idle()

        now = datetime.now(UTC)
        period = (now - timedelta(hours=1), now + timedelta(hours=1))
        aiko = await rig.store.usage_totals("kind", *period, person="aiko")
        ben = await rig.store.usage_totals("kind", *period, person="ben")
        people = await rig.store.usage_totals("person", *period)

    assert {t.key: t.calls for t in aiko} == {"reply": 1, "reflection": 1, "summary": 1}
    assert {t.key: t.calls for t in ben} == {"reply": 1, "reflection": 2, "schedule": 1}
    assert {t.key: t.calls for t in people} == {"aiko": 3, "ben": 4, "group:telegram:-500": 1}
    assert all(t.unpriced == t.calls for t in aiko)  # the rig's model has no price here


async def test_a_photo_described_for_a_blind_model_is_charged_to_its_sender_in_the_group(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with FakeAnthropic() as describer:
        describer.reply_text("A receipt.", usage={"input_tokens": 1000, "output_tokens": 100})
        monkeypatch.setenv("KIOKU_LLM__VISION", "false")
        monkeypatch.setenv("KIOKU_MEDIA__DESCRIBE_WITH", "anthropic:claude-haiku-4-5")
        monkeypatch.setenv("KIOKU_MEDIA__DESCRIBE_BASE_URL", describer.base_url)
        monkeypatch.setenv("KIOKU_MEDIA__DESCRIBE_API_KEY", "sk-describe")
        async with gateway_rig(home) as rig:
            await rig.person("ben", BEN)
            photo = attached("image", "receipt.jpg", jpeg_with_gps(800, 600), mime="image/jpeg")
            await rig.ask(rig.group(BEN, "@kioku what is this?", "g1", attachments=(photo,)))

            now = datetime.now(UTC)
            period = (now - timedelta(hours=1), now + timedelta(hours=1))
            ben = await rig.store.usage_totals("kind", *period, person="ben")
            models = await rig.store.usage_totals("model", *period)

    media = {t.key: t for t in ben}["media"]
    assert (media.calls, media.input_tokens, media.output_tokens) == (1, 1000, 100)
    assert media.cost_usd == pytest.approx((1000 * 1 + 100 * 5) / 1e6)  # Haiku 4.5's price
    assert {t.key: t.calls for t in models} == {"claude-haiku-4-5": 1, "claude-test": 1}
