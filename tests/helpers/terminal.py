"""Run `kioku` on a pseudo-terminal, as a person at a shell would: commands that ask
before doing something only ask when stdin is a terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time

from tests.helpers.paths import KIOKU

WAIT = 30.0


def on_terminal(*args: str, answer: str, prompt: str) -> tuple[int, str]:
    """Run `kioku ARGS` on a pty, type `answer` once `prompt` shows; (exit code, output)."""
    main, child = pty.openpty()
    process = subprocess.Popen(
        [str(KIOKU), *args],
        stdin=child,
        stdout=child,
        stderr=child,
        env={**os.environ, "KIOKU_LOG__FORMAT": "json"},
        close_fds=True,
    )
    os.close(child)
    output = b""
    answered = False
    deadline = time.monotonic() + WAIT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(main, 4096)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                output += chunk
            if not answered and prompt.encode() in output:
                os.write(main, answer.encode() + b"\n")
                answered = True
            if not ready and process.poll() is not None:
                break
        return process.wait(timeout=WAIT), output.decode(errors="replace").replace("\r\n", "\n")
    finally:
        os.close(main)
        if process.poll() is None:
            process.kill()
