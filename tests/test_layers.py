"""The layers point one way (DESIGN.md), and only memory/ touches the database.

adapters/ imports only config/; memory/ imports nothing above it; agent/ imports no
adapter, gateway or web module; web/ reaches memory through named functions, never the
gateway. Outside memory/ nothing runs SQL or hands the store a function to run, and
nothing imports sqlite3: memory/ raises its own errors (`memory.store.errors`).

Inside memory/ the store is the engine at the bottom: it imports nothing else of memory/.
The parts above it point one way too (`MEMORY_MAY_IMPORT`), and memory/'s own modules at
its root (files, safety, outbox, document_ledger) are leaves that import none of them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

MAY_IMPORT = {
    "config": {"config"},
    "adapters": {"adapters", "config"},
    "memory": {"memory", "config"},
    "agent": {"agent", "memory", "config"},
    "web": {"web", "memory", "config"},
}
PROJECT = {"config", "adapters", "memory", "agent", "gateway", "web"}
# Each package of memory/ and what else of memory/ it may import (besides itself).
MEMORY_MAY_IMPORT = {
    "store": set(),
    "search": {"store"},
    "vectors": {"store"},
    "access": {"store"},
    "schedule": {"store"},
    "backup": {"store", "files"},
    "media": {"store", "access", "files"},
    "history": {"store", "access", "media"},
    "notes": {"store", "access", "files", "safety"},
    "skills": {"store", "access", "files", "safety"},
    "importers": {"store", "access", "notes", "skills"},
}
MEMORY_LEAVES = {"files", "safety", "outbox", "document_ledger"}
SQL_CALLS = {"execute", "executemany", "executescript", "execute_fetchall", "execute_insert"}


def modules(layer: str) -> Iterator[tuple[Path, ast.AST]]:
    for path in sorted((ROOT / layer).rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def imported(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("layer", sorted(MAY_IMPORT))
def test_each_layer_imports_only_what_lies_below_it(layer: str) -> None:
    crossing = sorted(
        f"{path.relative_to(ROOT)}: {name}"
        for path, tree in modules(layer)
        for name in imported(tree)
        if name.split(".")[0] in PROJECT - MAY_IMPORT[layer]
    )
    assert crossing == []


def _names_the_store(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "store") or (
        isinstance(node, ast.Attribute) and node.attr == "store"
    )


@pytest.mark.parametrize("layer", ["adapters", "agent", "gateway", "web"])
def test_nothing_outside_memory_runs_sql_or_hands_the_store_a_function(layer: str) -> None:
    found = []
    for path, tree in modules(layer):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            call = node.func
            if call.attr in SQL_CALLS or call.attr == "reading":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} .{call.attr}()")
            elif call.attr == "write" and _names_the_store(call.value):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} store.write()")
    assert found == []


def _memory_part(path: Path) -> str:
    """The package of memory/ a file belongs to, or its module name at memory/'s root."""
    return path.relative_to(ROOT / "memory").parts[0].removesuffix(".py")


def test_every_part_of_memory_has_a_rule() -> None:
    parts = {_memory_part(path) for path, _ in modules("memory")} - {"__init__"}
    assert parts - set(MEMORY_MAY_IMPORT) - MEMORY_LEAVES == set()


def test_the_rules_inside_memory_point_one_way() -> None:
    below = {part: set(allowed) for part, allowed in MEMORY_MAY_IMPORT.items()}
    for _ in MEMORY_MAY_IMPORT:
        for allowed in below.values():
            allowed |= {deeper for part in allowed for deeper in below.get(part, set())}
    assert [part for part, allowed in below.items() if part in allowed] == []


@pytest.mark.parametrize("part", sorted(MEMORY_MAY_IMPORT.keys() | MEMORY_LEAVES))
def test_each_part_of_memory_imports_only_what_lies_below_it(part: str) -> None:
    may = MEMORY_MAY_IMPORT.get(part, set()) | {part}
    crossing = sorted(
        f"{path.relative_to(ROOT)}: {name}"
        for path, tree in modules("memory")
        if _memory_part(path) == part
        for name in imported(tree)
        if name.startswith("memory.") and name.split(".")[1] not in may
    )
    assert crossing == []


@pytest.mark.parametrize("layer", sorted(PROJECT - {"memory"}))
def test_nothing_outside_memory_imports_sqlite3(layer: str) -> None:
    found = sorted(
        f"{path.relative_to(ROOT)}: {name}"
        for path, tree in modules(layer)
        for name in imported(tree)
        if name.split(".")[0] in {"sqlite3", "aiosqlite"}
    )
    assert found == []
