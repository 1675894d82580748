"""`kioku setup`'s Matrix login: the answers checked by logging in, the way the adapter
does (adapters/matrix/login.py), so the token and device are kept in `$KIOKU_HOME/matrix/`
and the password is never written to a file."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr, ValidationError

from config.platform_settings import MatrixSettings
from gateway.doctor.online import BotVerdict


async def matrix_login(
    home: Path,
    homeserver: str,
    user_id: str,
    password: str | None,
    access_token: str | None = None,
) -> BotVerdict:
    """Log in (or check the token) live; the verdict names the account and device."""
    from gateway.doctor.online.matrix import login

    try:
        settings = MatrixSettings(
            homeserver=homeserver,
            user_id=user_id,
            password=SecretStr(password) if password else None,
            access_token=SecretStr(access_token) if access_token else None,
        )
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
        return BotVerdict(False, problem, "give the full user id, e.g. @kioku:example.org")
    return await login(settings, home)
