"""How long `kioku backup verify` and `kioku restore` take to refuse each hostile archive
of issue 34 at the size it was reproduced with (goal: ≤ 1 s each).

    .venv/bin/python tests/bench/bench_backup_hostile.py
    make bench BENCH=backup_hostile

A small home is backed up, and the archive rebuilt into every item of the hostile
backup corpus (tests/helpers/hostile_backups.py) with its full sizes: the manifest
200,000 levels deep, the 300 MB zero bombs (state.db and a note), the sparse member of
300 MB, the pax header of 200,000 digits (CVE-2024-6232), the recursive views, the
damaged gzip streams... Each is then given to the library calls behind the two commands
(`verify_backup`, and `restore_backup` over the existing home), timed alone; the bench
also checks that each was refused, that the home is as it was and that the scratch
folders are empty afterwards. Last, a backup of a home with a tree 1,200 folders deep
(which made every later backup die of RecursionError).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory.backup.archive import write_backup  # noqa: E402
from memory.backup.cleanup import remove_tree  # noqa: E402
from memory.backup.errors import BackupError  # noqa: E402
from memory.backup.restore import restore_backup  # noqa: E402
from memory.backup.verify import verify_backup  # noqa: E402
from tests.helpers.backup_archives import make_home  # noqa: E402
from tests.helpers.hostile_backups import CORPUS, FULL  # noqa: E402

GOAL_S = 1.0


def refused(work: Callable[[], object]) -> tuple[float, str]:
    """Seconds until `work` raised BackupError, and its first words."""
    started = time.perf_counter()
    try:
        work()
    except BackupError as exc:
        return time.perf_counter() - started, str(exc)
    raise SystemExit(f"not refused: {work}")


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def deep_backup(scratch: Path, levels: int) -> float:
    """Seconds for a backup of a home with a tree `levels` folders deep."""
    home = make_home(scratch / "deep-home")
    deep = home / "people" / "alice"
    for _ in range(levels):
        deep = deep / "d"
        deep.mkdir()
    (deep / "note.md").write_text("deep\n")
    started = time.perf_counter()
    written = write_backup(home, scratch / "deep-backups")
    took = time.perf_counter() - started
    assert any("folders deep" in left.why for left in written.skipped)
    remove_tree(home)
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the items whose name holds this")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="kioku-bench-hostile-"))
    try:
        home = make_home(scratch / "home")
        good = write_backup(home, scratch / "good").path
        temp = scratch / "tmp"
        temp.mkdir()
        before = files(home)
        print(f"python {platform.python_version()}; a {good.stat().st_size:,}-byte good archive")
        print(f"{'hostile archive':32} {'archive':>11} {'verify':>8} {'restore':>8}  refused with")
        worst = 0.0
        for name, (build, _) in CORPUS.items():
            if args.only and args.only not in name:
                continue
            bad = build(good, scratch / f"{name}.tar.gz", **FULL.get(name, {}))
            verify_s, said = refused(lambda bad=bad: verify_backup(bad, scratch=temp))
            restore_s, _ = refused(lambda bad=bad: restore_backup(bad, home, replace=True))
            assert files(home) == before and list(temp.iterdir()) == []
            assert sorted(p.name for p in scratch.iterdir() if not p.name.endswith(".gz")) == [
                "good",
                "home",
                "tmp",
            ]
            worst = max(worst, verify_s, restore_s)
            size = bad.stat().st_size
            print(f"{name:32} {size:>9,} B {verify_s:7.3f}s {restore_s:7.3f}s  {said[:70]}")
            bad.unlink()
        print(f"slowest refusal {worst:.3f} s (goal ≤ {GOAL_S:.0f} s)")
        if not args.only:
            print(f"backup of a home 1,200 folders deep: {deep_backup(scratch, 1200):.2f} s")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
