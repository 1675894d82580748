"""Providers installed as a package would install them: a dist-info folder whose
entry points (`kioku.memory_providers`) name the documentation's example and the tests'
scripted provider, found by `importlib.metadata` on `sys.path` or `PYTHONPATH`."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers.paths import ROOT

EXAMPLES = ROOT / "docs" / "examples"
ENTRY_POINTS = """\
[kioku.memory_providers]
notebook = kioku_notebook:Notebook
scripted = tests.helpers.scripted_provider:Scripted
scripted_slow = tests.helpers.scripted_provider:Scripted
scripted_failing = tests.helpers.scripted_provider:Scripted
"""


def install_plugins(folder: Path) -> list[Path]:
    """Write the dist-info into `folder`; the paths to put on the import path."""
    dist = folder / "kioku_test_providers-1.0.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: kioku-test-providers\nVersion: 1.0\n", "utf-8"
    )
    (dist / "entry_points.txt").write_text(ENTRY_POINTS, "utf-8")
    return [folder, EXAMPLES, ROOT]


def pythonpath(paths: list[Path]) -> str:
    """`PYTHONPATH` for a daemon in a subprocess that must find the plugins."""
    return os.pathsep.join(str(path) for path in paths)
