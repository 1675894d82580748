"""An `$EDITOR` for tests: overwrite the file it is given with the text in $NEW_TEXT_FILE."""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    Path(sys.argv[-1]).write_bytes(Path(os.environ["NEW_TEXT_FILE"]).read_bytes())
