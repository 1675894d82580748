"""`kioku doctor` on the web page's links: a problem only when a remote platform would be
sent a link that opens on this machine alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.paths import ensure_home
from gateway.doctor.examine import examine
from gateway.doctor.finding import Finding


async def web_page(home: Path) -> Finding | None:
    ensure_home(home)
    found = [f for f in await examine() if f.topic == "web page"]
    return found[0] if found else None


@pytest.fixture
def telegram(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIOKU_TELEGRAM__TOKEN", "123:abc")
    monkeypatch.setenv("KIOKU_WEB__ENABLED", "true")


@pytest.mark.usefixtures("telegram")
async def test_a_loopback_link_base_with_telegram_configured_is_a_problem(home: Path) -> None:
    finding = await web_page(home)
    assert finding is not None and finding.level == "problem"
    assert finding.text == (
        "sign-in links point at http://127.0.0.1:8765 (127.0.0.1 is this machine only): "
        "/web refuses to send them on telegram"
    )
    assert finding.fix is not None and "web.public_url" in finding.fix


@pytest.mark.usefixtures("telegram")
async def test_a_public_url_is_ok(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIOKU_WEB__PUBLIC_URL", "https://kioku.example.org")
    finding = await web_page(home)
    assert finding == Finding("ok", "web page", "sign-in links open at https://kioku.example.org")


async def test_a_loopback_link_base_with_only_the_cli_is_ok(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_WEB__ENABLED", "true")
    finding = await web_page(home)
    assert finding is not None and finding.level == "ok"


@pytest.mark.usefixtures("telegram")
async def test_nothing_is_said_when_the_page_is_off(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_WEB__ENABLED", "false")
    assert await web_page(home) is None
