"""How fast `kioku chat --attach` moves a file to the daemon, and what it costs the daemon.

Each run is a whole `kioku chat -m hi --attach FILE` process against the echo socket
(`tests/helpers/echo_socket.py` in a subprocess: the real `CliSocketAdapter`, which reads
the bytes back through `Attachment.fetch`), for files of 1, 20 (media.max_bytes' default)
and 64 MB (the socket's cap). Printed: the median wall time of `--runs` runs, the rate,
the time beyond `chat -m hi` with no file, and a fresh echo process's peak RSS (VmHWM)
before and after one largest file.

    .venv/bin/python tests/bench/bench_cli_attach.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.helpers.echo_socket import echo_process  # noqa: E402

KIOKU = Path(sys.executable).with_name("kioku")
SIZES_MB = (0, 1, 20, 64)


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        home.mkdir(mode=0o700)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("KIOKU_")},
            "KIOKU_HOME": str(home),
        }
        files = {}
        for size in SIZES_MB[1:]:
            path = Path(scratch) / f"file-{size}mb.bin"
            path.write_bytes(os.urandom(size * 1024 * 1024))
            files[size] = path
        print(f"{'file':>8}  {'median s':>9}  {'MB/s':>7}  {'beyond no file':>14}")
        with echo_process(home / "gateway.sock", quiet=True):
            base = statistics.median(
                timed([str(KIOKU), "chat", "-m", "hi"], env) for _ in range(runs)
            )
            print(f"{'none':>8}  {base:9.3f}  {'':>7}  {'':>14}")
            for size, path in files.items():
                argv = [str(KIOKU), "chat", "-m", "hi", "--attach", str(path)]
                median = statistics.median(timed(argv, env) for _ in range(runs))
                rate = size / (median - base) if median > base else float("inf")
                print(f"{size:>6}MB  {median:9.3f}  {rate:7.0f}  {median - base:13.3f}s")
        largest = files[SIZES_MB[-1]]
        with echo_process(home / "gateway.sock", quiet=True) as daemon:  # a fresh one
            timed([str(KIOKU), "chat", "-m", "hi"], env)
            before = _peak_mb(daemon.pid)
            timed([str(KIOKU), "chat", "-m", "hi", "--attach", str(largest)], env)
            after = _peak_mb(daemon.pid)
        print(
            f"daemon (echo) peak RSS: {before:.0f} MB before, {after:.0f} MB after one "
            f"{SIZES_MB[-1]} MB file"
        )


def _peak_mb(pid: int) -> float:
    """VmHWM of a running process, in MB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


if __name__ == "__main__":
    main()
