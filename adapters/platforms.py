"""Every platform kioku serves, listed once: the daemon starts the configured ones, the
identities accept their names and apply their policies, and `kioku doctor` checks them.

A platform's name is the prefix of its identities (`telegram:123`) and the name of its
settings section (`[telegram]`, a `PlatformSettings` in config/settings.py). Its package
(`adapters/telegram/`), and the SDK behind it, is imported only when the platform is
configured: each SDK costs start-up time and tens of MB on a small server. Adding a
platform: its package (the adapter class in its `adapter.py`), its settings section, and
one entry (with its builder) below. A platform's package imports no other platform's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from adapters.base import Adapter, EventHandler, MenuCommand
from adapters.catch_up import OFF, CatchUpPlan
from adapters.cli.adapter import Claim, CliSocketAdapter, Reload, StatusSource
from adapters.cli.names import socket_path
from config.platform_settings import PlatformSettings
from config.settings import Settings

PlanFor = Callable[[str], Awaitable[CatchUpPlan]]
"""The catch-up plan of the platform named: the gateway's cursors and limits for it."""


async def plan_nothing(platform: str) -> CatchUpPlan:
    """Without a gateway keeping cursors (an adapter built alone), nothing is caught up."""
    return OFF


@dataclass(frozen=True)
class Wiring:
    """What the daemon hands each adapter it builds: where inbound messages go, the
    daemon's status (the CLI socket answers `kioku status`), the slash-command menu
    for platforms that show one or register commands, what a catch-up pass may read
    (`catch_up`, asked with the platform's name), and what the CLI socket calls
    when `kioku schedule` changed jobs (the scheduler's wake-up), when `kioku setup` asks
    for a reload, and when it waits for the owner's one-time code."""

    deliver: EventHandler
    status: StatusSource
    commands: Sequence[MenuCommand] = ()
    schedule_changed: Callable[[], None] | None = None
    reload: Reload | None = None
    claim_owner: Claim | None = None
    catch_up: PlanFor = plan_nothing


Builder = Callable[[Settings, Wiring], Adapter]


@dataclass(frozen=True)
class Platform:
    """One platform. It is configured when its section's `credential` is set; a platform
    without one (the CLI socket) always runs. `build` imports the adapter's module (the
    CLI socket's has no SDK and is always loaded)."""

    name: str
    credential: str | None
    build: Builder

    def section(self, settings: Settings) -> PlatformSettings:
        """Its settings: DM policy, allow list, credentials and its own options."""
        section: PlatformSettings = getattr(settings, self.name)
        return section

    def configured(self, settings: Settings) -> bool:
        if self.credential is None:
            return True
        return getattr(self.section(settings), self.credential) is not None

    def adapter(self, settings: Settings, wiring: Wiring) -> Adapter | None:
        """Its adapter when configured, else None (and its module is not imported)."""
        return self.build(settings, wiring) if self.configured(settings) else None


def _cli(settings: Settings, wiring: Wiring) -> Adapter:
    return CliSocketAdapter(
        wiring.deliver,
        socket_path(settings.home),
        wiring.status,
        schedule_changed=wiring.schedule_changed,
        reload=wiring.reload,
        claim_owner=wiring.claim_owner,
    )


def _telegram(settings: Settings, wiring: Wiring) -> Adapter:
    from adapters.telegram.adapter import TelegramAdapter

    return TelegramAdapter(
        wiring.deliver,
        settings.telegram,
        commands=wiring.commands,
        catch_up=partial(wiring.catch_up, "telegram"),
    )


def _discord(settings: Settings, wiring: Wiring) -> Adapter:
    from adapters.discord.adapter import DiscordAdapter

    return DiscordAdapter(
        wiring.deliver,
        settings.discord,
        commands=wiring.commands,
        catch_up=partial(wiring.catch_up, "discord"),
    )


def _slack(settings: Settings, wiring: Wiring) -> Adapter:
    from adapters.slack.adapter import SlackAdapter

    return SlackAdapter.from_settings(
        settings.slack,
        wiring.deliver,
        commands=wiring.commands,
        catch_up=partial(wiring.catch_up, "slack"),
    )


def _matrix(settings: Settings, wiring: Wiring) -> Adapter:
    from adapters.matrix.adapter import MatrixAdapter

    return MatrixAdapter(
        wiring.deliver,
        settings.matrix,
        settings.home,
        owners=settings.owner.identities,
        catch_up=partial(wiring.catch_up, "matrix"),
    )


PLATFORMS: tuple[Platform, ...] = (
    Platform("cli", None, _cli),
    Platform("telegram", "token", _telegram),
    Platform("discord", "token", _discord),
    Platform("slack", "bot_token", _slack),
    Platform("matrix", "user_id", _matrix),
)
PLATFORM_NAMES: tuple[str, ...] = tuple(platform.name for platform in PLATFORMS)


def configured_adapters(settings: Settings, wiring: Wiring) -> list[Adapter]:
    """The adapters of every configured platform, in the order above."""
    return [a for p in PLATFORMS if (a := p.adapter(settings, wiring)) is not None]


NOT_CONFIGURED: dict[str, Any] = {"state": "not configured", "since": None, "last_error": None}


def platform_states(running: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every platform in the order above: the state of each adapter the daemon runs, and
    `not configured` for the others, so `kioku status` and the web page show what exists."""
    return {p.name: dict(running.get(p.name, NOT_CONFIGURED)) for p in PLATFORMS}
