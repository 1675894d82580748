"""`kioku service install`: a systemd unit for this very install, and what to run next."""

from __future__ import annotations

import os

import typer

from gateway.cli.common import EXIT_USAGE, fail, settings_or_exit

app = typer.Typer(help="Run kioku as a systemd service.", no_args_is_help=True)


@app.command("install")
def install(
    user: bool = typer.Option(False, "--user", help="A user unit for this account (default)."),
    system: bool = typer.Option(False, "--system", help="A system unit run by user `kioku`."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the unit and its path only."),
) -> None:
    """Write the systemd unit for this install and print the next steps."""
    if user and system:
        fail("Choose one of --user and --system.", EXIT_USAGE)
    from gateway.service_units import next_steps, render, this_install, unit_path, write_unit

    spec = this_install(settings_or_exit(), system=system)
    path = unit_path(system=system)
    text = render(spec)
    if dry_run:
        typer.echo(f"# {path}")
        typer.echo(text, nl=False)
        return
    if system and os.geteuid() != 0:
        fail(
            f"Writing {path} needs root: run `sudo {spec.executable} service install --system`,"
            " or use --user for a unit of your own account."
        )
    try:
        write_unit(path, text)
    except OSError as exc:
        fail(f"Cannot write {path}: {exc.strerror}. Check the folder's permissions and retry.")
    typer.echo(f"Wrote {path}.")
    typer.echo("Next:")
    for step in next_steps(spec):
        typer.echo(f"  {step}")


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="service")
