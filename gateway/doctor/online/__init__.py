"""Online checks: ask the real service whether a key or token works, and what it names.

Shared by `kioku setup` and `kioku doctor --online` (findings.py turns verdicts into the
doctor's findings). Each check is a coroutine that never raises for a refused credential
or an unreachable endpoint: it returns a `Verdict` saying what was found, or what is wrong
and what to do about it. Nothing here prints or prompts, and no credential ever appears in
a verdict or a log line.

- `gateway.doctor.online.models`: a model key (Anthropic, OpenAI-compatible), its models.
- `gateway.doctor.online.platforms`: Telegram, Discord and Slack tokens, with the bot's name.
"""

from __future__ import annotations

from dataclasses import dataclass

TIMEOUT = 15.0
"""Seconds a check waits for the service before saying it cannot be reached."""


@dataclass(frozen=True)
class Verdict:
    """What one check found. `ok`: the credential works; `text`: what was found (the bot's
    name, how many models) or what is wrong; `fix`: the next step when not ok."""

    ok: bool
    text: str
    fix: str = ""


@dataclass(frozen=True)
class ModelVerdict(Verdict):
    """A model endpoint's verdict, with the model ids it offers (empty when not ok)."""

    models: tuple[str, ...] = ()


@dataclass(frozen=True)
class BotVerdict(Verdict):
    """A platform token's verdict: the bot's display `name` and platform `user_id`, and
    for Slack its workspace `team` (empty when not ok) and the `scopes` Slack says the
    token has (None when it said nothing)."""

    name: str = ""
    user_id: str = ""
    team: str = ""
    scopes: frozenset[str] | None = None
