"""`metrics.listen` and `metrics.token`: /metrics stays on this machine unless a token
guards it, and a wrong setting stops the start with what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.load import ConfigError, load_settings


def test_metrics_are_off_by_default(home: Path) -> None:
    assert load_settings().metrics.listen is None


@pytest.mark.parametrize("listen", ["127.0.0.1:9464", "localhost:9464", "[::1]:9464"])
def test_a_loopback_address_needs_no_token(
    home: Path, monkeypatch: pytest.MonkeyPatch, listen: str
) -> None:
    monkeypatch.setenv("KIOKU_METRICS__LISTEN", listen)
    assert load_settings().metrics.listen == listen


def test_another_address_without_a_token_is_refused_saying_what_to_set(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_METRICS__LISTEN", "0.0.0.0:9464")
    with pytest.raises(ConfigError) as refused:
        load_settings()
    assert "metrics.token" in str(refused.value) and "127.0.0.1" in str(refused.value)


def test_another_address_with_a_token_is_accepted(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_METRICS__LISTEN", "192.168.1.20:9464")
    monkeypatch.setenv("KIOKU_METRICS__TOKEN", "s3cret-scrape")
    assert load_settings().metrics.listen == "192.168.1.20:9464"


def test_a_listen_that_is_no_host_and_port_says_the_form(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_METRICS__LISTEN", "9464")
    with pytest.raises(ConfigError, match="host:port"):
        load_settings()
