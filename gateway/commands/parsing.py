"""What makes a message a slash command: `/name@bot argument`, the name in lower case.

Apart from the registry so that the gateway (which asks "is this a command?") and the
handlers' context (which carries the parsed command) need nothing of the declarations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

COMMAND = re.compile(r"/([A-Za-z][A-Za-z0-9_]*)(?:@\S+)?(?:\s+(.*))?", re.DOTALL)


@dataclass(frozen=True)
class Command:
    name: str
    argument: str


def parse(text: str) -> Command | None:
    """`/name@bot argument` → Command("name", "argument"); other text → None."""
    match = COMMAND.fullmatch(text.strip())
    if match is None:
        return None
    return Command(match.group(1).lower(), (match.group(2) or "").strip())
