"""Local model servers as far as their context length goes: Ollama, llama.cpp's server and
LM Studio each answer their own native endpoints, 404 the others', and record the paths
asked, so a test sees which server kioku recognised and how."""

from __future__ import annotations

from typing import Any, Self

from aiohttp import web


class FakeLocalServer:
    def __init__(self, answers: dict[tuple[str, str], dict[str, Any]]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, str, Any]] = []
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    @classmethod
    def ollama(
        cls, model: str, most: int, *, num_ctx: int | None = None, loaded: int | None = None
    ) -> Self:
        parameters = f'stop "<|im_end|>"\nnum_ctx {num_ctx}' if num_ctx else 'stop "<|im_end|>"'
        running = [{"name": model, "model": model, "context_length": loaded}] if loaded else []
        return cls(
            {
                ("POST", "/api/show"): {
                    "parameters": parameters,
                    "model_info": {"general.architecture": "qwen2", "qwen2.context_length": most},
                },
                ("GET", "/api/ps"): {"models": running},
            }
        )

    @classmethod
    def llama_cpp(cls, n_ctx: int) -> Self:
        settings = {"n_ctx": n_ctx, "params": {"n_predict": -1}}
        return cls({("GET", "/props"): {"default_generation_settings": settings}})

    @classmethod
    def lm_studio(cls, model: str, most: int, *, loaded: int | None = None) -> Self:
        entry: dict[str, Any] = {"id": model, "state": "not-loaded", "max_context_length": most}
        if loaded:
            entry |= {"state": "loaded", "loaded_context_length": loaded}
        other = {"id": "another-model", "max_context_length": 1_000_000}
        return cls({("GET", "/api/v0/models"): {"object": "list", "data": [other, entry]}})

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json() if request.can_read_body else None
        self.asked.append((request.method, request.path, body))
        answer = self.answers.get((request.method, request.path))
        if answer is None:
            return web.json_response({"error": "not found"}, status=404)
        return web.json_response(answer)

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()
