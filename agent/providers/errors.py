"""Provider failures, neutral to the SDK underneath.

Every failure is a `ProviderError`: `str(exc)` is the precise text for the log (status,
request id, what the API said) and `user_message` is one short sentence a person in the
chat can read. `retryable` marks failures worth another attempt; `retry.py` decides.
"""

from __future__ import annotations

from collections.abc import Mapping

from agent.untrusted import shorten

MAX_DETAIL = 1000
"""Characters of a failure's detail kept: a server may put megabytes in an error message."""


class ProviderError(Exception):
    """The model call failed; also used as-is for malformed responses."""

    default_user_message = "The model gave a reply kioku could not read; please try again."

    def __init__(
        self,
        detail: str,
        *,
        user_message: str | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(shorten(detail, MAX_DETAIL))
        self.user_message = user_message or self.default_user_message
        self.retryable = retryable
        self.retry_after = retry_after


class ProviderAuthError(ProviderError):
    """401/403: the key is wrong, revoked, or lacks permission; retrying cannot help."""

    default_user_message = (
        "The model provider rejected kioku's API key — the owner should check KIOKU_LLM__API_KEY."
    )


class ProviderModelError(ProviderError):
    """The endpoint does not know the configured model (404 / model_not_found)."""

    default_user_message = (
        "The model provider does not know the configured model — "
        "the owner should check KIOKU_LLM__MODEL."
    )


class ProviderTimeout(ProviderError):
    """No complete answer within the per-request timeout or the call's total deadline."""

    default_user_message = "The model took too long to answer; please try again in a moment."


class ProviderUnavailable(ProviderError):
    """Rate limited, overloaded, a 5xx, or unreachable: transient, usually retried first."""

    default_user_message = (
        "The model provider is busy or unreachable right now; please try again in a minute."
    )


class ProviderNotConfigured(ProviderError):
    """Raised by `NoProvider`: no model is configured, so there is nothing to call."""

    default_user_message = "No model is configured yet — the owner should configure one."


RETRYABLE_STATUSES = frozenset({408, 409, 429})


def error_for_status(
    status: int, detail: str, *, model: str, retry_after: float | None = None
) -> ProviderError:
    """Map an HTTP status (same meaning at every provider) to the error the agent can act on."""
    if status in (401, 403):
        return ProviderAuthError(detail)
    if status == 404:
        return ProviderModelError(
            detail,
            user_message=f"The model provider does not know the model '{model}' — "
            "the owner should check KIOKU_LLM__MODEL.",
        )
    if status == 408:
        return ProviderTimeout(detail, retryable=True, retry_after=retry_after)
    if status in RETRYABLE_STATUSES or status >= 500:
        return ProviderUnavailable(detail, retryable=True, retry_after=retry_after)
    return ProviderError(
        detail,
        user_message="The model provider refused the request; the owner can see why in the log.",
    )


def stream_ended_early(provider: str, awaited: str, headers: Mapping[str, str]) -> ProviderError:
    """A cut-off stream, or a 200 that was never SSE (a proxy's page, a wrong base_url)."""
    kind = headers.get("content-type", "")
    return ProviderError(f"{provider}: the stream ended before {awaited} (content-type {kind!r})")
