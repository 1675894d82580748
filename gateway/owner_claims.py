"""Finding the owner's identity for them: a one-time code sent to the bot in a DM.

`kioku setup` shows a code; the first direct message carrying it on the chosen platform
names the owner's identity there (`telegram:123`), so nobody has to look a numeric id up.
A code is good for one claim on one platform and only while someone waits for it: once
claimed or timed out it is gone, so sending it later makes nobody owner.

Without a daemon the wizard listens itself (`gateway/setup/claim.py`); with a daemon
running, the claim goes through it (the CLI socket's `claim_owner` frame), since two
pollers of one bot token conflict. The gateway asks `OwnerClaims.take` about every
message before admission, pairing included.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Awaitable

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""No 0/O or 1/I: the code is read off a terminal and typed on a phone."""
CODE_LENGTH = 6
CLAIMED = "Done: you are kioku's owner on this platform. Finish the setup in the terminal."
_WORDS = re.compile(r"[A-Za-z0-9]+")


def new_code() -> str:
    """A fresh one-time code, such as `K7QX2M`."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def carries(text: str, code: str) -> bool:
    """Whether a message's text holds `code` as a word, in any case (`/start k7qx2m`)."""
    return any(word.upper() == code for word in _WORDS.findall(text))


class ClaimBusy(RuntimeError):
    """A claim already waits on that platform."""


class OwnerClaims:
    """The claims a running daemon waits for, at most one per platform."""

    def __init__(self) -> None:
        self._waiting: dict[str, tuple[str, asyncio.Future[str]]] = {}

    def expect(self, platform: str, code: str, within: float) -> Awaitable[str | None]:
        """Wait, from now on, for a DM carrying `code` on `platform`: the awaitable gives
        the identity that sent it within `within` seconds, else None; either way the code
        is spent. `ClaimBusy` when a claim already waits there."""
        if platform in self._waiting:
            raise ClaimBusy(f"another owner claim is waiting on {platform}; try again later")
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiting[platform] = (code, future)
        return self._outcome(platform, future, within)

    async def _outcome(
        self, platform: str, future: asyncio.Future[str], within: float
    ) -> str | None:
        try:
            return await asyncio.wait_for(future, within)
        except TimeoutError:
            return None
        finally:
            if self._waiting.get(platform, (None, None))[1] is future:
                del self._waiting[platform]

    def take(self, platform: str, sender: str, text: str, is_direct: bool) -> bool:
        """Whether this message claims the owner (and is thereby answered): a direct
        message carrying the code awaited on its platform."""
        waiting = self._waiting.get(platform)
        if waiting is None or not is_direct or not carries(text, waiting[0]):
            return False
        _, future = self._waiting.pop(platform)
        if not future.done():
            future.set_result(sender)
        return True
