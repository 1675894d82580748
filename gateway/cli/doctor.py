"""`kioku doctor`: check the whole setup and say, for each problem, how to fix it.

Exit 0 when nothing is wrong, 1 otherwise; the checks themselves are gateway/checkup.py.
"""

from __future__ import annotations

import typer

from gateway.cli.common import run_async

MARKS = {"ok": "ok     ", "note": "note   ", "problem": "PROBLEM"}


def doctor() -> None:
    """Check config, credentials, permissions, the database and the service; exit 1 on problems."""
    from gateway.checkup import examine

    findings = run_async(examine())
    for finding in findings:
        typer.echo(f"{MARKS[finding.level]} {finding.topic}: {finding.text}")
        if finding.fix:
            typer.echo(f"        fix: {finding.fix}")
    problems = sum(f.level == "problem" for f in findings)
    typer.echo(f"\n{problems} problem(s) found." if problems else "\nNo problems found.")
    if problems:
        raise typer.Exit(1)


def register(parent: typer.Typer) -> None:
    parent.command("doctor")(doctor)
