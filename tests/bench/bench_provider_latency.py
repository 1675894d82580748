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

The services are fakes on 127.0.0.1 (tests/fakes/), in a process of their own started
afresh for each configuration, so their work is not counted as kioku's: the figures are
kioku's own overhead, the SDKs and HTTP on loopback, not a real service's latency, which
comes on top (an embedding model's own time, Supermemory's round trip). The
hanging provider costs `providers.recall_timeout` (1.5 s) per recall and prompt block by
design; it runs fewer messages (`--hang-messages`).

    .venv/bin/python tests/bench/bench_provider_latency.py [--history 500] [--messages 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.access.identities import ensure_person

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
from config.provider_settings import ProvidersSettings  # noqa: E402
from config.settings import LLMSettings, Settings  # noqa: E402
from memory.store.database import Store  # noqa: E402
from memory.store.records import Conversation, NewMessage  # noqa: E402
from tests.fakes.anthropic_api import FakeAnthropic  # noqa: E402
from tests.fakes.embeddings_api import FakeEmbeddings  # noqa: E402
from tests.fakes.scripted_server import Received, Step  # noqa: E402
from tests.fakes.supermemory_api import FakeSupermemory  # noqa: E402
from tests.helpers.provider_plugins import install_plugins  # noqa: E402

PERSON = "alice"
SCOPE = Scope("person", PERSON)
WORDS = ("tea", "kyoto", "train", "hotel", "garden", "bike", "sister", "book", "server",
         "backup", "schema", "tomato", "dog", "invoice", "dentist", "passport", "recipe",
         "concert", "marathon", "piano")  # fmt: skip
ON = {"enabled": True}
SUPERMEMORY_KEY = "bench-key"
Urls = dict[str, str]
Config = Callable[[Urls], dict[str, Any]]


def supermemory(urls: Urls) -> dict[str, Any]:
    return {**ON, "api_key": SUPERMEMORY_KEY, "base_url": urls["supermemory"]}


def local_vectors(urls: Urls) -> dict[str, Any]:
    return {**ON, "base_url": urls["embeddings"], "model": "fake-embed"}


CONFIGS: dict[str, Config] = {
    "none": lambda urls: {},
    "notebook": lambda urls: {"notebook": ON},
    "supermemory": lambda urls: {"supermemory": supermemory(urls)},
    "local_vectors": lambda urls: {"local_vectors": local_vectors(urls)},
    "both": lambda urls: {"supermemory": supermemory(urls), "local_vectors": local_vectors(urls)},
    "hanging": lambda urls: {"scripted_slow": {**ON, "behaviour": "hang", "timeout": 2}},
}


@dataclass
class Figures:
    enqueue_paused: list[float] = field(default_factory=list)
    enqueue_running: list[float] = field(default_factory=list)
    drain: float | None = None
    recall: list[float] = field(default_factory=list)
    prompt_block: list[float] = field(default_factory=list)
    respond: list[float] = field(default_factory=list)
    request_bytes: list[int] = field(default_factory=list)


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


async def measure(name: str, args: argparse.Namespace, urls: Urls) -> Figures:
    figures = Figures()
    hanging = name == "hanging"
    messages = args.hang_messages if hanging else args.messages
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ["KIOKU_HOME"] = str(home)
        store = await Store.open(home / "state.db")
        await ensure_person(store, PERSON)
        history = await fill(store, args.history)
        config = ProvidersSettings.model_validate(CONFIGS[name](urls))
        providers = MemoryProviders(config, home, lexical_search(store), LLMSettings())
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
        await respond_turns(store, providers, urls["anthropic"], messages // 2, figures)
        if mirror is not None and not hanging:
            await mirror.idle(within=600)
        await providers.aclose()
        await store.close()
    return figures


async def respond_turns(
    store: Store, providers: MemoryProviders, model_url: str, turns: int, figures: Figures
) -> None:
    """`turns` messages through `Agent.respond` in one new session; the fake model answers
    each at once with one short sentence naming the size of the request it got."""
    settings = Settings()
    settings.agent.reflection.enabled = False
    policy = RetryPolicy(max_retries=0, deadline=30)
    llm = AnthropicProvider(model="m", api_key="k", base_url=model_url, retry=policy)
    agent = build_agent(settings, store, llm, providers=providers)  # as the daemon does
    session = await store.open_session(Conversation("cli", "bench", "dm", PERSON))
    context = TurnContext(when=datetime.now(UTC), platform="cli")
    for n in range(turns):
        turn = Turn(session, PERSON, f"remind me about the {WORDS[n % len(WORDS)]}", context)
        began = time.perf_counter()
        outcome = await agent.respond(turn)
        figures.respond.append(time.perf_counter() - began)
        figures.request_bytes.append(int(outcome.text.split()[1]))
    await agent.aclose()


def ms(values: list[float], q: float) -> str:
    if not values:
        return "—"
    ordered = sorted(values)
    value = ordered[min(int(q * len(ordered)), len(ordered) - 1)] * 1000
    return f"{value:.3f}" if value < 1 else f"{value:.1f}" if value >= 100 else f"{value:.2f}"


def row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


async def serve_fakes(dims: int) -> None:
    """The three fakes, in this (separate) process until it is killed; their addresses
    as one JSON line on stdout."""
    async with (
        FakeSupermemory(api_key=SUPERMEMORY_KEY) as sm,
        FakeEmbeddings(dims=dims) as lv,
        FakeAnthropic() as model,
    ):

        def answer(request: Received) -> Step:
            model.reply_text(f"Noted, {len(request.body)} bytes.")
            return model._script.pop()

        model.fallback = answer
        urls = {"supermemory": sm.base_url, "embeddings": lv.base_url, "anthropic": model.base_url}
        print(json.dumps(urls), flush=True)
        await asyncio.Event().wait()


@contextmanager
def fakes(dims: int) -> Iterator[Urls]:
    """Fresh fakes in a process of their own: their work is not timed as kioku's."""
    command = [sys.executable, __file__, "--serve-fakes", "--dims", str(dims)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        yield json.loads(server.stdout.readline())
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=500, help="exchanges recorded first")
    parser.add_argument("--messages", type=int, default=200, help="recalls timed")
    parser.add_argument("--hang-messages", type=int, default=10)
    parser.add_argument("--dims", type=int, default=768, help="the fake embeddings' length")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--serve-fakes", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_fakes:
        asyncio.run(serve_fakes(args.dims))
        return 0
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
    for path in install_plugins(Path(tempfile.mkdtemp(prefix="kioku-bench-plugins-"))):
        sys.path.insert(0, str(path))

    results: dict[str, Figures] = {}
    for name in args.configs.split(","):
        began = time.perf_counter()
        with fakes(args.dims) as urls:
            results[name] = asyncio.run(measure(name, args, urls))
        print(f"  {name}: measured in {time.perf_counter() - began:.0f} s", file=sys.stderr)
    print(
        "What each memory provider adds to a turn — kioku in-process on a real store, the "
        "services faked on 127.0.0.1\nin another process: kioku's own overhead plus the SDKs "
        "and HTTP on loopback, NOT a real service's latency\n(add the embedding model's time "
        "and the service's round trip).\n"
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
        "request KB, turn 1 / last",
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
                    f"{f.request_bytes[0] / 1024:.0f} / {f.request_bytes[-1] / 1024:.0f}",
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
