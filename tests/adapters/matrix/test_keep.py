"""What the Matrix adapter keeps in `$KIOKU_HOME/matrix/`, and which invites it takes."""

from __future__ import annotations

from pathlib import Path

from adapters.base import Inbound
from adapters.matrix.adapter import MatrixAdapter
from adapters.matrix.keep import (
    UNDECRYPTABLE_KEPT,
    Login,
    matrix_dir,
    note_undecryptable,
    save_login,
    save_sync_token,
    saved_login,
    sync_token,
    undecryptable,
)
from config.platform_settings import MatrixSettings

SERVER = "https://matrix.example.org"


def test_the_folder_is_made_private_even_if_it_was_not(tmp_path: Path) -> None:
    (tmp_path / "matrix").mkdir(mode=0o755)
    (tmp_path / "matrix").chmod(0o755)
    assert matrix_dir(tmp_path).stat().st_mode & 0o777 == 0o700


def test_a_kept_login_is_read_back_for_its_own_account_only(tmp_path: Path) -> None:
    folder = matrix_dir(tmp_path)
    login = Login(SERVER, "@kioku:example.org", "DEVICE", "syt_token")
    save_login(folder, login)
    assert (folder / "session.json").stat().st_mode & 0o777 == 0o600
    assert saved_login(folder, SERVER + "/", "@kioku:example.org") == login
    assert saved_login(folder, SERVER, "@other:example.org") is None
    assert saved_login(folder, "https://elsewhere.org", "@kioku:example.org") is None


def test_a_damaged_session_file_is_no_login(tmp_path: Path) -> None:
    folder = matrix_dir(tmp_path)
    (folder / "session.json").write_text("{not json")
    assert saved_login(folder, SERVER, "@kioku:example.org") is None


def test_the_sync_token_is_kept(tmp_path: Path) -> None:
    folder = matrix_dir(tmp_path)
    assert sync_token(folder) is None
    save_sync_token(folder, "s72_1")
    assert sync_token(folder) == "s72_1"


def test_undecryptable_messages_keep_the_newest_ones(tmp_path: Path) -> None:
    folder = matrix_dir(tmp_path)
    for number in range(UNDECRYPTABLE_KEPT + 5):
        note_undecryptable(folder, "!r:x", "@a:x", f"$e{number}", "session")
    kept = undecryptable(folder)
    assert len(kept) == UNDECRYPTABLE_KEPT
    assert kept[-1].event_id == f"$e{UNDECRYPTABLE_KEPT + 4}"


async def _deliver(event: Inbound) -> None:
    return None


def _adapter(policy: str, allow: list[str] | None = None) -> MatrixAdapter:
    settings = MatrixSettings(
        homeserver=SERVER, user_id="@kioku:example.org", dm_policy=policy, allow=allow or []
    )
    return MatrixAdapter(_deliver, settings, Path("/nonexistent"), owners=["matrix:@me:x.org"])


def test_invites_follow_the_dm_policy() -> None:
    assert _adapter("pairing")._welcome("@stranger:x.org")
    assert _adapter("open")._welcome("@stranger:x.org")
    allowlist = _adapter("allowlist", ["matrix:@mum:x.org"])
    assert allowlist._welcome("@mum:x.org") and allowlist._welcome("@me:x.org")
    assert not allowlist._welcome("@stranger:x.org")
    disabled = _adapter("disabled", ["matrix:@mum:x.org"])
    assert disabled._welcome("@me:x.org") and not disabled._welcome("@mum:x.org")
