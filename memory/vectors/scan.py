"""The exact nearest-neighbour scan, and the bounded cache of scope matrices it reads.

A scope's vectors are scanned with one matrix product per block; the blocks of the
scopes searched lately stay in memory (least recently used dropped first, within
a byte budget), so a recall does not re-read the scope from disk. A scope larger
than the whole budget is streamed from the database block by block instead.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memory.vectors.rows import Vector

# Blocks a cached scope may gather from appends before they are joined into one.
MAX_BLOCKS = 8


@dataclass(frozen=True)
class Block:
    """Row ids and their unit vectors, one row each."""

    ids: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]

    @property
    def nbytes(self) -> int:
        return self.ids.nbytes + self.matrix.nbytes


def top_k(blocks: Iterable[Block], query: Vector, limit: int) -> list[tuple[int, float]]:
    """The `limit` row ids of highest cosine to the unit vector `query`, best first. A row
    whose score is not finite (NaN or an infinity, stored before vectors were checked)
    is never a hit: NaN would otherwise rank first for every query."""
    best_ids = np.empty(0, dtype=np.int64)
    best_scores = np.empty(0, dtype=np.float32)
    for block in blocks:
        if not len(block.ids):
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            scores = block.matrix @ query
        ids = block.ids
        finite = np.isfinite(scores)
        if not finite.all():
            scores, ids = scores[finite], ids[finite]
        if len(scores) > limit:
            keep = np.argpartition(scores, -limit)[-limit:]
            scores, ids = scores[keep], ids[keep]
        best_ids = np.concatenate([best_ids, ids])
        best_scores = np.concatenate([best_scores, scores])
        if len(best_scores) > limit:
            keep = np.argpartition(best_scores, -limit)[-limit:]
            best_ids, best_scores = best_ids[keep], best_scores[keep]
    order = np.lexsort((best_ids, -best_scores))
    return [(int(best_ids[i]), float(best_scores[i])) for i in order]


class ScopeCache:
    """Matrices of recently searched scopes, at most `limit_bytes` in all."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        self._entries: OrderedDict[str, list[Block]] = OrderedDict()
        self._bytes = 0

    @property
    def nbytes(self) -> int:
        return self._bytes

    def get(self, scope: str) -> list[Block] | None:
        blocks = self._entries.get(scope)
        if blocks is not None:
            self._entries.move_to_end(scope)
        return blocks

    def fits(self, nbytes: int) -> bool:
        return nbytes <= self.limit_bytes

    def put(self, scope: str, blocks: list[Block]) -> None:
        """Keep `blocks` as the scope's whole matrix (if it fits the budget at all)."""
        self.drop(scope)
        size = sum(block.nbytes for block in blocks)
        if not self.fits(size):
            return
        self._entries[scope] = blocks
        self._bytes += size
        self._evict()

    def append(self, scope: str, block: Block) -> None:
        """New rows of a cached scope join its matrix; an uncached scope is left alone
        (it is read whole when it is next searched)."""
        blocks = self._entries.get(scope)
        if blocks is None:
            return
        blocks.append(block)
        self._bytes += block.nbytes
        if len(blocks) > MAX_BLOCKS:
            joined = Block(
                np.concatenate([b.ids for b in blocks]),
                np.concatenate([b.matrix for b in blocks]),
            )
            self._entries[scope] = [joined]
        if not self.fits(sum(b.nbytes for b in self._entries[scope])):
            self.drop(scope)
        self._evict()

    def drop(self, scope: str) -> None:
        blocks = self._entries.pop(scope, None)
        if blocks is not None:
            self._bytes -= sum(block.nbytes for block in blocks)

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0

    def _evict(self) -> None:
        while self._bytes > self.limit_bytes and self._entries:
            _, blocks = self._entries.popitem(last=False)
            self._bytes -= sum(block.nbytes for block in blocks)
