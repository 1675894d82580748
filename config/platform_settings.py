"""The platforms' settings sections: who may write to kioku on each, and each adapter's
credentials and options (`[telegram]`, `[discord]`, `[slack]`, `[cli]`)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from config.section import Section

DmPolicy = Literal["pairing", "allowlist", "open", "disabled"]


class PlatformSettings(Section):
    """Who may talk to kioku in direct messages on one platform."""

    dm_policy: DmPolicy = Field(
        "pairing", description="pairing: strangers get a code to approve; allowlist: silent"
    )
    allow: list[str] = Field(
        default_factory=list, description="identities let in under every policy but disabled"
    )


class CliSettings(PlatformSettings):
    """The local socket: the daemon's own account is the owner; other accounts are strangers."""


class TelegramSettings(PlatformSettings):
    """The Telegram adapter (python-telegram-bot); it starts when `token` is set."""

    token: SecretStr | None = Field(None, description="the bot token from @BotFather")
    base_url: str | None = Field(
        None, description="Bot API base, e.g. http://127.0.0.1:8081/bot (self-hosted server)"
    )
    base_file_url: str | None = Field(None, description="Bot API file base, with base_url")
    webhook_url: str | None = Field(
        None, description="public https URL for webhook mode; unset: long polling"
    )
    webhook_listen: str = Field("127.0.0.1:8443", description="host:port the webhook serves on")
    webhook_secret: SecretStr | None = Field(
        None, description="secret token Telegram sends with each webhook call"
    )
    poll_timeout: float = Field(30.0, gt=0, le=300, description="long-poll seconds")
    silence_limit: float = Field(
        15.0,
        gt=0,
        le=600,
        description="seconds a long poll may run past poll_timeout before kioku drops it "
        "and polls again (a silent connection)",
    )
    streaming: bool = Field(False, description="edit the reply as it grows (at most once a second)")


# A Discord snowflake: 17 to 20 digits for any server made since 2015.
GUILD_ID = re.compile(r"[0-9]{15,20}")


class DiscordSettings(PlatformSettings):
    """The Discord adapter (discord.py); it starts when `token` is set."""

    token: SecretStr | None = Field(None, description="the bot token")
    api_base: str | None = Field(None, description="REST base other than Discord's (tests)")
    gateway_url: str | None = Field(None, description="gateway websocket other than Discord's")
    guilds: list[str] = Field(
        default_factory=list, description="guild ids kioku answers in; empty: every guild"
    )
    channels: list[str] = Field(
        default_factory=list, description="channel ids kioku answers in; empty: every channel"
    )
    command_guilds: list[str] = Field(
        default_factory=list,
        description="guild ids to register the slash commands in (they show at once there); "
        "empty: registered globally",
    )
    allow_mass_mentions: bool = Field(
        False, description="let replies ping @everyone, @here and roles"
    )
    silence_limit: float = Field(
        90.0,
        gt=0,
        le=600,
        description="seconds without a frame from Discord's gateway (heartbeat acks "
        "included) before kioku replaces the connection",
    )

    @field_validator("command_guilds", mode="before")
    @classmethod
    def _guild_ids(cls, value: object) -> object:
        """Ids may be written as TOML numbers; each must be a Discord snowflake."""
        if not isinstance(value, list):
            return value
        ids = [
            str(item) if isinstance(item, int) and not isinstance(item, bool) else item
            for item in value
        ]
        for item in ids:
            if not isinstance(item, str) or not GUILD_ID.fullmatch(item):
                raise ValueError(
                    f"{item!r} is not a Discord server id: give the number Discord shows with "
                    "Developer Mode on (right-click the server → Copy Server ID), "
                    'e.g. command_guilds = ["123456789012345678"]'
                )
        return ids


class SlackSettings(PlatformSettings):
    """The Slack adapter (slack-bolt); it starts when `bot_token` is set."""

    bot_token: SecretStr | None = Field(None, description="xoxb-... bot token")
    app_token: SecretStr | None = Field(None, description="xapp-... token for Socket Mode")
    signing_secret: SecretStr | None = Field(
        None, description="signing secret for HTTP Events API mode (instead of app_token)"
    )
    listen: str = Field("127.0.0.1:3000", description="host:port of HTTP mode's /slack/events")
    base_url: str | None = Field(None, description="Web API base other than Slack's (tests)")
    silence_limit: float = Field(
        40.0,
        gt=0,
        le=600,
        description="seconds without a pong on the Socket Mode websocket before kioku "
        "replaces it (pinged every quarter of this)",
    )


class MatrixSettings(PlatformSettings):
    """The Matrix adapter (matrix-nio, end-to-end encryption on); it starts when `user_id`
    is set. The first start logs in with `password` (or uses `access_token`); the session
    it gets, and the device's encryption keys, are kept under `$KIOKU_HOME/matrix/`."""

    homeserver: str | None = Field(
        None, description="the homeserver's client URL, e.g. https://matrix.example.org"
    )
    user_id: str | None = Field(None, description="the bot account, e.g. @kioku:example.org")
    access_token: SecretStr | None = Field(
        None, description="the bot's access token (or password, for a first login)"
    )
    password: SecretStr | None = Field(
        None, description="the bot's password: the first start logs in, kioku keeps the token"
    )
    device_id: str | None = Field(
        None, description="the device of access_token (its keys live in $KIOKU_HOME/matrix/)"
    )
    poll_timeout: float = Field(30.0, gt=0, le=300, description="long-poll seconds of /sync")

    @field_validator("user_id")
    @classmethod
    def _user_id(cls, value: str | None) -> str | None:
        """A Matrix user id is `@localpart:server`."""
        if value is not None and not re.fullmatch(r"@[^:\s]+:\S+", value):
            raise ValueError(
                f"{value!r} is not a Matrix user id: write it as @name:server, "
                'e.g. user_id = "@kioku:example.org"'
            )
        return value
