"""What each memory provider adds to a turn, measured in-process on a real store.

For each configuration — no provider, the documentation's notebook example (loaded
through its entry point), supermemory, local_vectors, supermemory and local_vectors
together, and a provider that never answers — a fresh home gets `--history` exchanges
of one person in state.db, then:

- `record_turn` on the reply path: only the enqueue (the send runs in the background),
  first with the mirror paused (`--history` copies queued), then per message with it
  running; and how long the mirror takes to send the `--history` queued copies;
- `recall(scope, query)` per message over `--messages` messages, once the providers hold
  the history (local_vectors also runs kioku's lexical search of the scope and fuses);
- `prompt_block(scope)`, as at each session open;
- `Agent.respond` end to end over `--messages` / 2 turns of one new session (store the
  message, recall, the model's call through the Anthropic SDK to the fake answering at
  once, store the reply, queue the copy), and the size of its first and last request:
  recalled text stays in the user turn it was added to (so the cached prefix holds), so
  a session's requests grow by what is recalled each turn, and so does each call's time.

The services are fakes on 127.0.0.1 (tests/fakes/): the figures are kioku's own overhead,
the SDK and HTTP on loopback, not a real service's latency, which comes on top. The
hanging provider costs `providers.recall_timeout` (1.5 s) per recall and prompt block by
design; it runs fewer messages (`--hang-messages`).

    .venv/bin/python tests/bench/bench_provider_latency.py [--history 500] [--messages 200]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import structlog  # noqa: E402

from agent.build import build_agent  # noqa: E402
from agent.memory_providers.base import Scope, TurnRecord  # noqa: E402
from agent.memory_providers.lexical import lexical_search  # noqa: E402
from agent.memory_providers.manager import MemoryProviders  # noqa: E402
from agent.prompt import TurnContext  # noqa: E402
from agent.providers import RetryPolicy  # noqa: E402
from agent.providers.anthropic import AnthropicProvider  # noqa: E402
from agent.turn import Turn  # noqa: E402
from config.settings import ProvidersSettings, Settings  # noqa: E402
from memory.store.database import Store  # noqa: E402
from memory.store.records import Conversation, NewMessage  # noqa: E402
from tests.fakes.anthropic_api import FakeAnthropic  # noqa: E402
from tests.fakes.embeddings_api import FakeEmbeddings  # noqa: E402
from tests.fakes.supermemory_api import FakeSupermemory  # noqa: E402
from tests.helpers.provider_plugins import install_plugins  # noqa: E402

PERSON = "alice"
SCOPE = Scope("person", PERSON)
WORDS = ("tea", "kyoto", "train", "hotel", "garden", "bike", "sister", "book", "server",
         "backup", "schema", "tomato", "dog", "invoice", "dentist", "passport", "recipe",
         "concert", "marathon", "piano")  # fmt: skip
ON = {"enabled": True}
Config = Callable[[FakeSupermemory, FakeEmbeddings], dict[str, Any]]


def supermemory(api: FakeSupermemory) -> dict[str, Any]:
    return {**ON, "api_key": api.api_key, "base_url": api.base_url}


def local_vectors(api: FakeEmbeddings) -> dict[str, Any]:
    return {**ON, "base_url": api.base_url, "model": "fake-embed"}


CONFIGS: dict[str, Config] = {
    "none": lambda sm, lv: {},
    "notebook": lambda sm, lv: {"notebook": ON},
    "supermemory": lambda sm, lv: {"supermemory": supermemory(sm)},
    "local_vectors": lambda sm, lv: {"local_vectors": local_vectors(lv)},
    "both": lambda sm, lv: {"supermemory": supermemory(sm), "local_vectors": local_vectors(lv)},
    "hanging": lambda sm, lv: {"scripted_slow": {**ON, "behaviour": "hang", "timeout": 2}},
}


@dataclass
class Figures:
    enqueue_paused: list[float] = field(default_factory=list)
    enqueue_running: list[float] = field(default_factory=list)
    drain: float | None = None
    recall: list[float] = field(default_factory=list)
    prompt_block: list[float] = field(default_factory=list)
    respond: list[float] = field(default_factory=list)
    request_kb: list[float] = field(default_factory=list)


def said(n: int) -> str:
    """The person's `n`th message: three everyday words, a number, varied."""
    picks = (WORDS[n % len(WORDS)], WORDS[(n * 7 + 3) % len(WORDS)], WORDS[(n * 13 + 5) % 20])
    return f"note {n}: the {picks[0]} and the {picks[1]}, then {picks[2]} on day {n % 31}"


