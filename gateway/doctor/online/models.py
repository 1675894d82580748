"""Check a model key by listing the models it may use, with the provider's own SDK.

Listing models is free, proves the key and the endpoint at once, and gives the wizard a
list to pick from. Anthropic: `GET /v1/models`; OpenAI-compatible servers (Ollama, LM
Studio, OpenAI, OpenRouter): `GET {base_url}/models`.
"""

from __future__ import annotations

from gateway.doctor.online import TIMEOUT, ModelVerdict

MAX_MODELS = 200
"""Models read from one listing; OpenRouter offers several hundred."""


async def check_anthropic(
    api_key: str, base_url: str | None = None, within: float = TIMEOUT
) -> ModelVerdict:
    """Whether Anthropic takes `api_key`, and the models it offers, newest first."""
    import anthropic

    client = anthropic.AsyncAnthropic(
        api_key=api_key, base_url=base_url, max_retries=0, timeout=within
    )
    where = base_url or "api.anthropic.com"
    try:
        models = [model.id async for model in client.models.list(limit=100)]
    except anthropic.AuthenticationError:
        return ModelVerdict(
            False,
            "Anthropic refused the key",
            "copy the key again from console.anthropic.com → API keys (it starts with sk-ant-)",
        )
    except anthropic.PermissionDeniedError:
        return ModelVerdict(
            False, "the key may not list models", "check the key's workspace and permissions"
        )
    except anthropic.APIConnectionError:
        return ModelVerdict(
            False, f"cannot reach {where}", "check the network (or the base URL) and retry"
        )
    except anthropic.APIStatusError as exc:
        return ModelVerdict(
            False, f"{where} answered {exc.status_code}", "retry in a minute; check the base URL"
        )
    finally:
        await client.close()
    return _listed(models[:MAX_MODELS], where)


async def check_openai(
    base_url: str, api_key: str | None = None, within: float = TIMEOUT
) -> ModelVerdict:
    """Whether the OpenAI-compatible server at `base_url` answers with `api_key` (a local
    server needs none), and the models it serves."""
    import openai

    client = openai.AsyncOpenAI(
        base_url=base_url, api_key=api_key or "none", max_retries=0, timeout=within
    )
    try:
        models = []
        async for model in client.models.list():
            models.append(model.id)
            if len(models) >= MAX_MODELS:
                break
    except openai.AuthenticationError:
        return ModelVerdict(
            False, f"{base_url} refused the key", "copy the key again from the provider's page"
        )
    except openai.NotFoundError:
        return ModelVerdict(
            False,
            f"{base_url} has no /models endpoint",
            "give the base URL that ends before /chat/completions, often with /v1",
        )
    except openai.APIConnectionError:
        return ModelVerdict(
            False,
            f"cannot reach {base_url}",
            "start the server (e.g. `ollama serve`) or correct the URL, then retry",
        )
    except openai.APIStatusError as exc:
        return ModelVerdict(
            False, f"{base_url} answered {exc.status_code}", "check the URL and the key"
        )
    finally:
        await client.close()
    return _listed(models, base_url)


def _listed(models: list[str], where: str) -> ModelVerdict:
    if not models:
        return ModelVerdict(
            False,
            f"{where} accepts the key but offers no model",
            "install or enable a model there (e.g. `ollama pull llama3.2`), then retry",
        )
    return ModelVerdict(True, f"{len(models)} model(s) available at {where}", models=tuple(models))


async def ollama_capabilities(
    base_url: str, model: str, within: float = TIMEOUT
) -> frozenset[str] | None:
    """What Ollama says `model` can do (`POST /api/show` → `capabilities`: "completion",
    "tools", "vision"…, in recent versions), so a model without tools is caught before
    every reply fails; None when the server says nothing of it (another server, an older
    Ollama, no answer: the model listing reports reachability)."""
    import aiohttp

    from agent.providers.context_length import server_root

    url = f"{server_root(base_url)}/api/show"
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=within)) as http,
            http.post(url, json={"model": model}) as response,
        ):
            if response.status != 200:
                return None
            shown = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return None
    said = shown.get("capabilities") if isinstance(shown, dict) else None
    if not isinstance(said, list):
        return None
    return frozenset(str(item) for item in said)
