"""A memory provider for tests, loaded through the entry point like any other.

It writes every call it gets to `<data_dir>/calls.jsonl` (the test reads what the
daemon in its subprocess did), and its `behaviour` setting says how it answers:
`answer` (a block and a recall naming the scope), `hang` (never), `fail` (a service
error that quotes its `api_key`, as a careless provider might, so the tests can see
kioku mask it), `garbage` (answers that are not text, as a buggy provider's).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agent.memory_providers.base import MemoryProvider, ProviderError, Scope, TurnRecord


class Scripted(MemoryProvider):
    name = "scripted"
    erases = True

    async def start(self, settings: Mapping[str, Any]) -> None:
        self.behaviour = settings.get("behaviour", "answer")
        key = settings.get("api_key")
        self.key = key.get_secret_value() if key is not None else ""
        self.log = self.host.data_dir / "calls.jsonl"
        self._note("start")

    async def prompt_block(self, scope: Scope) -> str:
        await self._behave("prompt_block", scope.key)
        if self.behaviour == "garbage":
            return 42  # type: ignore[return-value]
        return f"Scripted profile of {scope.key}."

    async def recall(self, scope: Scope, query: str, limit: int) -> Sequence[str]:
        await self._behave("recall", scope.key, query=query)
        if self.behaviour == "garbage":
            return None  # type: ignore[return-value]
        return [f"Scripted recall for {scope.key}: {query[:40]}"]

    async def record_turn(self, scope: Scope, turn: TurnRecord) -> None:
        before = None if turn.before is None else [turn.before.turn_id, turn.before.text]
        await self._behave(
            "record_turn",
            scope.key,
            user=turn.user_text,
            ids=turn.turn_ids,
            meta=dict(turn.meta),
            before=before,
        )

    async def session_closed(self, scope: Scope, summary: str) -> None:
        await self._behave("session_closed", scope.key)

    async def forget(self, scope: Scope) -> None:
        await self._behave("forget", scope.key)

    async def delete(self, scope: Scope, turn_ids: Sequence[int]) -> None:
        await self._behave("delete", scope.key, ids=list(turn_ids))

    async def _behave(self, hook: str, scope: str, **details: Any) -> None:
        self._note(hook, scope=scope, **details)
        if self.behaviour == "hang":
            await asyncio.sleep(3600)
        if self.behaviour == "fail":
            raise ProviderError(f"the service answered 500 for key {self.key}")

    def _note(self, hook: str, **details: Any) -> None:
        with self.log.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"hook": hook, **details}, default=list) + "\n")


def calls(home: Path, name: str) -> list[dict[str, Any]]:
    """What provider `name` of the daemon at `home` was asked, in order."""
    path = home / "providers" / name / "calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]
