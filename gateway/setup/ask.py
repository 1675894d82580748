"""The wizard's questions: plain click prompts with defaults, readable in any terminal and
under a pseudo-terminal (tests), secrets typed without echo. Ctrl-C in any of them raises
`click.exceptions.Abort`, which the command turns into "nothing written"."""

from __future__ import annotations

from collections.abc import Sequence

import click
import typer

from gateway.doctor.online import Verdict


def heading(number: int, title: str) -> None:
    typer.echo(f"\n== {number}. {title} ==")


def say(text: str = "") -> None:
    typer.echo(text)


def choose(question: str, choices: Sequence[str], default: str) -> str:
    """One of `choices`, `default` on Enter."""
    answer: str = click.prompt(
        question, default=default, type=click.Choice(list(choices)), show_choices=True
    )
    return answer


def text(question: str, default: str | None = None) -> str:
    answer: str = click.prompt(question, default=default, show_default=default is not None)
    return answer.strip()


def secret(question: str, optional: bool = False) -> str:
    """A token or key, not echoed; with `optional`, Enter gives ""."""
    answer: str = click.prompt(
        question, hide_input=True, default="" if optional else None, show_default=False
    )
    return answer.strip()


def yes(question: str, default: bool) -> bool:
    return bool(click.confirm(question, default=default))


def pick(question: str, options: Sequence[str], default: str) -> str:
    """One of a numbered list (many models): its number or its name."""
    for number, option in enumerate(options, 1):
        say(f"  {number:>2}) {option}")
    while True:
        answer = text(question, default)
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            return options[int(answer) - 1]
        if answer in options or answer == default:
            return answer
        say(f"  ✗ {answer!r} is not in the list: give its number or its exact name")


def verdict(found: Verdict) -> None:
    """One line for a check: ✓ and what was found, or ✗, what is wrong and what to do."""
    if found.ok:
        say(f"  ✓ {found.text}")
    else:
        say(f"  ✗ {found.text}: {found.fix}" if found.fix else f"  ✗ {found.text}")
