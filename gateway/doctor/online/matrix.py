"""Matrix, asked live: whether the homeserver takes kioku's token (`whoami`), and whether
the end-to-end encryption store holds the keys the homeserver knows for its device.

The same sign-in the adapter makes (adapters/matrix/login.py), from `matrix.access_token`
or the login kept in `$KIOKU_HOME/matrix/`; a password alone is not logged in with here
(that would make a new device): `kioku setup` or the first `kioku serve` does. `login`
is `kioku setup`'s: it logs in with the password and keeps the session, so the password
itself need not be stored anywhere.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
from nio import AsyncClient

from adapters.matrix.keep import matrix_dir, saved_login
from adapters.matrix.login import LoginFailed, sign_in
from config.platform_settings import MatrixSettings
from gateway.doctor.finding import Finding
from gateway.doctor.online import TIMEOUT, BotVerdict


async def login(settings: MatrixSettings, home: Path) -> BotVerdict:
    """Sign in (a password login is kept as the adapter keeps it) and say who kioku is."""
    folder = await asyncio.to_thread(matrix_dir, home)
    try:
        async with asyncio.timeout(TIMEOUT):
            client = await sign_in(settings, folder)
    except LoginFailed as exc:
        return BotVerdict(False, str(exc), "check matrix.user_id and the password or token")
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        where = settings.homeserver
        return BotVerdict(
            False,
            f"cannot reach {where} ({exc.__class__.__name__})",
            "check matrix.homeserver: the client URL, e.g. https://matrix.example.org",
        )
    try:
        device = client.device_id or ""
        return BotVerdict(True, f"{client.user_id}, device {device}", name=client.user_id)
    finally:
        await client.close()


async def check_matrix_online(settings: MatrixSettings, home: Path) -> list[Finding]:
    """The token (`whoami`) and the encryption store of its device."""
    if settings.user_id is None:
        return []
    folder = home / "matrix"
    kept = saved_login(folder, settings.homeserver or "", settings.user_id)
    if settings.access_token is None and kept is None:
        return [
            Finding(
                "note",
                "matrix login",
                "not logged in yet: `kioku setup` or the first `kioku serve` logs in",
            )
        ]
    folder = await asyncio.to_thread(matrix_dir, home)
    try:
        async with asyncio.timeout(TIMEOUT):
            client = await sign_in(settings, folder)
    except LoginFailed as exc:
        return [Finding("problem", "matrix login", str(exc), "see docs/matrix.md")]
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        return [
            Finding(
                "problem",
                "matrix login",
                f"cannot reach {settings.homeserver} ({exc.__class__.__name__})",
                "check matrix.homeserver and that the homeserver is up",
            )
        ]
    try:
        found = [Finding("ok", "matrix login", f"{client.user_id}, device {client.device_id}")]
        found.append(await _store(client, folder))
        return found
    finally:
        await client.close()


async def _store(client: AsyncClient, folder: Path) -> Finding:
    """The store's identity key against the one the homeserver publishes for the device."""
    device = client.device_id or ""
    published = await _published_key(client)
    account = client.olm.account if client.olm is not None else None
    kept = account.identity_keys["ed25519"] if account is not None and account.shared else None
    if published is None and kept is None:
        return Finding(
            "note", "matrix encryption", f"device {device}'s keys are published at the next start"
        )
    if kept != published:
        return Finding(
            "problem",
            "matrix encryption",
            f"the store in {folder} does not hold the keys the homeserver has for device "
            f"{device} (lost or replaced): encrypted rooms cannot be read",
            f"restore {folder} from a backup, or delete {folder / 'session.json'} and start "
            "kioku to log in as a new device (people verify it again)",
        )
    assert kept is not None
    fingerprint = " ".join(kept[i : i + 4] for i in range(0, len(kept), 4))
    return Finding("ok", "matrix encryption", f"keys of device {device} kept ({fingerprint})")


async def _published_key(client: AsyncClient) -> str | None:
    """The ed25519 key the homeserver publishes for the client's device (`/keys/query`)."""
    url = f"{client.homeserver}/_matrix/client/v3/keys/query"
    body = {"device_keys": {client.user_id: [client.device_id]}}
    headers = {"Authorization": f"Bearer {client.access_token}"}
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as http,
        http.post(url, json=body, headers=headers) as answer,
    ):
        found = await answer.json()
    device = found.get("device_keys", {}).get(client.user_id, {}).get(client.device_id, {})
    key = device.get("keys", {}).get(f"ed25519:{client.device_id}")
    return key if isinstance(key, str) else None
