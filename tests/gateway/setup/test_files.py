"""config.toml and .env as `kioku setup` writes them: secrets apart, other keys kept,
the diff masked, the previous files kept, both private."""

from __future__ import annotations

from pathlib import Path

from config.load import load_settings
from gateway.setup.files import current, plan

CONFIG = '# my notes\n[llm]\nmodel = "old"  # why\n\n[memory.notes]\nmemory_limit = 3000\n'


def home_with(home: Path, config: str = CONFIG, env: str = "OTHER=1\n") -> Path:
    home.mkdir(mode=0o700, exist_ok=True)
    (home / "config.toml").write_text(config)
    (home / ".env").write_text(env)
    return home


def test_secrets_go_to_env_and_the_rest_to_config_keeping_unmanaged_keys(home: Path) -> None:
    home_with(home)
    plan(
        home, {"llm.model": "new", "llm.api_key": "sk-1", "owner.identities": ["telegram:1"]}
    ).write()
    config = (home / "config.toml").read_text()
    assert config.startswith('# my notes\n[llm]\nmodel = "new"  # why\n')
    assert "memory_limit = 3000" in config and 'identities = ["telegram:1"]' in config
    assert (home / ".env").read_text() == "OTHER=1\nKIOKU_LLM__API_KEY=sk-1\n"
    assert load_settings().llm.api_key.get_secret_value() == "sk-1"  # type: ignore[union-attr]


def test_the_diff_masks_every_secret(home: Path) -> None:
    home_with(home, env="KIOKU_TELEGRAM__TOKEN=1:old\n")
    diff = plan(home, {"telegram.token": "1:new-secret"}).diff()
    assert "-KIOKU_TELEGRAM__TOKEN=********\n" in diff
    assert "+KIOKU_TELEGRAM__TOKEN=******** (changed)" in diff
    assert "1:old" not in diff and "new-secret" not in diff


def test_writing_keeps_the_previous_files_and_makes_both_private(home: Path) -> None:
    home_with(home)
    plan(home, {"llm.model": "new", "discord.token": "d"}).write()
    assert (home / "config.toml.bak").read_text() == CONFIG
    assert (home / ".env.bak").read_text() == "OTHER=1\n"
    for name in ("config.toml", ".env"):
        assert (home / name).stat().st_mode & 0o777 == 0o600


def test_removing_a_setting_drops_its_table_when_empty_and_its_env_line(home: Path) -> None:
    home_with(
        home, config=CONFIG + '\n[schedule]\ndefault_timezone = "UTC"\n', env="KIOKU_LLM__MODEL=x\n"
    )
    plan(home, {"schedule.default_timezone": None, "llm.model": None}).write()
    assert "schedule" not in (home / "config.toml").read_text()
    assert (home / ".env").read_text() == ""
    assert current(home) == {"memory.notes.memory_limit": 3000}


def test_nothing_changes_when_the_values_are_already_there(home: Path) -> None:
    home_with(home)
    assert not plan(home, {}).changed
