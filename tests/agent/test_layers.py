"""agent/ sits below the gateway and beside the adapters: it imports neither, nor web/."""

from __future__ import annotations

import ast
from pathlib import Path

AGENT = Path(__file__).resolve().parents[2] / "agent"
ABOVE_OR_BESIDE = ("adapters", "gateway", "web")


def imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_agent_imports_no_adapter_gateway_or_web_module() -> None:
    crossing = {
        f"{path.relative_to(AGENT.parent)}: {name}"
        for path in AGENT.rglob("*.py")
        for name in imported(path)
        if name.split(".")[0] in ABOVE_OR_BESIDE
    }
    assert not crossing
