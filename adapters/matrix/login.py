"""Signing in to the homeserver with end-to-end encryption on, the same way for the
adapter, `kioku setup` and `kioku doctor --online`.

The login used, in order: `matrix.access_token` (its device from `matrix.device_id`, or
asked of the homeserver), else the login kept from an earlier start, else a password
login, whose token and device are then kept (`keep`). Each is checked live (`whoami`),
so a revoked token is said at once, not as a sync that fails later.
"""

from __future__ import annotations

from pathlib import Path

from nio import AsyncClient, AsyncClientConfig, LoginError, LoginResponse, WhoamiResponse

from adapters.matrix.keep import Login, save_login, saved_login
from config.platform_settings import MatrixSettings

DEVICE_NAME = "kioku"
RATE_LIMITED_RETRIES = 8
"""`M_LIMIT_EXCEEDED` answers matrix-nio waits out (each for its `retry_after_ms`) before
a call gives up."""


class LoginFailed(RuntimeError):
    """The homeserver refused the credentials; the message says what to change."""


def client_for(homeserver: str, user_id: str, folder: Path) -> AsyncClient:
    """A matrix-nio client with encryption on, its crypto store in `folder`."""
    config = AsyncClientConfig(
        encryption_enabled=True,
        store_sync_tokens=False,
        max_limit_exceeded=RATE_LIMITED_RETRIES,
        max_timeouts=3,
    )
    return AsyncClient(homeserver, user_id, store_path=str(folder), config=config)


async def sign_in(settings: MatrixSettings, folder: Path) -> AsyncClient:
    """A client signed in and checked live; `LoginFailed` (the client closed) if refused."""
    if settings.homeserver is None or settings.user_id is None:
        raise LoginFailed("set matrix.homeserver and matrix.user_id (`kioku setup` asks them)")
    homeserver, user_id = settings.homeserver.rstrip("/"), settings.user_id
    client = client_for(homeserver, user_id, folder)
    try:
        await _restore(client, settings, folder, homeserver, user_id)
        who = await client.whoami()
        if not isinstance(who, WhoamiResponse):
            raise LoginFailed(
                f"{homeserver} refused kioku's access token ({who.message}): set a new "
                "matrix.access_token, or matrix.password and delete "
                f"{folder / 'session.json'} to log in again"
            )
        if who.user_id != user_id:
            raise LoginFailed(f"the access token is {who.user_id}'s, not {user_id}'s")
    except BaseException:
        await client.close()
        raise
    return client


async def _restore(
    client: AsyncClient, settings: MatrixSettings, folder: Path, homeserver: str, user_id: str
) -> None:
    if settings.access_token is not None:
        token = settings.access_token.get_secret_value()
        device = settings.device_id or await _device_of(client, token)
        client.restore_login(user_id, device, token)
        return
    kept = saved_login(folder, homeserver, user_id)
    if kept is not None:
        client.restore_login(kept.user_id, kept.device_id, kept.access_token)
        return
    if settings.password is None:
        raise LoginFailed(
            "set matrix.access_token (with matrix.device_id), or matrix.password for a "
            "first login whose token kioku keeps"
        )
    answer = await client.login(settings.password.get_secret_value(), device_name=DEVICE_NAME)
    if isinstance(answer, LoginError) or not isinstance(answer, LoginResponse):
        raise LoginFailed(f"{homeserver} refused the login of {user_id}: {answer.message}")
    save_login(folder, Login(homeserver, user_id, answer.device_id, answer.access_token))


async def _device_of(client: AsyncClient, token: str) -> str:
    """The device an access token belongs to, as the homeserver says (`whoami`)."""
    client.access_token = token
    who = await client.whoami()
    if not isinstance(who, WhoamiResponse) or not who.device_id:
        message = getattr(who, "message", "no device in its answer")
        raise LoginFailed(
            f"the homeserver did not say which device matrix.access_token is for ({message}): "
            "set matrix.device_id"
        )
    return who.device_id
