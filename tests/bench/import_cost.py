"""What importing a library adds to kioku's agent, measured in fresh interpreters."""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Peak RSS from VmHWM: ru_maxrss would include the (larger) parent, inherited over fork.
PROBE = """
import re, time
import agent.agent
t = time.perf_counter()
{imports}
took = time.perf_counter() - t
status = open("/proc/self/status").read()
print(took, re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
"""


def import_cost(imports: str, runs: int) -> tuple[float, float]:
    """Median seconds of `imports` after the agent's own, and median peak RSS (MB)."""
    samples = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", PROBE.format(imports=imports)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout.split()
        samples.append((float(out[0]), int(out[1]) / 1024))
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)
