"""`/metrics` served over the gateway rig: every metric issue 38 names, parsed by
prometheus_client's own parser, none labelled with a person, a chat or what was said,
the token asked for when one is set, and a Grafana dashboard that queries only what is
served."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from adapters.base import Missed
from config.metrics_settings import MetricsSettings
from gateway.metrics.exported import Metrics
from gateway.metrics.server import MetricsServer
from gateway.metrics.state import Sources
from gateway.supervisor import Supervisor
from tests.helpers.gateway_rig import GatewayRig, gateway_rig
from tests.helpers.paths import ROOT

PERSON = "aiko"
IDENTITY = "telegram:734019228"
CHAT = "734019228"
SAID = ("my bicycle plan is secret", "/search bicycle", "while you were away")
TOKEN = "scrape-me-7f3a"
DASHBOARD = ROOT / "deploy" / "grafana" / "kioku.json"
ISSUE_38_FAMILIES = {
    "kioku_turns": "counter",  # turns by platform and outcome
    "kioku_turn_duration_seconds": "histogram",  # queue wait, model, tools, total
    "kioku_tokens": "counter",  # tokens by kind and model
    "kioku_cost_usd": "counter",  # cost by kind and model
    "kioku_adapter_state": "gauge",
    "kioku_adapter_reconnects": "counter",
    "kioku_queue_depth": "gauge",
    "kioku_catch_up_messages": "counter",
    "kioku_scheduled_runs": "counter",  # due, late, failed
    "kioku_provider_recall_duration_seconds": "histogram",
    "kioku_provider_recall_timeouts": "counter",
    "kioku_search_duration_seconds": "histogram",
    "kioku_database_bytes": "gauge",
    "kioku_database_wal_bytes": "gauge",
    "process_resident_memory_bytes": "gauge",
    "process_open_fds": "gauge",
}
WHO_OR_WHAT = {"person", "chat", "user", "sender", "identity", "text", "message", "session"}


@dataclass
class Served:
    rig: GatewayRig
    url: str


@asynccontextmanager
async def served(home: Path, token: str | None = None) -> AsyncIterator[Served]:
    """The rig with a meter, its adapters under a supervisor, and /metrics on a free port."""
    metrics = Metrics()
    async with gateway_rig(home, meter=metrics) as rig:
        await rig.person(PERSON, IDENTITY)
        async with Supervisor(rig.adapters.values(), meter=metrics) as supervisor:
            settings = MetricsSettings(listen="127.0.0.1:0", token=token)
            sources = Sources(rig.gateway.stats, supervisor.states, rig.store.path)
            async with MetricsServer(settings, metrics, sources) as server:
                yield Served(rig, f"http://127.0.0.1:{server.port}/metrics")


async def scrape(url: str, token: str | None = None) -> tuple[int, str]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession() as client, client.get(url, headers=headers) as response:
        return response.status, await response.text()


@pytest.fixture
async def exposition(home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """/metrics after a DM turn, a /search and a catch-up pass."""
    monkeypatch.setenv("KIOKU_AGENT__REFLECTION__ENABLED", "false")
    async with served(home) as live:
        rig = live.rig
        assert await rig.ask(rig.dm(IDENTITY, SAID[0], "m1")) == f"echo: {SAID[0]}"
        assert "Found" in await rig.ask(rig.dm(IDENTITY, SAID[1], "m2"))
        await rig.gateway.handle(Missed("telegram", (rig.dm(IDENTITY, SAID[2], "m3"),)))
        assert await rig.telegram.next_text() == f"echo: {SAID[2]}"
        status, text = await scrape(live.url)
    assert status == 200
    return text


def samples(text: str) -> list[Sample]:
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def value(text: str, name: str, **labels: str) -> float:
    return sum(
        s.value for s in samples(text) if s.name == name and labels.items() <= s.labels.items()
    )


def test_metrics_carries_every_metric_issue_38_names(exposition: str) -> None:
    families = {f.name: f.type for f in text_string_to_metric_families(exposition)}
    assert {name: families.get(name) for name in ISSUE_38_FAMILIES} == ISSUE_38_FAMILIES


def test_the_fakes_tokens_are_counted_by_kind_and_model(exposition: str) -> None:
    reply = {"kind": "reply", "model": "claude-test"}
    assert value(exposition, "kioku_tokens_total", type="input", **reply) == 2 * 12
    assert value(exposition, "kioku_tokens_total", type="output", **reply) == 2 * 7
    assert value(exposition, "kioku_unpriced_calls_total", **reply) == 2  # no price for it


def test_turns_searches_catch_up_and_the_process_are_counted(exposition: str) -> None:
    assert value(exposition, "kioku_turns_total", platform="telegram", outcome="answered") == 2
    stages = {"queue": 1, "model": 2, "tools": 2, "total": 2}  # catch-up turns: no queue wait
    counted = {s: value(exposition, "kioku_turn_duration_seconds_count", stage=s) for s in stages}
    assert counted == stages
    assert value(exposition, "kioku_search_duration_seconds_count") == 1
    assert value(exposition, "kioku_catch_up_messages_total", outcome="answered") == 1
    assert value(exposition, "kioku_adapter_state", platform="telegram", state="running") == 1
    assert value(exposition, "kioku_database_bytes") > 0
    assert value(exposition, "process_resident_memory_bytes") > 0
    assert value(exposition, "process_open_fds") > 0


def test_no_label_names_a_person_a_chat_or_what_was_said(exposition: str) -> None:
    words = {word for text in SAID for word in text.split()}
    secret = {PERSON, IDENTITY, CHAT, *SAID, *words}
    labels = [(k, v) for s in samples(exposition) for k, v in s.labels.items()]
    assert labels
    assert {k for k, _ in labels} & WHO_OR_WHAT == set()
    assert [(k, v) for k, v in labels if v in secret] == []


async def test_a_scrape_without_the_token_is_refused(home: Path) -> None:
    async with served(home, TOKEN) as live:
        assert (await scrape(live.url))[0] == 401
        assert (await scrape(live.url, "wrong"))[0] == 401


async def test_a_scrape_with_the_token_is_served(home: Path) -> None:
    async with served(home, TOKEN) as live:
        status, text = await scrape(live.url, TOKEN)
    assert status == 200
    assert "kioku_turns" in {f.name for f in text_string_to_metric_families(text)}


def panels(board: dict) -> list[dict]:
    found = []
    for panel in board["panels"]:
        found.append(panel)
        found.extend(panel.get("panels", []))
    return [panel for panel in found if panel.get("type") != "row"]


SERIES = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}


def exposable(text: str) -> set[str]:
    """The series names each family served can carry, also before its first sample (a
    labelled counter shows only its HELP and TYPE until something is counted)."""
    return {
        family.name + suffix
        for family in text_string_to_metric_families(text)
        for suffix in SERIES.get(family.type, ("",))
    }


def test_every_dashboard_panel_queries_only_metrics_kioku_serves(exposition: str) -> None:
    served_names = exposable(exposition)
    board = json.loads(DASHBOARD.read_text("utf-8"))
    queried: dict[str, set[str]] = {}
    for panel in panels(board):
        exprs = [target["expr"] for target in panel["targets"]]
        names = {n for e in exprs for n in re.findall(r"\b(?:kioku|process)_[a-z0-9_]+", e)}
        queried[panel["title"]] = names
    assert len(queried) >= 10
    assert {title: names for title, names in queried.items() if not names} == {}
    unknown = {t: names - served_names for t, names in queried.items() if names - served_names}
    assert unknown == {}
