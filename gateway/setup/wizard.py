"""`kioku setup`, the interactive wizard: model, platforms, the owner, who may talk, write.

Every answer that names a credential is tried against the real service before the next
question; nothing is written until the person has seen the diff and said yes, so Ctrl-C
anywhere leaves the files as they were. On a re-run each section already configured
offers keep / change / remove.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gateway.cli.common import run_async
from gateway.setup import ask
from gateway.setup.spec import (
    CREDENTIAL,
    ENDPOINTS,
    MATRIX_WHERE,
    PLATFORMS,
    POLICIES,
    POLICY_HELP,
    PRESET,
    PRESETS,
    SECTION,
    WHERE,
    Section,
    preset_of,
)

TITLES = {"telegram": "Telegram", "discord": "Discord", "slack": "Slack"}


@dataclass
class Wizard:
    """The answers so far (`values`, starting from the files), what flags and the
    environment gave (`given`), and how long an owner claim waits (`within`)."""

    home: Path
    current: dict[str, Any]
    given: dict[str, Any]
    within: float
    values: dict[str, Any] = field(default_factory=dict)
    bots: dict[str, str] = field(default_factory=dict)
    changed: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.values = dict(self.current)

    # -- the steps ---------------------------------------------------------------------------

    def model(self) -> None:
        ask.heading(1, "Model")
        if self._decide(SECTION["model"], None) != "change":
            return
        preset = PRESET[ask.choose("Provider", [p.name for p in PRESETS], preset_of(self.values))]
        base_url = self.given.get("llm.base_url") or preset.base_url
        if base_url is None:
            base_url = ask.text("Base URL (ending in /v1)", self.values.get("llm.base_url"))
        ask.say(f"  Key: {preset.where}.")
        key = self.given.get("llm.api_key")
        while True:
            if key is None:
                label = "API key" if preset.needs_key else "API key (Enter for none)"
                key = ask.secret(label, optional=not preset.needs_key) or None
            answer = {"llm.provider": preset.provider, "llm.base_url": base_url, "llm.api_key": key}
            from gateway.setup.validate import check_model

            checked = run_async(check_model(answer))
            ask.verdict(checked.verdict)
            if checked.verdict.ok:
                break
            key = None
            if preset.provider == "openai" and "reach" in checked.verdict.text:
                base_url = ask.text("Base URL (ending in /v1)", base_url)
        models = list(checked.verdict.models)  # type: ignore[attr-defined]
        now = self.values.get("llm.model")
        answer["llm.model"] = ask.pick("Model", models, now if now in models else models[0])
        self._set(answer)

    def platforms(self) -> None:
        ask.heading(2, "Platforms (each optional)")
        for platform in PLATFORMS:
            section = SECTION[platform]
            if self._decide(section, f"Connect {TITLES[platform]}?") == "change":
                self._platform(platform)
        if self._decide(SECTION["matrix"], "Connect Matrix?") == "change":
            self._matrix()

    def owner(self) -> None:
        ask.heading(3, "You, the owner")
        ask.say("kioku finds your identity on each platform: send the bot a one-time code.")
        if self._decide(SECTION["owner"], None) != "change":
            return
        kept = [i for i in self.values.get("owner.identities") or [] if i in self.given_owner]
        for platform in self._connected():
            if not ask.yes(f"Find your {TITLES[platform]} identity now?", True):
                continue
            identity = self._claim(platform)
            if identity is not None:
                kept = [i for i in kept if i != identity] + [identity]
        self._set({"owner.identities": kept or None})

    def access(self) -> None:
        ask.heading(4, "Who may talk to kioku")
        ask.say(POLICY_HELP)
        for platform in self._connected():
            if platform in self.changed:
                key = f"{platform}.dm_policy"
                now = self.values.get(key) or "pairing"
                self._set({key: ask.choose(TITLES[platform], POLICIES, now)})
        if self._decide(SECTION["timezone"], None) == "change":
            self._timezone()

    # -- helpers -----------------------------------------------------------------------------

    @property
    def given_owner(self) -> list[str]:
        return list(self.given.get("owner.identities") or [])

    def _decide(self, section: Section, offer: str | None) -> str:
        """keep / change / remove for a configured section; for a new one `change`, or
        (with `offer`, an optional platform) what the person says to the offer."""
        present = {key: self.values[key] for key in section.keys if self.values.get(key)}
        if not present:
            if offer is None or ask.yes(offer, False):
                return "change"
            return "keep"
        ask.say(f"{section.title} now: {_summary(present)}")
        decision = ask.choose(f"{section.title}", ("keep", "change", "remove"), "keep")
        if decision == "remove":
            self._set(dict.fromkeys(section.keys))
        return decision

    def _set(self, answers: Mapping[str, Any]) -> None:
        for key, value in answers.items():
            self.values[key] = value
            self.changed.add(key.split(".")[0])

    def _connected(self) -> list[str]:
        return [p for p in PLATFORMS if self.values.get(CREDENTIAL[p])]

    def _platform(self, platform: str) -> None:
        for line in WHERE[platform]:
            ask.say(f"  {line}")
        if platform == "slack":
            _slack_manifest()
        answer = {key: self.given.get(key) for key in ENDPOINTS[platform]}
        tokens = [CREDENTIAL[platform]] + (["slack.app_token"] if platform == "slack" else [])
        from gateway.setup.validate import check_platform

        first = True
        while True:
            for key in tokens:
                given = self.given.get(key) if first else None
                answer[key] = given or ask.secret(_label(key))
            first = False
            found = run_async(check_platform(platform, answer))
            for checked in found:
                ask.verdict(checked.verdict)
            if all(checked.verdict.ok for checked in found):
                break
        bot = found[0].verdict
        self.bots[platform] = bot.name  # type: ignore[attr-defined]
        if platform == "discord":
            from gateway.doctor.online.platforms import discord_invite_url

            ask.say(f"  Invite it to a server: {discord_invite_url(bot.user_id)}")  # type: ignore[attr-defined]
        self._set(answer)

    def _matrix(self) -> None:
        """The homeserver, the bot's user id and its password, logged in with at once (the
        session kept in $KIOKU_HOME/matrix/, the password nowhere)."""
        from gateway.setup.matrix import matrix_login

        for line in MATRIX_WHERE:
            ask.say(f"  {line}")
        given = self.given
        homeserver = self.values.get("matrix.homeserver") or "https://"
        user_id = self.values.get("matrix.user_id")
        while True:  # a refused login asks again, the last answers as defaults
            homeserver = given.get("matrix.homeserver") or ask.text("Homeserver URL", homeserver)
            user_id = given.get("matrix.user_id") or ask.text(
                "kioku's user id (@name:server)", user_id
            )
            password = given.get("matrix.password") or ask.secret("Its password")
            given = {}
            verdict = run_async(matrix_login(self.home, homeserver, user_id, password))
            ask.verdict(verdict)
            if verdict.ok:
                break
        self._set({"matrix.homeserver": homeserver, "matrix.user_id": user_id})
        now = self.values.get("matrix.dm_policy") or "pairing"
        self._set({"matrix.dm_policy": ask.choose("Matrix", POLICIES, now)})

    def _claim(self, platform: str) -> str | None:
        """The identity that sent a fresh code to the bot; None if the person gives up."""
        from gateway.owner_claims import new_code
        from gateway.setup.claim import claim_through_daemon, daemon_serves, listen, section_of

        bot = self.bots.get(platform) or f"your {TITLES[platform]} bot"
        while True:
            code = new_code()

            def waiting(code: str = code) -> None:  # once a DM carrying the code counts
                ask.say(f"  Send this code to {bot} in a direct message: {code}")
                ask.say(f"  (waiting up to {self.within:g} s)")

            if daemon_serves(self.home, platform):
                identity = claim_through_daemon(self.home, platform, code, self.within, waiting)
            else:
                section = section_of(platform, self.values)
                identity = run_async(
                    listen(platform, section, code, self.within, _noticed(code), waiting)
                )
            if identity is not None:
                ask.say(f"  ✓ you are {identity}")
                return identity
            ask.say(
                f"  ✗ no direct message carrying {code} reached {bot} in {self.within:g} s: "
                "write to the bot itself (not a group), the code alone is enough"
            )
            if not ask.yes("Try again?", True):
                ask.say(f"  Later: `kioku setup --claim-owner {platform}`.")
                return None

    def _timezone(self) -> None:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        from memory.schedule.timezones import server_zone

        now = self.values.get("schedule.default_timezone") or getattr(server_zone(), "key", "UTC")
        while True:
            zone = ask.text("Your time zone (IANA name, e.g. Europe/Paris)", now)
            try:
                ZoneInfo(zone)
            except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder's name
                ask.say(f"  ✗ {zone!r} is not a time zone: give a name such as Asia/Tokyo")
                continue
            self._set({"schedule.default_timezone": zone})
            return


def _noticed(code: str) -> Any:
    def noticed(identity: str) -> None:
        ask.say(f"  a message without the code came from {identity}: send {code} itself")

    return noticed


def _slack_manifest() -> None:
    """The app manifest to paste into Slack (its slash commands, scopes and events), as
    docs/slack.md shows it."""
    from adapters.slack.manifest import manifest_yaml
    from gateway.commands.builtin import SLASH_COMMANDS

    ask.say("  The manifest to paste (Socket Mode; docs/slack.md says what HTTP mode changes):")
    ask.say("---")
    ask.say(manifest_yaml(SLASH_COMMANDS.menu()).rstrip("\n"))
    ask.say("---")


def _label(key: str) -> str:
    return {
        "telegram.token": "Bot token",
        "discord.token": "Bot token",
        "slack.bot_token": "Bot token (xoxb-…)",
        "slack.app_token": "App token (xapp-…)",
    }[key]


def _summary(present: Mapping[str, Any]) -> str:
    from gateway.setup.files import SECRETS

    return ", ".join(
        f"{key.split('.', 1)[1]}={'(set)' if key in SECRETS else value}"
        for key, value in present.items()
    )
