"""A stand-in for a local speech-to-text program (`stt.command`), run as a subprocess:

stt_command.py say TEXT FILE     prints TEXT
stt_command.py report FILE       prints the file's size, mode and suffix as JSON
stt_command.py fail FILE         writes two lines to stderr, exits 3
stt_command.py sleep FILE        sleeps far longer than any test's timeout
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    action, path = argv[0], Path(argv[-1])
    if action == "say":
        print(argv[1])
    elif action == "report":
        info = path.stat()
        print(
            json.dumps(
                {
                    "size": info.st_size,
                    "mode": info.st_mode & 0o777,
                    "suffix": path.suffix,
                    "path": str(path),
                }
            )
        )
    elif action == "fail":
        print("loading model", file=sys.stderr)
        print("model file not found: ggml-base.bin", file=sys.stderr)
        return 3
    elif action == "sleep":
        time.sleep(600)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
