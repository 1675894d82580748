"""The context length a local OpenAI-compatible server announces, for
`llm.context_window = "auto"` and for `kioku doctor`.

A local server cuts a prompt longer than its context silently, from the start: kioku
must compact before that, so it needs the length the server really applies, which is
not always the model's. Each server says it its own way, and kioku asks each in turn at
the server's root (`llm.base_url` without its `/v1`):

- Ollama: `GET /api/ps` gives the length a loaded model runs with; else the model's
  `num_ctx` parameter (`POST /api/show`); else Ollama's own default (4096 unless
  `OLLAMA_CONTEXT_LENGTH` says otherwise, and nothing announces that), capped by the
  model's `<arch>.context_length`.
- llama.cpp server: `GET /props` → `default_generation_settings.n_ctx` (per slot).
- LM Studio: `GET /api/v0/models` → the model's `loaded_context_length`, else its
  `max_context_length`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp
import structlog

from config.settings import LLMSettings

log = structlog.get_logger("kioku.agent")
TIMEOUT = 3.0
OLLAMA_DEFAULT = 4096
NUM_CTX = re.compile(r"^num_ctx\s+(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Announced:
    """A length in tokens and where it came from, e.g. "Ollama /api/ps (qwen2.5:7b loaded)"."""

    length: int
    source: str


def server_root(base_url: str) -> str:
    """`http://host:11434/v1/` → `http://host:11434`: the native endpoints live at the root."""
    root = base_url.rstrip("/")
    return root.removesuffix("/v1")


async def announced_context(
    base_url: str, model: str, *, per_request: float = TIMEOUT
) -> Announced | None:
    """What the server at `base_url` announces for `model`, asking Ollama's, llama.cpp's
    and LM Studio's endpoints in turn; None (each miss logged) when none answers."""
    root = server_root(base_url)
    misses: list[str] = []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=per_request)) as http:
        for name, ask in (("ollama", _ollama), ("llama.cpp", _llama_cpp), ("lm studio", _lm)):
            try:
                found = await ask(http, root, model)
            except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                misses.append(f"{name}: {type(exc).__name__}: {exc}")
                continue
            if found is not None:
                return found
            misses.append(f"{name}: no length for {model}")
    log.info("context_length_not_announced", base_url=base_url, model=model, misses=misses)
    return None


async def resolve_context_window(llm: LLMSettings) -> int:
    """The context window the daemon runs with: `llm.context_window`, or with "auto" what
    the server announces, else the safe default of `llm.known_window`; logged either way."""
    if llm.context_window != "auto":
        return llm.context_window
    if llm.provider == "openai" and llm.base_url:
        found = await announced_context(llm.base_url, llm.model)
        if found is not None:
            log.info("context_window_announced", tokens=found.length, source=found.source)
            return found.length
        log.warning(
            "context_window_guessed",
            tokens=llm.known_window,
            why="the server announced no context length; set llm.context_window to its size",
        )
        return llm.known_window
    log.info("context_window_guessed", tokens=llm.known_window, why=f"{llm.provider} default")
    return llm.known_window


def window_mismatch(announced: Announced, configured: int | Literal["auto"]) -> str | None:
    """For `kioku doctor`: a warning when `llm.context_window` is larger than what the
    server holds, since kioku would then compact too late and the server cut the prompt."""
    if configured == "auto" or configured <= announced.length:
        return None
    return (
        f"the server announces {announced.length} tokens ({announced.source}), but "
        f"llm.context_window is {configured}: kioku would never compact in time while the "
        "server silently cuts the start of long conversations. Set llm.context_window = "
        f'{announced.length} (or "auto"), or give the server a longer context'
    )


async def _json(response: aiohttp.ClientResponse) -> dict[str, Any]:
    """The JSON object of a 200 answer; a `ValueError` for anything else (not this server)."""
    if response.status != 200:
        raise ValueError(f"HTTP {response.status}")
    body = await response.json(content_type=None)
    if not isinstance(body, dict):
        raise ValueError(f"a JSON {type(body).__name__}, not an object")
    return body


def _objects(value: object) -> list[dict[str, Any]]:
    """The objects of a JSON list (a list of models), anything else left out."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _same_model(name: object, model: str) -> bool:
    """Ollama names carry a tag; `qwen2.5` is `qwen2.5:latest`."""
    return name in (model, f"{model}:latest")


async def _ollama(http: aiohttp.ClientSession, root: str, model: str) -> Announced | None:
    async with http.post(f"{root}/api/show", json={"model": model}) as response:
        shown = await _json(response)
    info = shown.get("model_info")
    info = info if isinstance(info, dict) else {}
    most = _positive(info.get(f"{info.get('general.architecture')}.context_length"))
    async with http.get(f"{root}/api/ps") as response:
        running = _objects((await _json(response)).get("models"))
    for entry in running:
        if _same_model(entry.get("name"), model) and _positive(entry.get("context_length")):
            return Announced(entry["context_length"], f"Ollama /api/ps ({model} loaded)")
    parameter = NUM_CTX.search(str(shown.get("parameters") or ""))
    if parameter is not None:
        return Announced(int(parameter.group(1)), f"Ollama /api/show ({model}'s num_ctx)")
    if most is None:
        return None
    return Announced(
        min(most, OLLAMA_DEFAULT),
        f"Ollama's default context ({model} holds {most}; OLLAMA_CONTEXT_LENGTH or the "
        "model's num_ctx raise it)",
    )


async def _llama_cpp(http: aiohttp.ClientSession, root: str, model: str) -> Announced | None:
    async with http.get(f"{root}/props") as response:
        props = await _json(response)
    settings = props.get("default_generation_settings")
    length = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return None if length is None else Announced(length, "llama.cpp /props (n_ctx)")


async def _lm(http: aiohttp.ClientSession, root: str, model: str) -> Announced | None:
    async with http.get(f"{root}/api/v0/models") as response:
        listed = _objects((await _json(response)).get("data"))
    for entry in listed:
        if entry.get("id") != model:
            continue
        loaded = _positive(entry.get("loaded_context_length"))
        if loaded is not None:
            return Announced(loaded, f"LM Studio /api/v0/models ({model} loaded)")
        most = _positive(entry.get("max_context_length"))
        if most is not None:
            return Announced(most, f"LM Studio /api/v0/models ({model}'s maximum)")
    return None
