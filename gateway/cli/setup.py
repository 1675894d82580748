"""`kioku setup`: from a fresh install to the owner talking to their bot.

The interactive wizard (gateway/setup/wizard.py), `--non-interactive` for scripts, and
`--claim-owner PLATFORM` alone. Every answer may also come from a flag or from the
`KIOKU_…` variable the daemon reads (shown in `--help`). Ctrl-C leaves without writing.
"""

from __future__ import annotations

import json
import os
from typing import Any

import typer

from gateway.cli.common import EXIT_USAGE, fail

SETTING_OF: dict[str, str] = {}
"""Each setting option's flag → the setting it gives (llm.provider…), filled by `_option`."""


def _option(flag: str, key: str, text: str) -> Any:
    """An option giving setting `key`, also read from the variable the daemon reads."""
    SETTING_OF[flag] = key
    name = "KIOKU_" + key.upper().replace(".", "__")
    return typer.Option(None, flag, envvar=name, help=f"{text} ({key}).", show_envvar=True)


POLICY = "pairing, allowlist, open or disabled"
NON_INTERACTIVE = typer.Option(
    False, "--non-interactive", help="Take the answers from flags and KIOKU_… variables."
)
CLAIM_OWNER = typer.Option(
    None,
    "--claim-owner",
    metavar="PLATFORM",
    help="Only find the owner: print one line `code: <six letters and digits>`, wait for a DM "
    "carrying it, add its sender to owner.identities.",
)
TIMEOUT = typer.Option(
    300.0, "--timeout", min=1, max=3600, help="Seconds to wait for the owner's DM."
)
OWNER = typer.Option(
    None,
    "--owner",
    help="An identity of the owner, e.g. telegram:123 (repeatable; or "
    'KIOKU_OWNER__IDENTITIES=["telegram:123"]).',
)


def setup(
    ctx: typer.Context,
    non_interactive: bool = NON_INTERACTIVE,
    claim_owner: str | None = CLAIM_OWNER,
    timeout: float = TIMEOUT,
    provider: str | None = _option(
        "--provider", "llm.provider", "anthropic, openai, or a preset: ollama, lmstudio, openrouter"
    ),
    model: str | None = _option("--model", "llm.model", "the model"),
    base_url: str | None = _option("--base-url", "llm.base_url", "the model's endpoint"),
    api_key: str | None = _option("--api-key", "llm.api_key", "the model's key"),
    telegram_token: str | None = _option("--telegram-token", "telegram.token", "bot token"),
    telegram_base_url: str | None = _option(
        "--telegram-base-url", "telegram.base_url", "Bot API server"
    ),
    telegram_base_file_url: str | None = _option(
        "--telegram-base-file-url", "telegram.base_file_url", "Bot API file server"
    ),
    telegram_dm_policy: str | None = _option("--telegram-dm-policy", "telegram.dm_policy", POLICY),
    discord_token: str | None = _option("--discord-token", "discord.token", "bot token"),
    discord_api_base: str | None = _option("--discord-api-base", "discord.api_base", "REST base"),
    discord_gateway_url: str | None = _option(
        "--discord-gateway-url", "discord.gateway_url", "gateway websocket"
    ),
    discord_dm_policy: str | None = _option("--discord-dm-policy", "discord.dm_policy", POLICY),
    slack_bot_token: str | None = _option("--slack-bot-token", "slack.bot_token", "xoxb-…"),
    slack_app_token: str | None = _option("--slack-app-token", "slack.app_token", "xapp-…"),
    slack_base_url: str | None = _option("--slack-base-url", "slack.base_url", "Web API base"),
    slack_dm_policy: str | None = _option("--slack-dm-policy", "slack.dm_policy", POLICY),
    matrix_homeserver: str | None = _option(
        "--matrix-homeserver", "matrix.homeserver", "client URL, e.g. https://matrix.example.org"
    ),
    matrix_user_id: str | None = _option("--matrix-user-id", "matrix.user_id", "@kioku:server"),
    matrix_password: str | None = _option(
        "--matrix-password", "matrix.password", "logged in with once, never written"
    ),
    matrix_dm_policy: str | None = _option("--matrix-dm-policy", "matrix.dm_policy", POLICY),
    timezone: str | None = _option(
        "--timezone", "schedule.default_timezone", "the owner's time zone"
    ),
    owner: list[str] | None = OWNER,
) -> None:
    """Set kioku up: model, platforms, the owner's identity, who may talk; checked online."""
    from config.logs import configure_logging
    from config.paths import kioku_home

    # The platform libraries log while the owner claim listens (discord.py even warns
    # about voice): the wizard says itself what went wrong, so only errors pass.
    configure_logging("error")
    home = kioku_home()
    if claim_owner is not None:
        from gateway.setup.scripted import claim_owner as claim

        claim(home, claim_owner, timeout)
        return
    given = _given(ctx)
    _check_policies(given)
    if non_interactive:
        from gateway.setup.scripted import non_interactive as run_scripted

        run_scripted(home, given)
        return
    _interactive(home, given, timeout)


def _given(ctx: typer.Context) -> dict[str, Any]:
    """The settings given by an option (or its variable), by setting key: the setting
    options are read together from the command's parameters, as click parsed them."""
    flags = {
        SETTING_OF[param.opts[0]]: ctx.params[param.name]
        for param in ctx.command.params
        if param.opts[0] in SETTING_OF and param.name is not None
    }
    flags["owner.identities"] = ctx.params["owner"] or _owner_from_environment()
    return {key: value for key, value in flags.items() if value}


def _owner_from_environment() -> list[str] | None:
    raw = os.environ.get("KIOKU_OWNER__IDENTITIES")
    if not raw:
        return None
    try:
        identities = json.loads(raw)
    except json.JSONDecodeError:
        fail('KIOKU_OWNER__IDENTITIES must be a JSON list, e.g. ["telegram:123"]', EXIT_USAGE)
    if not isinstance(identities, list):
        fail('KIOKU_OWNER__IDENTITIES must be a JSON list, e.g. ["telegram:123"]', EXIT_USAGE)
    return [str(identity) for identity in identities]


def _check_policies(given: dict[str, Any]) -> None:
    from gateway.identity import InvalidIdentity, validate_identity
    from gateway.setup.spec import POLICIES

    for key, value in given.items():
        if key.endswith(".dm_policy") and value not in POLICIES:
            fail(f"{key}: {value!r} is not one of {', '.join(POLICIES)}", EXIT_USAGE)
    for identity in given.get("owner.identities", []):
        try:
            validate_identity(identity)
        except InvalidIdentity as exc:
            fail(f"owner.identities: {exc}", EXIT_USAGE)


def _interactive(home: Any, given: dict[str, Any], within: float) -> None:
    """The wizard; Ctrl-C (click's Abort) anywhere leaves with nothing written, exit 130."""
    import click

    from gateway.setup import finish
    from gateway.setup.files import current
    from gateway.setup.wizard import Wizard

    typer.echo(
        "kioku setup — each answer is checked as you go; nothing is written until you say so.\n"
        "Ctrl-C leaves at any point without writing anything."
    )
    try:
        wizard = Wizard(home, current(home), given, within)
        wizard.model()
        wizard.platforms()
        wizard.owner()
        wizard.access()
        finish.write(home, wizard.current, wizard.values)
        finish.finish(wizard.bots)
    except (click.exceptions.Abort, KeyboardInterrupt):
        typer.echo("\nLeft kioku setup; nothing was written.", err=True)
        raise typer.Exit(130) from None


def register(parent: typer.Typer) -> None:
    parent.command("setup")(setup)
