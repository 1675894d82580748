"""`DecodeSlots`: the few threads, shared by the whole daemon, that decode images.

A decoded image costs up to 4 bytes a pixel (200 MB at `media.image_max_pixels`' 50
million), and a PNG of that size can be a 143 KB file. Six people sending one each at
once would hold six at once on the default executor; with `media.decode_slots` threads
of their own (default 1), the others wait for a slot and the event loop is never held.
Threads of their own also keep what a decode frees where the next one reuses it: six
49-megapixel PNGs decoded one after another on the default executor's threads peaked
at 443 MB, on one thread of their own at 230 MB (each thread's allocator arena keeps
its freed memory).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class DecodeSlots:
    """At most `slots` decodes run at once; the rest queue in arrival order. `close`
    it on shutdown: a decode not yet started is dropped, one under way finishes."""

    def __init__(self, slots: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=slots, thread_name_prefix="kioku-decode")

    async def run(self, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`work(*args, **kwargs)` in a slot, in the caller's context (as `to_thread`)."""
        call = functools.partial(contextvars.copy_context().run, work, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
