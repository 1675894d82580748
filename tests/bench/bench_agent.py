"""Per-turn overhead of the agent outside the model.

A provider that answers instantly (in process, no HTTP) stands in for the model, so
what is timed is kioku's own work per turn: storing the message durably, building
the request, running a memory tool call every tenth turn, storing the reply. The
person already has 10,000 stored turns of history, and the session under test grows
to `--turns` turns. Target: p50 <= 5 ms.

    .venv/bin/python tests/bench/bench_agent.py [--history 10000] [--turns 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from memory.access.identities import ensure_person

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agent.agent import Agent  # noqa: E402
from agent.prompt import TurnContext  # noqa: E402
from agent.providers import ChatRequest, ModelReply, OnText, Text, ToolCall, Usage  # noqa: E402
from agent.tools.context import Services  # noqa: E402
from agent.tools.defaults import default_registry  # noqa: E402
from agent.turn import Turn  # noqa: E402
from config.settings import Settings  # noqa: E402
from memory.store.database import Store  # noqa: E402
from memory.store.records import Conversation, NewMessage  # noqa: E402


class InstantProvider:
    """Answers at once; every tenth user turn it first asks for a memory write."""

    name = "instant"
    model = "instant"
    context_window = 10_000_000

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: ChatRequest, on_text: OnText | None = None) -> ModelReply:
        self.calls += 1
        last = request.messages[-1]
        wants_tool = self.calls % 10 == 0 and not any(
            block.__class__.__name__ == "ToolResult" for block in last.content
        )
        if wants_tool:
            call = ToolCall(
                f"c{self.calls}",
                "memory",
                {"action": "add", "target": "memory", "content": f"fact {self.calls}"},
            )
            return ModelReply((call,), "tool_use", Usage(10, 5))
        if on_text is not None:
            await on_text("ok")
        return ModelReply((Text("ok"),), "end", Usage(10, 1))

    async def aclose(self) -> None:
        return None


async def fill_history(store: Store, turns: int) -> None:
    per_session = 20
    for index in range(turns // per_session):
        session = await store.open_session(
            Conversation("telegram", f"old{index}", "dm", "bench", key=f"old{index}")
        )
        for turn in range(per_session):
            role = "user" if turn % 2 == 0 else "assistant"
            text = f"message {turn} of old session {index} about servers, tea and travel plans"
            await store.append(session.id, NewMessage(role=role, content=text, speaker="bench"))
        await store.close_session(session.id, "idle")


async def run(history: int, turns: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        settings = Settings()
        settings.memory.notes.memory_limit = 100_000
        settings.agent.reflection.enabled = False
        store = await Store.open(home / "state.db")
        await ensure_person(store, "bench")
        started = time.perf_counter()
        await fill_history(store, history)
        filled = time.perf_counter() - started
        agent = Agent(InstantProvider(), Services(store, home, settings), default_registry())
        session = await store.open_session(Conversation("cli", "bench", "dm", "bench"))
        context = TurnContext(when=datetime.now(UTC), platform="cli")
        timings: list[float] = []
        for index in range(turns):
            turn = Turn(session, "bench", f"question number {index} about the garden", context)
            began = time.perf_counter()
            await agent.respond(turn)
            await agent.after_turn(session.id, "bench")
            timings.append((time.perf_counter() - began) * 1000)
        await agent.aclose()
        await store.close()
    timings.sort()
    p50 = statistics.median(timings)
    p99 = timings[int(len(timings) * 0.99) - 1]
    print(f"history: {history} stored turns (filled in {filled:.1f} s); session: {turns} turns")
    print(f"{'metric':<28}{'value':>10}  target")
    print(f"{'per-turn overhead p50':<28}{p50:>8.2f} ms  <= 5 ms")
    print(f"{'per-turn overhead p99':<28}{p99:>8.2f} ms")
    print(f"{'mean':<28}{statistics.fmean(timings):>8.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--history", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(run(args.history, args.turns))


if __name__ == "__main__":
    main()
