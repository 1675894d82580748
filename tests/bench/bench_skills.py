"""What skills cost: the index built at every session start, a view, a patch, and the imports.

The index scans every skill folder of the person and the shared place at each session
start. The first scan parses and safety-checks each SKILL.md; later ones reuse that
for unchanged files. This prints both as the number of skills grows, the per-call cost
of viewing (which also counts a use) and patching, and what PyYAML and the skills
modules add to a fresh interpreter.

    .venv/bin/python tests/bench/bench_skills.py [--counts 10,100,500] [--calls 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from config.settings import SkillsSettings  # noqa: E402
from memory.skills.library import SkillsLibrary  # noqa: E402
from memory.skills.manage import SkillRequest  # noqa: E402
from tests.bench.import_cost import samples  # noqa: E402

BASICS = "import config.settings, memory.notes.person_notes, structlog, filelock"
BODY = "# Procedure\n\nstate: even\n" + "".join(f"{n}. do step {n} with care\n" for n in range(40))


def skill_text(name: str) -> str:
    return f"---\nname: {name}\ndescription: How to do {name} the way that worked\n---\n\n{BODY}"


def import_cost(imports: str, runs: int = 5) -> tuple[float, int]:
    """Median ms and peak RSS (KB) of a fresh interpreter doing `imports` after the basics."""
    taken = samples(imports, runs, before=BASICS)
    return statistics.median(s.seconds * 1000 for s in taken), max(s.rss_kb for s in taken)


async def timed(work, calls: int) -> float:  # type: ignore[no-untyped-def]
    """Median ms of `calls` awaits of `work()`."""
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await work()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


async def per_count(count: int, calls: int) -> tuple[int, float, float, float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        lib = SkillsLibrary(Path(tmp), SkillsSettings(index_max_chars=100_000))
        for number in range(count):
            name = f"skill-{number:04d}"
            root = lib.personal_root("aiko") if number % 2 else lib.shared_root
            folder = root / name
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(skill_text(name))
        started = time.perf_counter()
        index = await lib.index("aiko")
        cold_ms = (time.perf_counter() - started) * 1000
        index_ms = await timed(lambda: lib.index("aiko"), max(3, calls // 10))
        view_ms = await timed(lambda: lib.view("aiko", "skill-0001"), calls)
        flip = iter(range(10**9))

        async def patch() -> None:
            n = next(flip)
            old, new = ("state: even", "state: odd")[:: 1 if n % 2 == 0 else -1]
            request = SkillRequest.from_mapping(
                {"action": "patch", "name": "skill-0001", "old_string": old, "new_string": new}
            )
            await lib.manage("aiko", request, "bench")

        patch_ms = await timed(patch, calls)
        return count, cold_ms, index_ms, view_ms, patch_ms, len(index)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", default="10,100,500")
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    print(
        "| skills (half own, half shared) | index ms, first | index ms, again | view ms "
        "| patch ms | index chars |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for count in (int(c) for c in args.counts.split(",")):
        n, cold, warm, view, patch, chars = await per_count(count, args.calls)
        print(f"| {n} | {cold:.1f} | {warm:.1f} | {view:.2f} | {patch:.2f} | {chars:,} |")
    print()
    print("| import (after settings, notes, structlog, filelock) | ms | peak RSS KB |")
    print("|---|---:|---:|")
    base = import_cost("pass")
    for imports in (
        "import yaml",
        "import memory.skills.library",
        "import agent.tools.skills_tools",
    ):
        ms, rss = import_cost(imports)
        print(f"| `{imports}` | {ms - base[0]:.1f} | +{rss - base[1]:,} |")


if __name__ == "__main__":
    asyncio.run(main())
