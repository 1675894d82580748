"""`kioku serve` with `llm.context_window = "auto"` asks the local server once at start and
logs what it runs with."""

from __future__ import annotations

from tests.fakes.local_model_servers import FakeLocalServer
from tests.helpers.logged_daemon import daemon


def local_model(base_url: str) -> dict[str, str]:
    return {
        "KIOKU_LLM__PROVIDER": "openai",
        "KIOKU_LLM__BASE_URL": base_url,
        "KIOKU_LLM__MODEL": "smollm2",
        "KIOKU_LLM__CONTEXT_WINDOW": "auto",
    }


async def test_the_daemon_runs_with_the_length_llama_cpp_announces() -> None:
    async with (
        FakeLocalServer.llama_cpp(8192) as server,
        daemon(**local_model(server.base_url)) as events,
    ):
        found = [e for e in events if e.get("event") == "context_window_announced"]
    assert found and found[0]["tokens"] == 8192
    assert found[0]["source"] == "llama.cpp /props (n_ctx)"


async def test_a_silent_server_is_logged_and_the_daemon_runs_with_8192() -> None:
    async with FakeLocalServer({}) as server, daemon(**local_model(server.base_url)) as events:
        guessed = [e for e in events if e.get("event") == "context_window_guessed"]
    assert guessed and guessed[0]["tokens"] == 8192 and guessed[0]["level"] == "warning"
