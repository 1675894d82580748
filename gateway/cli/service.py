"""`kioku service install`: a systemd unit for this very install, and what to run next."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import typer

from gateway.cli.common import EXIT_USAGE, fail, settings_or_exit

if TYPE_CHECKING:
    from config.settings import Settings
    from gateway.service.units import UnitSpec

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
    from gateway.service.units import render, this_install

    settings = settings_or_exit()
    spec = this_install(settings, system=system)
    _warn(settings, spec)
    if system:
        _install_system(settings, spec, render(spec), dry_run=dry_run)
    else:
        _install_user(render(spec), dry_run=dry_run)


def _install_user(text: str, *, dry_run: bool) -> None:
    from gateway.service.units import unit_path, user_next_steps, write_unit

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

    from gateway.service.install import system_after, unreadable_code
    from gateway.service.recipe import run_steps, system_recipe

    steps = system_recipe(spec, text, settings.home)
    unreadable = unreadable_code(spec)
    root = os.geteuid() == 0
    if dry_run or not root:
        if unreadable:
            typer.echo(f"warning: {unreadable}", err=True)
        typer.echo("# As root, `kioku service install --system` runs these commands:")
        for step in steps:
            typer.echo(step.shell(sudo=not root))
        _next(system_after(spec, sudo=not root))
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
    _next(system_after(spec, sudo=True))


def _warn(settings: Settings, spec: UnitSpec) -> None:
    """What the unit will lack, on stderr."""
    from gateway.service.install import unit_warnings

    for warning in unit_warnings(settings, spec):
        typer.echo(f"warning: {warning}", err=True)


def _next(steps: list[str]) -> None:
    typer.echo("Next:")
    for step in steps:
        typer.echo(f"  {step}")


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="service")
