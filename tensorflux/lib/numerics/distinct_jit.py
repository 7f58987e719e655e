"""Compiled "first distinct values of a stream", the core of unique candidate sampling.

A unique sampler keeps the first `count` distinct values of an i.i.d. stream of ids, in order
of first appearance, and reports how many draws that took. The NumPy reference
(`ops/nn/candidate_sampling.py`, `_first_distinct`: a stable argsort, a comparison of
neighbours, a second sort of the positions) costs ~10 us on 144 draws, mostly in per-call
dispatch. Here one compiled loop walks the stream once with a small open-addressing hash set
(linear probing, sized at least four times `count`, so it never fills): the same ids in the same
order and the same number of draws, by construction. The stream may arrive in chunks; the
state (`table`, `out`, the count found so far) carries over from one chunk to the next.
"""

from __future__ import annotations

import numpy as np

from tensorflux.lib.numerics import jit as jit_mod

_EMPTY = -1  # ids are non-negative


class DistinctCollector:
    """Collects the first `count` distinct non-negative int64 ids of a chunked stream.

    Example:
        >>> collector = DistinctCollector(3)
        >>> collector.feed(np.array([4, 4, 7, 1, 9]))  # True: three found
        >>> collector.ids(), collector.tries
    """

    def __init__(self, count: int):
        self.count = int(count)
        size = 1 << max(4, (4 * self.count - 1).bit_length())
        self.table = np.full(size, _EMPTY, np.int64)
        self.out = np.empty(self.count, np.int64)
        self.found = 0
        self.tries = 0  # draws consumed up to and including the last one kept

    def feed(self, chunk: np.ndarray) -> bool:
        """Scans `chunk` (non-negative int64 ids); True once `count` distinct ids are found."""
        found, used = _scan(np.ascontiguousarray(chunk, np.int64), self.table, self.out,
                            self.found, self.count)
        self.tries += used
        self.found = found
        return found == self.count

    def ids(self) -> np.ndarray:
        """The distinct ids found, in order of first appearance."""
        return self.out[:self.found]


@jit_mod.jit
def _scan(chunk, table, out, found, count):
    mask = table.shape[0] - 1
    for i in range(chunk.shape[0]):
        if found == count:
            return found, i
        value = chunk[i]
        slot = (value * 0x9E3779B1) & mask
        while True:
            held = table[slot]
            if held == value:
                break
            if held == -1:
                table[slot] = value
                out[found] = value
                found += 1
                break
            slot = (slot + 1) & mask
    return found, chunk.shape[0]
