"""`DecodeSlots`: the few threads, shared by the whole daemon, that decode images.

A decoded image costs up to 4 bytes a pixel (200 MB at `media.image_max_pixels`' 50
million), and a PNG of that size can be a 143 KB file. Six people sending one each at
once would hold six at once on the default executor; with `media.decode_slots` threads
of their own (default 1), the others wait for a slot and the event loop is never held.
Threads of their own also keep what a decode frees where the next one reuses it: six
49-megapixel PNGs decoded one after another on the default executor's threads peaked
at 443 MB, on one thread of their own at 230 MB (each thread's allocator arena keeps
its freed memory). After each decode the freed pages go back to the system (glibc's
`malloc_trim`), so a daemon that read one large picture does not keep its size: 53 MB
after three such decodes instead of 207.
"""

from __future__ import annotations

import asyncio
import contextvars
import ctypes
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


def _trimmer() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, or None where the C library has none (musl, macOS)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


_TRIM = _trimmer()


class DecodeSlots:
    """At most `slots` decodes run at once; the rest queue in arrival order. `close`
    it on shutdown: a decode not yet started is dropped, one under way finishes."""

    def __init__(self, slots: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=slots, thread_name_prefix="kioku-decode")

    async def run(self, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`work(*args, **kwargs)` in a slot, in the caller's context (as `to_thread`)."""
        context = contextvars.copy_context()

        def decode() -> T:
            try:
                return context.run(work, *args, **kwargs)
            finally:
                if _TRIM is not None:
                    _TRIM(0)

        return await asyncio.get_running_loop().run_in_executor(self._pool, decode)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
