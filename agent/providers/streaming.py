"""What both SDK-backed providers do around a model call, written once.

A call is retried by `call_with_retries`; each attempt streams, relaying text to the
caller's `on_text` as it arrives, and SDK exceptions become neutral `ProviderError`s.
Once text has reached the person a failure is no longer retryable: a retry would show
them the same words twice. A provider plugs in its wire format (`_params`), one raw
attempt (`_stream`) and its SDK's errors (`sdk_errors` and `_error`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from agent.providers.base import ChatRequest, ModelReply, OnText
from agent.providers.errors import ProviderError, ProviderTimeout, ProviderUnavailable
from agent.providers.retry import RetryPolicy, call_with_retries
from inputs.limits import InputRefused


class SdkClient(Protocol):
    """The part of an SDK client this module uses."""

    @property
    def base_url(self) -> Any: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class SdkErrors:
    """The SDK's exception classes: its root, and its timeout and connection errors."""

    root: type[Exception]
    timeout: type[Exception]
    connection: type[Exception]


class StreamingProvider(ABC):
    """A `Provider` over an SDK client; subclasses set `name`, `sdk_errors`, `malformed`
    and `_client`, and implement `_params`, `_stream` and `_error`."""

    name: ClassVar[str]
    sdk_errors: ClassVar[SdkErrors]
    malformed: ClassVar[tuple[type[Exception], ...]]
    """What the SDK raises while parsing a body that is not what the API promises."""
    _client: SdkClient

    def __init__(
        self,
        *,
        model: str,
        max_tokens: int,
        timeout: float,
        context_window: int,
        retry: RetryPolicy | None,
    ) -> None:
        self.model = model
        self.context_window = context_window
        self._max_tokens = max_tokens
        self._timeout = timeout
        self._retry = retry or RetryPolicy()

    async def complete(self, request: ChatRequest, on_text: OnText | None = None) -> ModelReply:
        params = self._params(request)
        return await call_with_retries(lambda: self._attempt(params, on_text), self._retry)

    async def aclose(self) -> None:
        await self._client.close()

    @abstractmethod
    def _params(self, request: ChatRequest) -> dict[str, Any]:
        """The SDK call's arguments for `request`."""

    @abstractmethod
    def _stream(self, params: dict[str, Any]) -> AsyncIterator[str | ModelReply]:
        """One attempt: non-empty text deltas as they arrive, then the whole reply."""

    @abstractmethod
    def _error(self, exc: Exception) -> ProviderError:
        """An SDK error other than a timeout or a connection failure, made neutral."""

    async def _attempt(self, params: dict[str, Any], on_text: OnText | None) -> ModelReply:
        reply: ModelReply | None = None
        async with aclosing(self._neutral(params)) as items:
            async for item in items:
                if isinstance(item, str):
                    if on_text is not None:
                        await on_text(item)
                else:
                    reply = item
        assert reply is not None, "_stream yields the reply or raises"
        return reply

    async def _neutral(self, params: dict[str, Any]) -> AsyncIterator[str | ModelReply]:
        """`_stream` with its errors made neutral. The caller's `on_text` runs outside this
        generator, so its exceptions stay its own."""
        streamed = False
        try:
            async with aclosing(self._stream(params)) as items:
                async for item in items:
                    streamed = streamed or isinstance(item, str)
                    yield item
        except self.sdk_errors.root as exc:
            error = self._neutral_error(exc)
            error.retryable = error.retryable and not streamed
            raise error from exc
        except self.malformed as exc:
            raise ProviderError(f"{self.name}: malformed response: {exc!r}") from exc

    def _neutral_error(self, exc: Exception) -> ProviderError:
        refused = _refusal(exc)
        if refused is not None:
            return ProviderError(f"{self.name}: malformed response: {refused!r}")
        if isinstance(exc, self.sdk_errors.timeout):
            return ProviderTimeout(
                f"{self.name}: no answer within the {self._timeout:g} s request timeout",
                retryable=True,
            )
        if isinstance(exc, self.sdk_errors.connection):
            return ProviderUnavailable(
                f"{self.name}: cannot reach {self._client.base_url}: {exc.__cause__ or exc}",
                retryable=True,
            )
        return self._error(exc)


def _refusal(exc: BaseException) -> InputRefused | None:
    """Our own refusal of a response body (`agent.providers.body`) behind an SDK error: an
    SDK may report an exception raised while it reads the stream as a connection error
    (anthropic 2.17 does), but the server answered, with something kioku will not read."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, InputRefused):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
