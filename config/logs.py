"""structlog, set up once: readable on a terminal, one JSON object per line otherwise."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable
from typing import Any, Literal

import structlog
from pydantic import SecretStr

from config.settings import Settings

# Libraries that log every HTTP request at INFO: one line per model call or poll is
# noise, and the request URL of the Telegram Bot API holds the bot token.
CHATTY = ("httpx", "httpcore", "nio")
"""matrix-nio logs each room event it handles and each key it shares at INFO."""

# Shapes of the tokens kioku is given, masked in every log line even when not configured
# here (a library may log a URL holding one: python-telegram-bot does at debug level).
TOKEN_SHAPES = re.compile(
    r"(?<![A-Za-z0-9])\d{6,12}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"  # Telegram bot token
    r"|\bxox[abposr]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}"  # Slack
    r"|\bsk-[A-Za-z0-9_-]{20,}"  # Anthropic, OpenAI
    r"|\b[MNO][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}\b"  # Discord
    r"|\bsyt_[A-Za-z0-9_-]{20,}"  # Synapse access token (a password login's, kept by kioku)
    r"|(?i:\bbearer\s+)[A-Za-z0-9._~+/-]{20,}"
)
MASK = "********"
MIN_SECRET = 6
"""Shorter configured values are not masked: they would blot out ordinary words."""

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def configure_logging(
    level: str = "info",
    fmt: Literal["auto", "console", "json"] = "auto",
    secrets: Iterable[str] = (),
) -> None:
    """Route structlog and the standard library's loggers (the platform SDKs') to stderr,
    with `secrets` and anything shaped like a token masked in every line."""
    use_json = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if use_json else structlog.dev.ConsoleRenderer()
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info if use_json else _keep,
                renderer,
                Redactor(secrets),
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(LEVELS[level])
    for name in CHATTY:
        logging.getLogger(name).setLevel(logging.WARNING)
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )


def configure_from(settings: Settings) -> None:
    """`configure_logging` as the settings ask, masking every secret they hold: each
    command that logs starts here, so none can print a token."""
    configure_logging(settings.log.level, settings.log.format, secret_values(settings))


def _keep(
    _logger: object, _name: str, event: structlog.types.EventDict
) -> structlog.types.EventDict:
    return event


class Redactor:
    """The last step of every log line: masks the given secret values and token shapes in the
    rendered text, so no library's message, field or traceback can carry one out."""

    def __init__(self, secrets: Iterable[str]) -> None:
        values = sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True)
        self._values = re.compile("|".join(map(re.escape, values))) if values else None

    def __call__(self, _logger: object, _name: str, line: Any) -> Any:
        if not isinstance(line, str):
            return line
        if self._values is not None:
            line = self._values.sub(MASK, line)
        return TOKEN_SHAPES.sub(MASK, line)


def secret_values(settings: Settings) -> list[str]:
    """Every secret in the settings: tokens and keys, and MCP servers' env and headers."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, SecretStr):
            found.append(value.get_secret_value())
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(settings.model_dump())
    for server in settings.mcp.servers.values():
        found += [*server.env.values(), *server.headers.values()]
    return found
