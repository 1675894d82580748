"""The owner claim: through the running daemon, or by listening on the platform ourselves.

With no daemon on the home, the platform's own adapter (the real library: getUpdates,
discord.py's gateway, Slack Socket Mode) runs here just long enough to see the first
direct message carrying the code. With a daemon running that serves the platform, the
daemon waits for it instead (`claim_owner` frame): one bot token cannot be polled twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from adapters.base import Adapter, Inbound
from config.platform_settings import (
    DiscordSettings,
    PlatformSettings,
    SlackSettings,
    TelegramSettings,
)
from gateway.outbound import Dispatcher
from gateway.owner_claims import CLAIMED, carries

Noticed = Callable[[str], None]
"""Told the identity of each DM that did not carry the code."""


async def listen(
    platform: str,
    section: PlatformSettings,
    code: str,
    within: float,
    noticed: Noticed,
    waiting: Callable[[], None],
) -> str | None:
    """The identity whose DM on `platform` carries `code` within `within` seconds (it is
    answered there), else None; `waiting` is called once the bot listens."""
    claimed: asyncio.Future[Inbound] = asyncio.get_running_loop().create_future()

    async def deliver(inbound: Inbound) -> None:
        if not inbound.is_direct or claimed.done():
            return
        if carries(inbound.text, code):
            claimed.set_result(inbound)
        else:
            noticed(inbound.sender)

    async with _adapter(platform, section, deliver) as adapter:
        waiting()
        try:
            inbound = await asyncio.wait_for(claimed, within)
            # The one way out, though the wizard runs no daemon; the notice is one short line.
            outbound = Dispatcher({platform: adapter}.get, lambda: False)
            await outbound.send(inbound.address, CLAIMED)
            return inbound.sender
        except TimeoutError:
            return None


def _adapter(
    platform: str, section: PlatformSettings, deliver: Callable[[Inbound], object]
) -> Adapter:
    """The platform's own adapter; Discord's without the wait for every server's members."""
    if isinstance(section, TelegramSettings):
        from adapters.telegram.adapter import TelegramAdapter

        return TelegramAdapter(deliver, section)  # type: ignore[arg-type]
    if isinstance(section, DiscordSettings):
        from adapters.discord.adapter import DiscordAdapter

        return DiscordAdapter(deliver, section, guild_ready_timeout=0.2)  # type: ignore[arg-type]
    if isinstance(section, SlackSettings):
        from adapters.slack.adapter import SlackAdapter

        return SlackAdapter.from_settings(section, deliver)  # type: ignore[arg-type]
    raise ValueError(f"no owner claim on {platform}: claim on telegram, discord or slack")


def section_of(platform: str, values: Mapping[str, Any]) -> PlatformSettings:
    """The platform's settings from the wizard's answers (`telegram.token`, …)."""
    kinds: dict[str, type[PlatformSettings]] = {
        "telegram": TelegramSettings,
        "discord": DiscordSettings,
        "slack": SlackSettings,
    }
    prefix = platform + "."
    data = {
        k[len(prefix) :]: v for k, v in values.items() if k.startswith(prefix) and v is not None
    }
    return kinds[platform](**data)


def daemon_serves(home: Path, platform: str) -> bool:
    """Whether a daemon answers on the home's socket and runs `platform`'s adapter."""
    from adapters.cli.names import socket_path
    from gateway.client.socket_client import DaemonError, NoAnswer, NotRunning, SocketClient

    try:
        with SocketClient(socket_path(home), 5.0) as client:
            status = client.status()
    except (NotRunning, DaemonError, NoAnswer, OSError):
        return False
    return (status.get("adapters") or {}).get(platform, {}).get("state") == "running"


def claim_through_daemon(
    home: Path, platform: str, code: str, within: float, waiting: Callable[[], None]
) -> str | None:
    """The daemon's claim (None on timeout); `DaemonError` for a refusal."""
    from adapters.cli.names import socket_path
    from gateway.client.socket_client import SocketClient

    with SocketClient(socket_path(home), 10.0) as client:
        return client.claim_owner(platform, code, within, waiting)


def reload_daemon(home: Path) -> None:
    """Have the daemon take the new owner identities now."""
    from adapters.cli.names import socket_path
    from gateway.client.socket_client import SocketClient

    with SocketClient(socket_path(home), 10.0) as client:
        client.reload()
