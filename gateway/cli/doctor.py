"""`kioku doctor`: check the whole setup and say, for each problem, how to fix it.

Exit 0 when nothing is wrong, 1 otherwise; the checks themselves are gateway/doctor/.
"""

from __future__ import annotations

import typer

from gateway.cli.common import run_async

MARKS = {"ok": "ok     ", "note": "note   ", "warning": "WARNING", "problem": "PROBLEM"}


def doctor(
    repair: bool = typer.Option(
        False,
        "--repair",
        help="First put right what a hand-edited state.db needs (kioku must be stopped): "
        "delete turns and participants of deleted sessions, recompute stale turns.body, "
        "rebuild the full-text index, set a wrong user_version; then check again.",
    ),
    online: bool | None = typer.Option(
        None,
        "--online/--offline",
        help="--online also contacts the model endpoint (its models, tools, the context a "
        "local server announces), each platform with its token and each enabled MCP server, "
        "5 s each, all at once; --offline contacts nothing. Default: online unless the "
        "daemon is running.",
    ),
) -> None:
    """Check config, credentials, permissions, the database and the service; exit 1 on problems.

    It finds what a hand edit broke in state.db, each with its fix; --repair fixes those.
    """
    from gateway.doctor.examine import examine, offline_note, online_by_default

    if repair:
        _repair()
    contact = online_by_default() if online is None else online
    if contact:
        from config.logs import configure_logging

        configure_logging("warning")  # the SDKs' and servers' chatter, on stderr
    findings = run_async(examine(online=contact))
    if not contact:
        findings.append(offline_note(online))
    for finding in findings:
        typer.echo(f"{MARKS[finding.level]} {finding.topic}: {finding.text}")
        if finding.fix:
            typer.echo(f"        fix: {finding.fix}")
    problems = sum(f.level == "problem" for f in findings)
    warnings = sum(f.level == "warning" for f in findings)
    also = f" ({warnings} warning(s))" if warnings else ""
    typer.echo(
        f"\n{problems} problem(s) found{also}." if problems else f"\nNo problems found{also}."
    )
    if problems:
        raise typer.Exit(1)


def _repair() -> None:
    """Repair state.db and say what was done, then let `doctor` check again."""
    from gateway.doctor.database import repair_database
    from gateway.instance import AlreadyRunning

    try:
        outcome = run_async(repair_database())
    except AlreadyRunning as exc:
        typer.echo(
            f"{exc}: stop it first (`systemctl --user stop kioku`, or Ctrl-C in its terminal), "
            "then run `kioku doctor --repair` again; nothing was changed",
            err=True,
        )
        raise typer.Exit(1) from None
    for line in outcome.done:
        typer.echo(f"done    {line}")
    for line in outcome.left:
        typer.echo(f"left    {line}")
    if not outcome.done and not outcome.left:
        typer.echo("done    nothing: the database needed no repair")
    typer.echo("\nChecking again:")


def register(parent: typer.Typer) -> None:
    parent.command("doctor")(doctor)
