"""`kioku chat --attach FILE` and `/attach PATH`: files go to the daemon as bytes and
arrive whole; a file that cannot go is refused before anything is sent (exit 2)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from adapters.cli.protocol import CHUNK_BYTES, MAX_ATTACHMENTS
from tests.helpers.echo_socket import echo_process
from tests.helpers.terminal import on_terminal

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def echo(home: Path) -> Iterator[Path]:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = home / "gateway.sock"
    with echo_process(path):
        yield path


def seen(name: str, kind: str, mime: str, data: bytes) -> str:
    """How the echo gateway names a file it received."""
    digest = hashlib.sha256(data).hexdigest()[:12]
    return f"[{kind} {name} {mime} {len(data)} bytes sha256:{digest}]"


def test_attached_files_arrive_whole_with_the_message(
    echo: Path, kioku: Run, tmp_path: Path
) -> None:
    photo, notes = tmp_path / "receipt.jpg", tmp_path / "メモ.txt"
    photo.write_bytes(os.urandom(CHUNK_BYTES * 3 + 5))
    notes.write_text("抹茶 200円\n")
    result = kioku("chat", "-m", "what is this?", "--attach", str(photo), "-a", str(notes))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("echo (default): what is this? ")
    assert seen("receipt.jpg", "image", "image/jpeg", photo.read_bytes()) in result.stdout
    assert seen("メモ.txt", "document", "text/plain", notes.read_bytes()) in result.stdout


def test_files_can_go_without_text(echo: Path, kioku: Run, tmp_path: Path) -> None:
    voice = tmp_path / "note.ogg"
    voice.write_bytes(b"OggS" + bytes(100))
    result = kioku("chat", "-m", "", "--attach", str(voice))
    assert result.returncode == 0, result.stderr
    assert seen("note.ogg", "audio", "audio/ogg", voice.read_bytes()) in result.stdout


def test_nothing_to_send_is_a_usage_error(echo: Path, kioku: Run) -> None:
    result = kioku("chat", "-m", "")
    assert result.returncode == 2
    assert "nothing to send: give -m a message, or --attach a file" in result.stderr


def test_a_missing_file_is_a_usage_error_and_nothing_is_sent(
    echo: Path, kioku: Run, tmp_path: Path
) -> None:
    result = kioku("chat", "-m", "hi", "--attach", str(tmp_path / "nowhere.pdf"))
    assert result.returncode == 2
    assert f"no file {tmp_path / 'nowhere.pdf'}: check the path" in result.stderr
    assert result.stdout == ""


def test_a_folder_is_a_usage_error(echo: Path, kioku: Run, tmp_path: Path) -> None:
    result = kioku("chat", "-m", "hi", "--attach", str(tmp_path))
    assert result.returncode == 2
    assert f"{tmp_path} is a folder: attach the files in it one by one" in result.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_a_usage_error(echo: Path, kioku: Run, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("x")
    secret.chmod(0)
    result = kioku("chat", "-m", "hi", "--attach", str(secret))
    assert result.returncode == 2
    assert "cannot be read (permission denied)" in result.stderr


def test_too_many_files_is_a_usage_error(echo: Path, kioku: Run, tmp_path: Path) -> None:
    small = tmp_path / "a.txt"
    small.write_text("a")
    args = [part for _ in range(MAX_ATTACHMENTS + 1) for part in ("--attach", str(small))]
    result = kioku("chat", "-m", "hi", *args)
    assert result.returncode == 2
    assert f"a message carries at most {MAX_ATTACHMENTS}" in result.stderr


def test_a_file_over_media_max_bytes_is_refused_when_the_settings_are_known(
    echo: Path, kioku: Run, home: Path, tmp_path: Path
) -> None:
    (home / "config.toml").write_text("[media]\nmax_bytes = 2048\n")
    assert kioku("config", "check").returncode == 0  # notes the valid settings
    big = tmp_path / "big.pdf"
    big.write_bytes(b"x" * 4096)
    result = kioku("chat", "-m", "hi", "--attach", str(big))
    assert result.returncode == 2
    assert f"{big} is 4.0 KB: kioku reads files up to 2.0 KB (media.max_bytes)" in result.stderr


def test_interactive_attach_lists_files_and_sends_them_with_the_next_message(
    echo: Path, kioku: Run, tmp_path: Path
) -> None:
    lease = tmp_path / "lease.pdf"
    lease.write_bytes(b"%PDF-1.4 lease")
    typed = (
        f"/attach\n/attach {tmp_path / 'missing.pdf'}\n/attach '{lease}'\n/attach\nread it\nagain\n"
    )
    result = kioku("chat", input=typed)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "nothing attached: /attach PATH attaches a file" in out
    assert "check the path" in out
    assert out.count("attached to your next message:\nlease.pdf (14 bytes, application/pdf)") == 2
    sent = seen("lease.pdf", "document", "application/pdf", lease.read_bytes())
    assert f"echo (default): read it {sent}" in out
    assert "echo (default): again\n" in out  # sent once: the next message goes without it


def test_help_in_the_chat_mentions_attach(echo: Path, kioku: Run) -> None:
    result = kioku("chat", input="/help\n")
    assert "/attach PATH attaches a file to your next message" in result.stdout


def test_on_a_terminal_attach_sends_the_file_with_the_next_message(
    echo: Path, tmp_path: Path
) -> None:
    photo = tmp_path / "cat.png"
    photo.write_bytes(b"\x89PNG" + bytes(64))
    code, shown = on_terminal("chat", answer=f"/attach {photo}\nlook\n\x04", prompt="you>")
    assert code == 0, shown
    output = " ".join(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).split())
    assert "/attach PATH attaches a file to your next message" in output
    assert "attached to your next message" in output and "cat.png" in output
    assert hashlib.sha256(photo.read_bytes()).hexdigest()[:12] in output


def test_a_file_given_with_attach_goes_with_the_first_message_typed(
    echo: Path, kioku: Run, tmp_path: Path
) -> None:
    photo = tmp_path / "cat.png"
    photo.write_bytes(b"\x89PNG" + bytes(64))
    result = kioku("chat", "--attach", str(photo), input="look\nagain\n")
    assert result.returncode == 0, result.stderr
    assert f"echo (default): look {seen('cat.png', 'image', 'image/png', photo.read_bytes())}" in (
        result.stdout
    )
    assert "echo (default): again\n" in result.stdout
