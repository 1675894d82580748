"""The layers point one way (DESIGN.md), and only memory/ touches the database.

adapters/ imports only config/; memory/ imports nothing above it; agent/ imports no
adapter, gateway or web module; web/ reaches memory through named functions, never the
gateway. Outside memory/ nothing runs SQL or hands the store a function to run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

BOTTOM = {"plumbing"}
"""Owned background tasks: every layer may import them, and they import nothing of the
project but themselves."""
MAY_IMPORT = {
    "plumbing": {"plumbing"},
    "config": {"config", *BOTTOM},
    "adapters": {"adapters", "config", *BOTTOM},
    "memory": {"memory", "config", *BOTTOM},
    "agent": {"agent", "memory", "config", *BOTTOM},
    "web": {"web", "memory", "config", *BOTTOM},
}
PROJECT = {"config", "adapters", "memory", "agent", "gateway", "web", *BOTTOM}
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
