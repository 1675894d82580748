"""`kioku setup` without a person at the keyboard: `--non-interactive` and `--claim-owner`.

`--non-interactive` takes every answer from flags and the `KIOKU_…` variables the daemon
reads, tries each credential online as the wizard does, and writes the same files (all
the settings given, endpoints included, so `kioku serve` needs no environment after it).
`--claim-owner PLATFORM` is the wizard's owner step alone. Both exit 1 naming what is
wrong, with nothing written.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from gateway.cli.common import fail, run_async
from gateway.setup.files import env_name, plan
from gateway.setup.spec import CREDENTIAL, PLATFORMS, PRESET


def non_interactive(home: Path, given: Mapping[str, Any]) -> None:
    """Validate `given` against the services and write it; exit 1 naming what is wrong."""
    values = dict(given)
    if not values:
        fail(
            "kioku setup --non-interactive: no answers given; set the KIOKU_… variables or "
            "pass flags (`kioku setup --help` lists them)"
        )
    problems = _offline_problems(values)
    if not problems:
        from gateway.setup.validate import check_all

        for checked in run_async(check_all(values)):
            verdict = checked.verdict
            if not verdict.ok:
                problems.append(
                    f"{checked.what} ({env_name(checked.what)}): {verdict.text}; {verdict.fix}"
                )
                continue
            models = getattr(verdict, "models", ())
            if models and values.setdefault("llm.model", models[0]) not in models:
                problems.append(
                    f"llm.model (KIOKU_LLM__MODEL): {values['llm.model']!r} is not offered "
                    f"there; choose one of {', '.join(models[:10])}"
                )
    if not problems and values.get("matrix.user_id"):
        problems += _matrix_login(home, values)
    values.pop("matrix.password", None)  # logged in with; the kept session replaces it
    if problems:
        fail("kioku setup: nothing written:\n" + "\n".join(f"  - {p}" for p in problems))
    planned = plan(home, values)
    written = planned.write()
    typer.echo(planned.diff() or "Nothing to change.")
    if written:
        typer.echo(f"Wrote {', '.join(str(p) for p in written)} (mode 0600; previous as *.bak).")


def _matrix_login(home: Path, values: Mapping[str, Any]) -> list[str]:
    """Log in to Matrix as the wizard does (the session kept, the password not); what is wrong."""
    from gateway.setup.matrix import matrix_login

    verdict = run_async(
        matrix_login(
            home,
            str(values.get("matrix.homeserver") or ""),
            str(values["matrix.user_id"]),
            values.get("matrix.password"),
        )
    )
    if verdict.ok:
        typer.echo(f"Matrix: logged in as {verdict.text}.")
        return []
    return [f"matrix.user_id (KIOKU_MATRIX__USER_ID): {verdict.text}; {verdict.fix}"]


def _offline_problems(values: dict[str, Any]) -> list[str]:
    """What is wrong before asking any service: a missing model endpoint or a half-set Slack."""
    problems = []
    preset = PRESET.get(str(values.get("llm.provider", "")))
    if preset is not None:  # a preset's name as the provider: its endpoint, the real provider
        values["llm.provider"] = preset.provider
        values.setdefault("llm.base_url", preset.base_url)
    if values.get("llm.provider") == "openai" and not values.get("llm.base_url"):
        problems.append(
            "llm.base_url (KIOKU_LLM__BASE_URL, --base-url): an OpenAI-compatible provider "
            "needs its endpoint, e.g. http://127.0.0.1:11434/v1"
        )
    if "llm.api_key" in values:
        values.setdefault("llm.provider", "anthropic")
    if values.get("slack.app_token") and not values.get("slack.bot_token"):
        problems.append("slack.bot_token (KIOKU_SLACK__BOT_TOKEN): the app token needs it")
    if values.get("schedule.default_timezone"):
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(values["schedule.default_timezone"])
        except (ZoneInfoNotFoundError, ValueError, OSError):
            problems.append(
                "schedule.default_timezone (KIOKU_SCHEDULE__DEFAULT_TIMEZONE): not a time "
                "zone; give an IANA name such as Europe/Paris"
            )
    return problems


def claim_owner(home: Path, platform: str, within: float) -> None:
    """Print `code: ` and a one-time code (e.g. `code: 7P42GW`), wait for the DM carrying
    it, add its sender to `owner.identities`; exit 1 on timeout with nothing written."""
    from config.load import ConfigError, load_settings
    from gateway.owner_claims import new_code
    from gateway.setup.claim import claim_through_daemon, daemon_serves, listen, reload_daemon
    from gateway.setup.files import current

    if platform not in PLATFORMS:
        fail(f"--claim-owner takes {', '.join(PLATFORMS)}, not {platform!r}", 2)
    try:
        settings = load_settings()
    except ConfigError as exc:
        fail(str(exc))
    section = getattr(settings, platform)
    if getattr(section, CREDENTIAL[platform].split(".")[1]) is None:
        fail(f"{platform} is not set up ({env_name(CREDENTIAL[platform])}): run `kioku setup`")
    code = new_code()

    def waiting() -> None:  # once a DM carrying the code counts
        typer.echo(f"code: {code}")
        sys.stdout.flush()
        print(
            f"Send {code} to the bot in a direct message on {platform} within {within:g} s.",
            file=sys.stderr,
            flush=True,
        )

    through_daemon = daemon_serves(home, platform)
    if through_daemon:
        identity = claim_through_daemon(home, platform, code, within, waiting)
    else:
        identity = run_async(listen(platform, section, code, within, _noticed(code), waiting))
    if identity is None:
        fail(
            f"No direct message carrying {code} reached the bot on {platform} in {within:g} s; "
            "nothing written. Run this again and send the new code to the bot itself."
        )
    owners = list(current(home).get("owner.identities") or [])
    if identity not in owners:
        plan(home, {"owner.identities": [*owners, identity]}).write()
    typer.echo(f"owner: {identity}")
    if through_daemon:
        reload_daemon(home)


def _noticed(code: str) -> Any:
    def noticed(identity: str) -> None:
        print(f"A message without {code} came from {identity}.", file=sys.stderr, flush=True)

    return noticed
