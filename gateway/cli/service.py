"""`kioku service install`: a systemd unit for this very install, and what to run next."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import typer

from gateway.cli.common import EXIT_USAGE, fail, settings_or_exit

if TYPE_CHECKING:
    from config.settings import Settings
    from gateway.service_units import UnitSpec

app = typer.Typer(help="Run kioku as a systemd service.", no_args_is_help=True)


@app.command("install")
def install(
    user: bool = typer.Option(False, "--user", help="A user unit for this account (default)."),
    system: bool = typer.Option(
        False, "--system", help="A system unit run by user `kioku`: set up as root, else printed."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print, change nothing."),
) -> None:
    """Write the systemd unit for this install and print the next steps."""
    if user and system:
        fail("Choose one of --user and --system.", EXIT_USAGE)
    from gateway.service_units import render, this_install

    settings = settings_or_exit()
    spec = this_install(settings, system=system)
    _warn(settings, spec)
    if system:
        _install_system(settings, spec, render(spec), dry_run=dry_run)
    else:
        _install_user(render(spec), dry_run=dry_run)


def _install_user(text: str, *, dry_run: bool) -> None:
    from gateway.service_units import unit_path, user_next_steps, write_unit

    path = unit_path(system=False)
    if dry_run:
        typer.echo(f"# {path}")
        typer.echo(text, nl=False)
        return
    try:
        write_unit(path, text)
    except OSError as exc:
        fail(f"Cannot write {path}: {exc.strerror}. Check the folder's permissions and retry.")
    typer.echo(f"Wrote {path}.")
    _next(user_next_steps())


def _install_system(settings: Settings, spec: UnitSpec, text: str, *, dry_run: bool) -> None:
    from subprocess import CalledProcessError

    from gateway.service_recipe import code_paths, first_blocked, run_steps, system_recipe

    steps = system_recipe(spec, text, settings.home)
    blocked = first_blocked(code_paths(spec.executable))
    unreadable = (
        f"The `kioku` user cannot read kioku's code at {blocked[0]}: {blocked[1]} is mode"
        f" {blocked[2]:04o}. Install kioku where every user can read it (e.g. /opt/kioku,"
        " see deploy/kioku.service) and run that install's `kioku service install --system`."
        if blocked
        else None
    )
    root = os.geteuid() == 0
    if dry_run or not root:
        if unreadable:
            typer.echo(f"warning: {unreadable}", err=True)
        typer.echo("# As root, `kioku service install --system` runs these commands:")
        for step in steps:
            typer.echo(step.shell(sudo=not root))
        _next(_system_after(spec, sudo=not root))
        return
    if unreadable:
        fail(unreadable)
    try:
        skipped = run_steps(steps, typer.echo)
    except CalledProcessError as exc:
        fail(f"`{' '.join(exc.cmd)}` failed (exit {exc.returncode}); nothing after it was run.")
    if skipped:
        typer.echo("systemd is not running here; once it is, run:")
        for step in skipped:
            typer.echo(f"  {step.shell(sudo=False)}")
    _next(_system_after(spec, sudo=True))


def _system_after(spec: UnitSpec, *, sudo: bool) -> list[str]:
    admin = f"sudo -u kioku KIOKU_HOME={spec.home} {spec.executable}"
    return [
        f"{admin} doctor   # checks the service's setup",
        f"{admin} pairing …   # every admin command, on the service's home",
        f"{'sudo ' if sudo else ''}journalctl -u kioku -f   # its log",
    ]


def _warn(settings: Settings, spec: UnitSpec) -> None:
    """What the unit will lack: MCP programs not found, folders the `kioku` user cannot
    reach, settings that exist only in this shell."""
    from pathlib import Path

    from gateway.service_mcp import mcp_needs
    from gateway.service_recipe import blocked_for_others, shell_only_secrets

    needs = mcp_needs(settings.mcp)
    for command in needs.unresolved:
        typer.echo(
            f"warning: MCP command `{command}` is not on this shell's PATH, so the unit's PATH"
            " will not have it either: install it, or give its absolute path in [mcp].",
            err=True,
        )
    if spec.system:
        for path in map(Path, (*needs.folders, *needs.command_dirs)):
            blocked = blocked_for_others(path)
            if blocked:
                typer.echo(
                    f"warning: the `kioku` user cannot reach {path}, which an MCP server uses:"
                    f" {blocked[0]} is mode {blocked[1]:04o}. Open it to that user (for"
                    f" instance `setfacl -m u:kioku:rx {blocked[0]}`) or move the folder.",
                    err=True,
                )
    home = Path(spec.home.replace("%h", str(Path.home())))
    names = shell_only_secrets(os.environ, [home / ".env", settings.home / ".env"])
    if names:
        typer.echo(
            f"warning: this shell sets {', '.join(names)}, which the service will not see:"
            f" put them in {home / '.env'} (mode 0600; a provider's key as"
            " KIOKU_LLM__API_KEY=…).",
            err=True,
        )


def _next(steps: list[str]) -> None:
    typer.echo("Next:")
    for step in steps:
        typer.echo(f"  {step}")


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="service")
