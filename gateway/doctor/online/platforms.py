"""Check a platform's tokens against the platform, with the libraries kioku runs on.

Telegram: `getMe` (python-telegram-bot). Discord: the current user and the application
(`GET /users/@me`, `/oauth2/applications/@me`, the REST API discord.py uses), and the
invite URL with exactly the permissions the adapter needs. Slack: `auth.test` for the
bot token, with the scopes Slack granted it (its `x-oauth-scopes` answer header, e.g.
`chat:write,files:read,files:write`: tests/fixtures/recorded/slack/PROVENANCE.md,
web_files_get_upload_url_external.json), and for the app token a Socket Mode connection
opened as slack-bolt opens it (`apps.connections.open`, then the websocket's `hello`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from urllib.parse import urlencode

from gateway.doctor.online import TIMEOUT, BotVerdict, Verdict

TELEGRAM_API = "https://api.telegram.org/bot"
DISCORD_API = "https://discord.com/api/v10"

# What adapters/discord/adapter.py does: read and answer messages, in channels, threads and DMs,
# and send a long reply as a file (media.long_replies_as_file).
VIEW_CHANNELS = 1 << 10
SEND_MESSAGES = 1 << 11
ATTACH_FILES = 1 << 15
READ_MESSAGE_HISTORY = 1 << 16
SEND_MESSAGES_IN_THREADS = 1 << 38
DISCORD_PERMISSIONS = (
    VIEW_CHANNELS | SEND_MESSAGES | ATTACH_FILES | READ_MESSAGE_HISTORY | SEND_MESSAGES_IN_THREADS
)
# The application flags saying the privileged Message Content intent is on (the adapter
# asks for guilds, messages and message_content): GATEWAY_MESSAGE_CONTENT (a bot in 100
# or more servers, approved for it) or GATEWAY_MESSAGE_CONTENT_LIMITED (a bot in under 100
# servers that turned it on), developers/resources/application.mdx, Application Flags.
MESSAGE_CONTENT_FLAGS = (1 << 18) | (1 << 19)


def discord_invite_url(application_id: str) -> str:
    """The OAuth2 URL that adds the bot to a server with the permissions kioku uses, and
    its slash commands (`applications.commands`)."""
    query = {
        "client_id": application_id,
        "scope": "bot applications.commands",
        "permissions": DISCORD_PERMISSIONS,
    }
    return "https://discord.com/oauth2/authorize?" + urlencode(query)


async def check_telegram(
    token: str, base_url: str | None = None, within: float = TIMEOUT
) -> BotVerdict:
    """`getMe` with `token`: the bot's @name and id."""
    from telegram import Bot
    from telegram.error import InvalidToken, NetworkError, TelegramError
    from telegram.request import HTTPXRequest

    request = HTTPXRequest(connect_timeout=within, read_timeout=within)
    bot = Bot(token, base_url=base_url or TELEGRAM_API, request=request)
    try:
        me = await bot.get_me()
    except InvalidToken:
        return BotVerdict(
            False,
            "Telegram refused the token",
            "copy it again from @BotFather (/mybots → your bot → API Token)",
        )
    except NetworkError as exc:  # TimedOut included
        return BotVerdict(
            False, f"cannot reach Telegram ({exc.message})", "check the network and retry"
        )
    except TelegramError as exc:
        return BotVerdict(False, f"Telegram said: {exc.message}", "check the token and retry")
    finally:
        await request.shutdown()
    return BotVerdict(True, f"@{me.username}", name=f"@{me.username}", user_id=str(me.id))