async def timed(call: Awaitable[object], into: list[float]) -> None:
    began = time.perf_counter()
    await call
    into.append(time.perf_counter() - began)


async def fill(store: Store, exchanges: int) -> list[tuple[str, tuple[int, int]]]:
    """`exchanges` answered messages of PERSON in state.db, closed in sessions of 50."""
    out = []
    session = None
    for n in range(exchanges):
        if n % 50 == 0:
            if session is not None:
                await store.close_session(session.id, "idle")
            key = f"old{n}"
            session = await store.open_session(Conversation("cli", key, "dm", PERSON, key=key))
        assert session is not None
        text = said(n)
        asked = await store.append(session.id, NewMessage("user", text, speaker=PERSON))
        answer = await store.append(session.id, NewMessage("assistant", f"noted {n}"))
        out.append((text, (asked, answer)))
    if session is not None:
        await store.close_session(session.id, "idle")
    return out


async def measure(
    name: str, config: dict[str, Any], args: argparse.Namespace, model: FakeAnthropic
) -> Figures:
    figures = Figures()
    hanging = name == "hanging"
    messages = args.hang_messages if hanging else args.messages
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ["KIOKU_HOME"] = str(home)
        store = await Store.open(home / "state.db")
        await store.ensure_person(PERSON)
        history = await fill(store, args.history)
        providers = MemoryProviders(
            ProvidersSettings.model_validate(config), home, lexical_search(store)
        )
        await providers.start(store)
        failed = {e.name: e.error for e in providers.entries.values() if e.error}
        if failed:
            raise SystemExit(f"{name}: providers did not start: {failed}")
        mirror = providers.mirror
        if mirror is not None:
            await mirror.stop()
        for text, ids in history:
            record = TurnRecord(text, f"noted {ids[0]}", ids, {"ts": repr(time.time())})
            await timed(providers.record_turn(SCOPE, record), figures.enqueue_paused)
        if mirror is not None:
            began = time.perf_counter()
            await mirror.start()
            if not hanging:
                await mirror.idle(within=600)
                figures.drain = time.perf_counter() - began
        for n in range(messages):
            query = f"what did I say about the {WORDS[n % len(WORDS)]} and {WORDS[(n * 5) % 20]}?"
            await timed(providers.recall(SCOPE, query), figures.recall)
            record = TurnRecord(query, "echo", (10**6 + 2 * n, 10**6 + 2 * n + 1))
            await timed(providers.record_turn(SCOPE, record), figures.enqueue_running)
        for _ in range(max(messages // 4, 5)):
            await timed(providers.prompt_block(SCOPE), figures.prompt_block)
        await respond_turns(store, providers, model, messages // 2, figures.respond)
        figures.request_kb = [len(model.requests[i].body) / 1024 for i in (0, -1)]
        if mirror is not None and not hanging:
            await mirror.idle(within=600)
        await providers.aclose()
        await store.close()
    return figures


async def respond_turns(
    store: Store, providers: MemoryProviders, model: FakeAnthropic, turns: int, into: list[float]
) -> None:
    """`turns` messages through `Agent.respond` in one new session, the model answering
    each at once with one short sentence."""
    settings = Settings()
    settings.agent.reflection.enabled = False
    policy = RetryPolicy(max_retries=0, deadline=30)
    llm = AnthropicProvider(model="m", api_key="k", base_url=model.base_url, retry=policy)
    agent = build_agent(settings, store, llm, providers=providers)  # as the daemon does
    session = await store.open_session(Conversation("cli", "bench", "dm", PERSON))
    context = TurnContext(when=datetime.now(UTC), platform="cli")
    for n in range(turns):
        model.reply_text("Noted.")  # a short answer: an echo would repeat the recalled text
        turn = Turn(session, PERSON, f"remind me about the {WORDS[n % len(WORDS)]}", context)
        await timed(agent.respond(turn), into)
    await agent.aclose()


def ms(values: list[float], q: float) -> str:
    if not values:
        return "—"
    ordered = sorted(values)
    value = ordered[min(int(q * len(ordered)), len(ordered) - 1)] * 1000
    return f"{value:.3f}" if value < 1 else f"{value:.1f}" if value >= 100 else f"{value:.2f}"


def row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


async def run(args: argparse.Namespace) -> dict[str, Figures]:
    results: dict[str, Figures] = {}
    async with (
        FakeSupermemory(api_key="bench-key") as sm,
        FakeEmbeddings(dims=args.dims) as lv,
        FakeAnthropic() as model,
    ):
        for name in args.configs.split(","):
            sm.documents.clear()  # each configuration starts with an empty service
            for fake in (sm, lv, model):
                fake.requests.clear()
            began = time.perf_counter()
            results[name] = await measure(name, CONFIGS[name](sm, lv), args, model)
            print(f"  {name}: measured in {time.perf_counter() - began:.0f} s", file=sys.stderr)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=500, help="exchanges recorded first")
    parser.add_argument("--messages", type=int, default=200, help="recalls timed")
    parser.add_argument("--hang-messages", type=int, default=10)
    parser.add_argument("--dims", type=int, default=768, help="the fake embeddings' length")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
    for path in install_plugins(Path(tempfile.mkdtemp(prefix="kioku-bench-plugins-"))):
        sys.path.insert(0, str(path))

    results = asyncio.run(run(args))
    print(
        "What each memory provider adds to a turn — in-process, real store, services faked "
        "on 127.0.0.1:\nkioku's own overhead plus the SDK and HTTP on loopback, NOT a real "
        "service's latency (add its round trip).\n"
        f"history: {args.history} exchanges of one person recorded first; recall over "
        f"{args.messages} messages ({args.hang_messages} for the hanging provider); "
        f"embeddings {args.dims} dimensions; recall_timeout 1.5 s. Times in ms.\n"
    )
    head = [
        "providers",
        "recall p50",
        "recall p95",
        "prompt_block p50",
        "record_turn enqueue p50 / p95",
        f"mirror drains {args.history}",
        "Agent.respond p50",
        "Agent.respond p95",
        "request KB, first / last turn",
    ]
    print(row(head))
    print(row(["---"] + ["---:"] * (len(head) - 1)))
    for name, f in results.items():
        drain = "never (hangs)" if name == "hanging" else "—"
        if f.drain is not None:
            per = f.drain / args.history * 1000
            drain = f"{f.drain:.2f} s ({per:.2f} ms each)"
        enqueue = f"{ms(f.enqueue_running, 0.5)} / {ms(f.enqueue_running, 0.95)}"
        print(
            row(
                [
                    name,
                    ms(f.recall, 0.5),
                    ms(f.recall, 0.95),
                    ms(f.prompt_block, 0.5),
                    enqueue,
                    drain,
                    ms(f.respond, 0.5),
                    ms(f.respond, 0.95),
                    f"{f.request_kb[0]:.0f} / {f.request_kb[1]:.0f}",
                ]
            )
        )
    paused = {name: statistics.median(f.enqueue_paused) * 1000 for name, f in results.items()}
    print(
        "\nrecord_turn enqueue with the mirror paused (p50 ms): "
        + ", ".join(f"{name} {value:.3f}" for name, value in paused.items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
