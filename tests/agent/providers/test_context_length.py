"""What context length kioku learns from a local server (Ollama, llama.cpp, LM Studio),
what `llm.context_window = "auto"` makes of it, and the warning `kioku doctor` gets."""

from __future__ import annotations

import socket

import pytest

from agent.providers.context_length import (
    Announced,
    announced_context,
    resolve_context_window,
    server_root,
    window_mismatch,
)
from config.settings import LLMSettings
from tests.fakes.local_model_servers import FakeLocalServer

MODEL = "qwen2.5:7b"


def test_the_native_endpoints_live_at_the_servers_root() -> None:
    assert server_root("http://127.0.0.1:11434/v1/") == "http://127.0.0.1:11434"
    assert server_root("http://gpu.lan:8080") == "http://gpu.lan:8080"


async def test_ollama_with_the_model_loaded_announces_what_it_runs_with() -> None:
    async with FakeLocalServer.ollama(MODEL, 32_768, num_ctx=8192, loaded=16_384) as server:
        found = await announced_context(server.base_url, MODEL)
    assert found == Announced(16_384, f"Ollama /api/ps ({MODEL} loaded)")
    assert server.asked[0] == ("POST", "/api/show", {"model": MODEL})


async def test_ollama_not_loaded_announces_the_models_num_ctx() -> None:
    async with FakeLocalServer.ollama(MODEL, 32_768, num_ctx=8192) as server:
        found = await announced_context(server.base_url, MODEL)
    assert found == Announced(8192, f"Ollama /api/show ({MODEL}'s num_ctx)")


async def test_ollama_without_num_ctx_is_taken_at_its_default_not_the_models_maximum() -> None:
    async with FakeLocalServer.ollama(MODEL, 32_768) as server:
        found = await announced_context(server.base_url, MODEL)
    assert found is not None and found.length == 4096
    assert "holds 32768" in found.source and "OLLAMA_CONTEXT_LENGTH" in found.source


async def test_llama_cpp_announces_its_n_ctx() -> None:
    async with FakeLocalServer.llama_cpp(8192) as server:
        found = await announced_context(server.base_url, "smollm2")
    assert found == Announced(8192, "llama.cpp /props (n_ctx)")
    assert [path for _, path, _ in server.asked] == ["/api/show", "/props"]


async def test_lm_studio_announces_the_loaded_length_of_the_model_asked_for() -> None:
    async with FakeLocalServer.lm_studio("qwen2.5-7b-instruct", 32_768, loaded=4096) as server:
        found = await announced_context(server.base_url, "qwen2.5-7b-instruct")
    assert found == Announced(4096, "LM Studio /api/v0/models (qwen2.5-7b-instruct loaded)")


async def test_lm_studio_with_the_model_not_loaded_announces_its_maximum() -> None:
    async with FakeLocalServer.lm_studio("qwen2.5-7b-instruct", 32_768) as server:
        found = await announced_context(server.base_url, "qwen2.5-7b-instruct")
    assert found is not None and found.length == 32_768


async def test_a_server_that_announces_nothing_gives_none() -> None:
    async with FakeLocalServer({}) as server:
        assert await announced_context(server.base_url, MODEL) is None
    assert len(server.asked) == 3


async def test_nothing_listening_gives_none() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert await announced_context(f"http://127.0.0.1:{port}/v1", MODEL) is None


def local(base_url: str, window: int | str = "auto") -> LLMSettings:
    return LLMSettings.model_validate(
        {"provider": "openai", "base_url": base_url, "model": MODEL, "context_window": window}
    )


async def test_auto_uses_what_the_server_announces() -> None:
    async with FakeLocalServer.ollama(MODEL, 32_768, num_ctx=12_288) as server:
        assert await resolve_context_window(local(server.base_url)) == 12_288


async def test_auto_with_a_silent_local_server_falls_back_to_8192() -> None:
    async with FakeLocalServer({}) as server:
        assert await resolve_context_window(local(server.base_url)) == 8192


async def test_auto_with_anthropic_is_200000_without_asking_anyone() -> None:
    llm = LLMSettings.model_validate({"context_window": "auto"})
    assert await resolve_context_window(llm) == 200_000


async def test_a_number_is_used_as_it_is_without_asking() -> None:
    async with FakeLocalServer.llama_cpp(4096) as server:
        assert await resolve_context_window(local(server.base_url, 32_768)) == 32_768
    assert server.asked == []


@pytest.mark.parametrize("value", ["auto", "8192", 8192])
def test_the_setting_takes_a_number_or_auto(value: object) -> None:
    assert LLMSettings.model_validate({"context_window": value}).context_window in ("auto", 8192)


@pytest.mark.parametrize("value", ["big", 512])
def test_the_setting_refuses_other_words_and_tiny_windows(value: object) -> None:
    with pytest.raises(ValueError, match="context_window"):
        LLMSettings.model_validate({"context_window": value})


def test_doctor_warns_when_the_setting_exceeds_what_the_server_holds() -> None:
    announced = Announced(4096, "llama.cpp /props (n_ctx)")
    warning = window_mismatch(announced, 200_000)
    assert warning is not None
    assert warning.startswith("the server announces 4096 tokens (llama.cpp /props (n_ctx))")
    assert "llm.context_window is 200000" in warning and "llm.context_window = 4096" in warning
    assert window_mismatch(announced, 4096) is None and window_mismatch(announced, "auto") is None
