"""A complete kioku memory provider in one file: a notebook per scope, on disk.

Each exchange is a line of JSON in `<data_dir>/<scope>.jsonl`; recall ranks the lines by
the words they share with the message; forgetting a scope removes its file. It is the
example of docs/memory-providers.md, and kioku's test suite loads it through the
`kioku.memory_providers` entry point, as kioku loads any installed provider.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agent.memory_providers.base import (
    Health,
    MemoryProvider,
    ProviderError,
    ProviderTool,
    Scope,
    TurnRecord,
)

WORD = re.compile(r"\w+")


class Notebook(MemoryProvider):
    name = "notebook"
    erases = True  # forget and delete remove the lines from disk

    async def start(self, settings: Mapping[str, Any]) -> None:
        self.max_lines = int(settings.get("max_lines", 1000))
        if self.max_lines < 1:
            raise ProviderError("providers.notebook.max_lines must be at least 1")
        self.folder = self.host.data_dir

    async def health(self) -> Health:
        files = await asyncio.to_thread(lambda: len(list(self.folder.glob("*.jsonl"))))
        return Health(True, f"{files} notebooks in {self.folder}")

    async def prompt_block(self, scope: Scope) -> str:
        lines = await self._read(scope)
        return f"The notebook holds {len(lines)} earlier exchanges." if lines else ""

    async def recall(self, scope: Scope, query: str, limit: int) -> Sequence[str]:
        wanted = set(WORD.findall(query.lower()))
        scored = []
        for line in await self._read(scope):
            shared = len(wanted & set(WORD.findall(line["user"].lower())))
            if shared:
                scored.append((shared, line["user"]))
        scored.sort(key=lambda pair: -pair[0])
        return [text for _, text in scored[:limit]]

    async def record_turn(self, scope: Scope, turn: TurnRecord) -> None:
        lines = await self._read(scope)
        lines.append({"turns": list(turn.turn_ids), "user": turn.user_text})
        await self._write(scope, lines[-self.max_lines :])

    def tools(self) -> Sequence[ProviderTool]:
        schema = {"type": "object", "properties": {}, "additionalProperties": False}
        return [ProviderTool("count", "How many exchanges the notebook holds.", schema)]

    async def call(self, name: str, arguments: Mapping[str, Any], scope: Scope) -> str:
        if name != "count":
            raise ProviderError(f"the notebook has no tool {name!r}")
        return f"{len(await self._read(scope))} exchanges"

    async def forget(self, scope: Scope) -> None:
        await asyncio.to_thread(self._path(scope).unlink, missing_ok=True)

    async def delete(self, scope: Scope, turn_ids: Sequence[int]) -> None:
        gone = set(turn_ids)
        lines = await self._read(scope)
        await self._write(scope, [line for line in lines if not gone & set(line["turns"])])

    def _path(self, scope: Scope) -> Path:
        # The scope's key is kioku's; hashing it keeps any character out of the file name.
        return self.folder / f"{hashlib.sha256(scope.key.encode()).hexdigest()[:32]}.jsonl"

    async def _read(self, scope: Scope) -> list[dict[str, Any]]:
        def read() -> list[dict[str, Any]]:
            path = self._path(scope)
            if not path.exists():
                return []
            return [json.loads(line) for line in path.read_text("utf-8").splitlines()]

        return await asyncio.to_thread(read)

    async def _write(self, scope: Scope, lines: list[dict[str, Any]]) -> None:
        def write() -> None:
            path = self._path(scope)
            temporary = path.with_suffix(".tmp")
            temporary.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
            temporary.chmod(0o600)
            temporary.replace(path)

        await asyncio.to_thread(write)