async def check_discord(
    token: str, api_base: str | None = None, within: float = TIMEOUT
) -> BotVerdict:
    """The bot user behind `token`; not ok when the Message Content intent is off
    (`GATEWAY_MESSAGE_CONTENT` or `_LIMITED` in the application's flags), since kioku could
    then read no message: not live, not caught up from a channel's history, not edited."""
    import aiohttp

    base = (api_base or DISCORD_API).rstrip("/")
    headers = {"Authorization": f"Bot {token}"}
    try:
        async with aiohttp.ClientSession(
            headers=headers, timeout=aiohttp.ClientTimeout(total=within)
        ) as session:
            status, me = await _get_json(session, f"{base}/users/@me")
            if status == 401:
                return BotVerdict(
                    False,
                    "Discord refused the token",
                    "copy it again: Developer Portal → your application → Bot → Reset Token",
                )
            if status != 200:
                return BotVerdict(False, f"Discord answered {status}", "retry in a minute")
            _, application = await _get_json(session, f"{base}/oauth2/applications/@me")
    except (aiohttp.ClientError, TimeoutError, json.JSONDecodeError) as exc:
        return BotVerdict(
            False, f"cannot reach Discord ({type(exc).__name__})", "check the network and retry"
        )
    name, user_id = str(me.get("username", "")), str(me.get("id", ""))
    if not int(application.get("flags") or 0) & MESSAGE_CONTENT_FLAGS:
        return BotVerdict(
            False,
            f"{name}: the Message Content intent is off, so kioku could read no message "
            "(live, missed while it was away, or edited)",
            "Developer Portal → your application → Bot → Privileged Gateway Intents → "
            "turn on Message Content Intent, then retry",
            name=name,
            user_id=user_id,
        )
    return BotVerdict(True, name, name=name, user_id=user_id)


async def _get_json(session: object, url: str) -> tuple[int, dict[str, object]]:
    async with session.get(url) as response:  # type: ignore[attr-defined]
        body = await response.read()
        data = json.loads(body) if response.status == 200 else {}
        return int(response.status), data if isinstance(data, dict) else {}


async def check_slack(
    bot_token: str, base_url: str | None = None, within: float = TIMEOUT
) -> BotVerdict:
    """`auth.test` with the bot token: the bot's name, user id, workspace and scopes."""
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    client = AsyncWebClient(
        token=bot_token, base_url=base_url or AsyncWebClient.BASE_URL, timeout=int(within)
    )
    try:
        answer = await client.auth_test()
    except SlackApiError as exc:
        error = exc.response.get("error", "an error")
        return BotVerdict(
            False,
            f"Slack refused the bot token ({error})",
            "copy the Bot User OAuth Token (xoxb-…) again from OAuth & Permissions",
        )
    except (OSError, TimeoutError) as exc:
        return BotVerdict(
            False, f"cannot reach Slack ({type(exc).__name__})", "check the network and retry"
        )
    name = str(answer.get("user") or answer.get("user_id") or "the bot")
    return BotVerdict(
        True,
        f"{name} in {answer.get('team') or answer.get('team_id')}",
        name=name,
        user_id=str(answer.get("user_id") or ""),
        team=str(answer.get("team_id") or ""),
        scopes=granted_scopes(answer.headers),
    )


def granted_scopes(headers: Mapping[str, object]) -> frozenset[str] | None:
    """The scopes in an answer's `x-oauth-scopes` header (comma-separated), or None
    without one."""
    for key, value in headers.items():
        if key.lower() == "x-oauth-scopes":
            text = ",".join(value) if isinstance(value, list) else str(value)
            return frozenset(scope.strip() for scope in text.split(",") if scope.strip())
    return None


async def check_slack_app_token(
    app_token: str, base_url: str | None = None, within: float = TIMEOUT
) -> Verdict:
    """Open a Socket Mode connection with the app token and wait for Slack's `hello`."""
    import aiohttp
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    client = AsyncWebClient(
        token=app_token, base_url=base_url or AsyncWebClient.BASE_URL, timeout=int(within)
    )
    try:
        url = str((await client.apps_connections_open(app_token=app_token))["url"])
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=within)) as session,
            session.ws_connect(url) as ws,
        ):
            first = await asyncio.wait_for(ws.receive_json(), within)
    except SlackApiError as exc:
        error = exc.response.get("error", "an error")
        return Verdict(
            False,
            f"Slack refused the app token ({error})",
            "Basic Information → App-Level Tokens: make one with connections:write (xapp-…), "
            "and turn on Socket Mode",
        )
    except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as exc:
        return Verdict(
            False,
            f"the Socket Mode connection failed ({type(exc).__name__})",
            "check the network and that Socket Mode is on for the app",
        )
    if first.get("type") != "hello":
        return Verdict(False, "Slack did not greet the Socket Mode connection", "retry")
    return Verdict(True, "Socket Mode connects")
