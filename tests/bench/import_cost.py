"""What importing a library costs, measured in fresh interpreters (one per sample)."""

from __future__ import annotations

import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AGENT = "import agent.agent"

# Peak RSS from VmHWM: ru_maxrss would include the (larger) parent, inherited over fork.
PROBE = """
import re, time
{before}
t = time.perf_counter()
{imports}
took = time.perf_counter() - t
status = open("/proc/self/status").read()
print(took, re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
"""


@dataclass(frozen=True)
class Sample:
    """One fresh interpreter: seconds `imports` took after `before`, and its peak RSS."""

    seconds: float
    rss_kb: int


def samples(imports: str, runs: int, before: str = AGENT) -> list[Sample]:
    """`runs` fresh interpreters each importing `before` untimed, then `imports` timed."""
    out = []
    for _ in range(runs):
        took, rss = subprocess.run(
            [sys.executable, "-c", PROBE.format(before=before, imports=imports)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout.split()
        out.append(Sample(float(took), int(rss)))
    return out


def import_cost(imports: str, runs: int) -> tuple[float, float]:
    """Median seconds of `imports` after the agent's own, and median peak RSS (MB)."""
    taken = samples(imports, runs)
    return (
        statistics.median(s.seconds for s in taken),
        statistics.median(s.rss_kb / 1024 for s in taken),
    )
