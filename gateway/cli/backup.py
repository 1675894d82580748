"""`kioku backup`, `kioku backup verify` and `kioku restore`: printing and exit codes only.

The work is memory/backup/; this module picks the folders, shows a progress bar when
stderr is a terminal, and refuses a restore while a daemon runs on the home.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from gateway.cli.common import fail

if TYPE_CHECKING:
    from memory.backup.progress import Progress

app = typer.Typer(invoke_without_command=True, no_args_is_help=False)

STAGES = {
    "state.db": "copying state.db",
    "files": "copying notes and skills",
    "archive": "compressing",
    "verify": "checking",
}


@app.callback()
def backup(
    ctx: typer.Context,
    to: Path | None = typer.Option(
        None,
        "--to",
        help="Folder to write the archive into (default: backup.dir, else <home>/backups).",
    ),
    with_secrets: bool = typer.Option(
        False, "--with-secrets", help="Include .env (tokens and API keys) in the archive."
    ),
) -> None:
    """Back up the home while kioku runs: a consistent copy of state.db, people/, skills/ and
    config.toml (.env only with --with-secrets) in one private (0600) .tar.gz with a manifest.

    Prints the archive's path. `kioku backup verify FILE` checks one; `kioku restore FILE`
    brings it back.
    """
    if ctx.invoked_subcommand is not None:
        return
    from config.paths import kioku_home
    from memory.backup.archive import write_backup
    from memory.backup.errors import BackupError
    from memory.backup.rotation import backups_folder

    home = kioku_home()
    if to is None:
        from gateway.cli.common import settings_or_exit

        folder = backups_folder(home, settings_or_exit().backup.dir)
    else:
        folder = to.expanduser().resolve()
    try:
        with _progress_bar() as progress:
            written = write_backup(home, folder, with_secrets=with_secrets, progress=progress)
    except BackupError as exc:
        fail(f"backup failed: {exc}")
    for left in written.skipped:
        typer.echo(f"left out {left.name}: {left.why}", err=True)
    counts = written.manifest.counts
    typer.echo(
        f"{written.path}\n({len(written.manifest.files)} files, {counts.persons} persons, "
        f"{counts.sessions} sessions, {counts.turns} messages"
        f"{', with .env' if written.manifest.with_secrets else ''})"
    )


@app.command("verify")
def verify(
    archive: Path = typer.Argument(..., help="The backup archive (.tar.gz) to check."),
) -> None:
    """Check a backup: its manifest, every file's size and sha256, no extra or missing
    member, the gzip stream's CRC and length, and its state.db's layout and SQLite integrity
    check. Archives are read within limits (docs/backup.md). Exit 1 on the first problem."""
    from memory.backup.errors import BackupError
    from memory.backup.verify import verify_backup

    try:
        with _progress_bar() as progress:
            manifest = verify_backup(archive, progress=progress)
    except BackupError as exc:
        fail(f"{archive}: NOT OK: {exc}")
    counts = manifest.counts
    typer.echo(
        f"{archive}: ok (kioku {manifest.kioku_version}, schema v{manifest.schema_version}, "
        f"made {manifest.created_at}; {len(manifest.files)} files, {counts.persons} persons, "
        f"{counts.sessions} sessions, {counts.turns} messages)"
    )


def restore(
    archive: Path = typer.Argument(..., help="The backup archive (.tar.gz) to restore."),
    home: Path | None = typer.Option(
        None, "--home", help="The home to restore into (default: KIOKU_HOME, else ~/.kioku)."
    ),
    yes: bool = typer.Option(
        False,
        "--yes",
        help="Replace a home that is not empty; it is moved aside to "
        "<home>.before-restore-<time>, never deleted.",
    ),
) -> None:
    """Restore a backup into an empty or new home (or, with --yes, in place of the current
    one). kioku must be stopped. The archive is checked in full before anything changes;
    an older backup is upgraded on the next `kioku serve`."""
    from config.paths import kioku_home
    from gateway import instance
    from memory.backup.errors import BackupError
    from memory.backup.restore import check_home, restore_backup

    target = (home.expanduser() if home else kioku_home()).resolve()

    def not_running() -> None:
        holder = instance.running(target)
        if holder is not None:
            raise BackupError(
                f"{holder}: stop it first (`systemctl --user stop kioku`, or Ctrl-C in its "
                "terminal), then restore again"
            )

    try:
        check_home(target)
        not_running()
        with _progress_bar() as progress:
            restored = restore_backup(
                archive, target, replace=yes, guard=not_running, progress=progress
            )
    except BackupError as exc:
        fail(f"restore refused: {exc}. Nothing was changed.")
    if restored.moved_aside is not None:
        typer.echo(f"the previous home is now {restored.moved_aside}")
    counts = restored.manifest.counts
    typer.echo(
        f"restored {archive} into {restored.home} ({counts.persons} persons, "
        f"{counts.sessions} sessions, {counts.turns} messages; made {restored.manifest.created_at})"
    )


class _progress_bar:
    """A rich progress bar on stderr while it is a terminal; otherwise a no-op callback."""

    def __enter__(self) -> Progress:
        import sys

        from memory.backup.progress import no_progress

        if not sys.stderr.isatty():
            self.bar = None
            return no_progress
        from rich.console import Console
        from rich.progress import Progress as Bar

        self.bar = Bar(console=Console(stderr=True), transient=True)
        self.bar.start()
        tasks: dict[str, object] = {}

        def advance(stage: str, done: int, total: int) -> None:
            assert self.bar is not None
            if stage not in tasks:
                tasks[stage] = self.bar.add_task(STAGES.get(stage, stage), total=total)
            self.bar.update(tasks[stage], completed=done, total=total)  # type: ignore[arg-type]

        return advance

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="backup")
    parent.command("restore")(restore)
