"""The layers point one way (DESIGN.md), and only memory/ touches the database.

inputs/ and plumbing/ are at the bottom, below config/; adapters/ imports only config/
and them, and a platform's package (adapters/telegram/, ...) no other platform's; memory/
imports nothing above it; agent/ imports no adapter, gateway or web module; web/ reaches
memory through named functions, never the gateway. Outside memory/ nothing runs SQL or
hands the store a function to run. Inside gateway/, the rooms (doctor/, service/,
client/…) sit below the `kioku` command's printing face and import none of it. No product
module imports itself through others.

Nothing outside memory/ imports sqlite3: memory/ raises its own errors
(`memory.store.errors`). Inside memory/ the store is the engine at the bottom: it imports
nothing else of memory/. The parts above it point one way too (`MEMORY_MAY_IMPORT`), and
memory/'s own modules at its root (safety, outbox, document_ledger) are leaves
that import none of them.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

import pytest

from adapters.platforms import PLATFORM_NAMES
from tests.helpers.paths import ROOT

BOTTOM = {"inputs", "plumbing"}
"""Input limits and hygiene; atomic files and backoff: every layer may import them, and
they import nothing of the project but themselves."""
MAY_IMPORT = {
    "inputs": {"inputs"},
    "plumbing": {"plumbing"},
    "config": {"config", *BOTTOM},
    "adapters": {"adapters", "config", *BOTTOM},
    "memory": {"memory", "config", *BOTTOM},
    "agent": {"agent", "memory", "config", *BOTTOM},
    "web": {"web", "memory", "config", *BOTTOM},
}
PROJECT = {"config", "adapters", "memory", "agent", "gateway", "web", *BOTTOM}
FACES = ("gateway/cli/", "gateway/setup/", "gateway/__main__.py")
"""What prints and picks exit codes: the `kioku` command and its setup wizard."""
ROOM_NEVER_IMPORTS = {
    "gateway/service/": ("gateway.doctor.", "gateway.client."),
    "gateway/client/": ("gateway.doctor.", "gateway.service."),
    "gateway/scheduling/": ("gateway.gateway.", "gateway.turns.", "gateway.daemon."),
    "gateway/turns/": ("gateway.gateway.", "gateway.scheduling.", "gateway.daemon."),
    "gateway/catch_up/": ("gateway.gateway.", "gateway.scheduling.", "gateway.daemon."),
    "gateway/upkeep/": ("gateway.",),
}
"""The doctor reads the service's unit path, never the reverse; the socket client needs
neither. The scheduler reaches the turn pipeline only through the `Answers` it is handed,
the pipeline knows nothing of schedules, and upkeep (backups, retention) needs no gateway."""
GATEWAY_ROOT_MODULES = 14
ADAPTERS_SHARED_MODULES = 8
# Each package of memory/ and what else of memory/ it may import (besides itself).
MEMORY_MAY_IMPORT = {
    "store": set(),
    "search": {"store"},
    "vectors": {"store"},
    "access": {"store"},
    "schedule": {"store"},
    "spending": {"store"},
    "backup": {"store"},
    "media": {"store", "access"},
    "history": {"store", "access", "media"},
    "notes": {"store", "access", "safety", "search"},
    "skills": {"store", "access", "safety"},
    "importers": {"store", "access", "notes", "skills"},
    "budgets": {"store", "access", "schedule", "spending"},
}
MEMORY_LEAVES = {"safety", "outbox", "document_ledger"}
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


PLATFORM_PACKAGES = sorted(
    p.name for p in (ROOT / "adapters").iterdir() if (p / "__init__.py").exists()
)


def imported_modules(tree: ast.AST) -> set[str]:
    """Every module an import names, `from adapters import slack` as `adapters.slack`."""
    names = imported(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_each_platform_of_the_registry_is_a_package_of_adapters() -> None:
    assert sorted(PLATFORM_NAMES) == PLATFORM_PACKAGES


@pytest.mark.parametrize("platform", PLATFORM_PACKAGES)
def test_a_platform_package_imports_no_other_platform(platform: str) -> None:
    others = {f"adapters.{name}" for name in PLATFORM_PACKAGES if name != platform}
    crossing = sorted(
        f"{path.relative_to(ROOT)}: {name}"
        for path, tree in modules(f"adapters/{platform}")
        for name in imported_modules(tree)
        if ".".join(name.split(".")[:2]) in others
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


def _imports_under(prefix: str) -> list[str]:
    """`path: module` for every import made by the modules whose path starts with `prefix`."""
    return [
        f"{path.relative_to(ROOT)}: {name}"
        for path, tree in modules("gateway")
        if str(path.relative_to(ROOT)).startswith(prefix)
        for name in imported(tree)
    ]


def test_no_gateway_room_imports_the_printing_face() -> None:
    found = [
        line
        for line in _imports_under("gateway/")
        if not line.startswith(FACES) and f"{line.split(': ')[1]}.".startswith("gateway.cli.")
    ]
    assert found == []


@pytest.mark.parametrize("room", sorted(ROOM_NEVER_IMPORTS))
def test_a_room_imports_nothing_of_the_rooms_above_it(room: str) -> None:
    found = [
        line
        for line in _imports_under(room)
        if f"{line.split(': ')[1]}.".startswith(ROOM_NEVER_IMPORTS[room])
    ]
    assert found == []


def test_the_gateway_root_holds_at_most_14_modules() -> None:
    """Beside its rooms, the root keeps what a newcomer reads first: router, sessions,
    queues, identity, supervisor, daemon (`__init__.py` is not counted)."""
    root = sorted(path.name for path in (ROOT / "gateway").glob("*.py"))
    root.remove("__init__.py")
    assert len(root) <= GATEWAY_ROOT_MODULES, root


def test_adapters_keep_at_most_8_modules_beside_the_platform_packages() -> None:
    """What every platform shares (the message types, chunking, the registry); the rest
    lives in a platform's own package."""
    shared = sorted(path.name for path in (ROOT / "adapters").glob("*.py"))
    assert len(shared) <= ADAPTERS_SHARED_MODULES, shared


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Each product module → the product modules it imports, anywhere in it (inside a
    function, or for typing only: it names them all the same)."""
    trees = {
        module_name(path): (path, tree)
        for layer in sorted(PROJECT)
        for path, tree in modules(layer)
    }
    graph = {}
    for name, (path, tree) in trees.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = {
            target
            for target in _targets(tree, package, trees)
            if target in trees and target != name
        }
    return graph


def _targets(tree: ast.AST, package: str, names: Collection[str]) -> Iterator[str]:
    """The modules an import names: `from a.b import c` is a.b.c when that is a module
    (of `names`), else a.b."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                module = f"{base}.{alias.name}"
                yield module if module in names else base


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative): modules that import each other, directly or through others."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = stack[stack.index(node) :]
                    del stack[stack.index(node) :]
                    if len(part) > 1:
                        found.append(sorted(part))
            elif target not in index:
                index[target] = low[target] = len(index)
                stack.append(target)
                work.append((target, iter(sorted(graph[target]))))
            elif target in stack:
                low[node] = min(low[node], index[target])
    return found


def test_circles_finds_modules_importing_each_other_through_others() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e2"}, "e2": set()}
    assert circles(graph) == [["a", "b", "c"]]


def test_no_product_module_imports_itself_through_others() -> None:
    found = circles(import_graph())
    assert found == [], "import circles: " + "; ".join(" <-> ".join(c) for c in found)


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
