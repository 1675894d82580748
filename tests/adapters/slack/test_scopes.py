"""The scopes kioku asks of a Slack bot token: what `kioku doctor --online` reports missing."""

from __future__ import annotations

from pathlib import Path

from adapters.slack.scopes import SCOPES, SCOPES_FOR_SETTINGS, missing_scopes

EVERY = frozenset(SCOPES)


def test_a_token_with_every_scope_lacks_none() -> None:
    assert missing_scopes(EVERY, frozenset()) == {}


def test_a_missing_scope_is_named_with_what_it_is_for() -> None:
    assert missing_scopes(EVERY - {"commands"}, frozenset()) == {
        "commands": "answer slash commands"
    }


def test_files_write_is_wanted_only_when_long_replies_go_as_files() -> None:
    assert "files:write" not in missing_scopes(EVERY, frozenset())
    wanted = missing_scopes(EVERY, frozenset({"media.long_replies_as_file"}))
    assert list(wanted) == ["files:write"]
    assert "media.long_replies_as_file = true" in wanted["files:write"]


def test_docs_slack_md_lists_every_scope_kioku_uses() -> None:
    manual = (Path(__file__).resolve().parents[3] / "docs" / "slack.md").read_text()
    for scope in [*SCOPES, *SCOPES_FOR_SETTINGS]:
        assert f"| `{scope}` |" in manual
