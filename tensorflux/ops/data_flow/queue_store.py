"""Element storage for queues: a growable ring of fixed-shape arrays, or a list of tuples.

Contract: a store holds whole elements (one value per component). `take_front(n)` and
`take_indices(idx)` remove elements and return them as a *chunk*; `push_front(chunk)` puts a
chunk back where it came from (the front), so a dequeue that gives up restores the queue
exactly. Stores are not thread-safe: the owning queue holds its lock around every call.

`DenseStore` (every component shape fully defined) keeps one ring buffer per component, so
enqueue_many and dequeue_many are slice copies, and random removal is one fancy-indexed gather
plus a vectorised move of tail elements into the holes. `ListStore` keeps one tuple per element
for queues whose element shapes vary; its batches are stacked (or padded) on the way out.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from tensorflux.framework import errors


class DenseStore:
    """Ring buffers of `(slots,) + shape` per component; a chunk is a tuple of batch arrays."""

    dense = True

    def __init__(self, np_dtypes, shapes):
        self._dtypes = list(np_dtypes)
        self._shapes = [tuple(s) for s in shapes]
        self._bufs = [np.empty((0,) + s, d) for d, s in zip(self._dtypes, self._shapes)]
        self._slots = 0
        self._head = 0
        self._count = 0
        self._has_objects = any(d == np.object_ for d in self._dtypes)

    def __len__(self) -> int:
        return self._count

    # -- layout helpers --------------------------------------------------------------------

    def _segments(self, start: int, n: int):
        """Physical (lo, hi, offset) runs covering logical positions [start, start + n)."""
        if n <= 0:
            return []
        lo = (self._head + start) % self._slots
        first = min(n, self._slots - lo)
        runs = [(lo, lo + first, 0)]
        if first < n:
            runs.append((0, n - first, first))
        return runs

    def _phys(self, logical):
        return (self._head + logical) % self._slots

    def _reserve(self, extra: int) -> None:
        need = self._count + extra
        if need <= self._slots:
            return
        slots = max(need, 2 * self._slots, 8)
        order = self._phys(np.arange(self._count)) if self._count else None
        bufs = []
        for buf, dtype, shape in zip(self._bufs, self._dtypes, self._shapes):
            new = np.empty((slots,) + shape, dtype)
            if order is not None:
                new[:self._count] = buf[order]
            bufs.append(new)
        self._bufs = bufs
        self._slots = slots
        self._head = 0

    def _clear(self, runs) -> None:
        if self._has_objects:
            for buf, dtype in zip(self._bufs, self._dtypes):
                if dtype == np.object_:
                    for lo, hi, _ in runs:
                        buf[lo:hi] = None

    # -- elements in -----------------------------------------------------------------------

    def push(self, batch, start: int, stop: int) -> None:
        """Appends rows [start, stop) of `batch` (one array per component, batch first)."""
        n = stop - start
        self._reserve(n)
        for lo, hi, off in self._segments(self._count, n):
            for buf, comp in zip(self._bufs, batch):
                buf[lo:hi] = comp[start + off:start + off + hi - lo]
        self._count += n

    def push_one(self, element) -> None:
        self._reserve(1)
        slot = self._phys(self._count)
        for buf, comp in zip(self._bufs, element):
            buf[slot, ...] = comp  # NOTE: `buf[slot] = a0d` would store the array object
        self._count += 1

    def push_front(self, chunk) -> None:
        n = chunk_len(chunk)
        self._reserve(n)
        self._head = (self._head - n) % self._slots
        self._count += n
        for lo, hi, off in self._segments(0, n):
            for buf, comp in zip(self._bufs, chunk):
                buf[lo:hi] = comp[off:off + hi - lo]

    # -- elements out ----------------------------------------------------------------------

    def take_front(self, n: int):
        out = [np.empty((n,) + s, d) for d, s in zip(self._dtypes, self._shapes)]
        runs = self._segments(0, n)
        for lo, hi, off in runs:
            for dst, buf in zip(out, self._bufs):
                dst[off:off + hi - lo] = buf[lo:hi]
        self._clear(runs)
        self._head = (self._head + n) % self._slots if self._slots else 0
        self._count -= n
        return tuple(out)

    def take_indices(self, indices):
        """Removes the elements at logical `indices` (distinct); the rest may be reordered."""
        indices = np.asarray(indices, np.int64)
        n = len(indices)
        phys = self._phys(indices)
        out = tuple(buf[phys] for buf in self._bufs)
        keep_limit = self._count - n
        holes = indices[indices < keep_limit]
        if len(holes):
            tail = np.arange(keep_limit, self._count)
            movers = tail[~np.isin(tail, indices)]
            src = self._phys(movers)
            dst = self._phys(holes)
            for buf in self._bufs:
                buf[dst] = buf[src]
        self._clear(self._segments(keep_limit, n))
        self._count = keep_limit
        return out

    def column(self, index: int):
        """Component `index` of every element, in logical order."""
        return self._bufs[index][self._phys(np.arange(self._count))]

    def clear(self) -> None:
        self._clear(self._segments(0, self._count))
        self._count = 0


class ListStore:
    """One tuple of arrays per element; a chunk is a list of element tuples."""

    dense = False

    def __init__(self):
        self._items: deque = deque()

    def __len__(self) -> int:
        return len(self._items)

    def push(self, batch, start: int, stop: int) -> None:
        for row in range(start, stop):
            self._items.append(tuple(np.array(comp[row]) for comp in batch))

    def push_one(self, element) -> None:
        self._items.append(tuple(element))

    def push_front(self, chunk) -> None:
        self._items.extendleft(reversed(chunk))

    def take_front(self, n: int):
        items = self._items
        return [items.popleft() for _ in range(n)]

    def take_indices(self, indices):
        chosen = set(int(i) for i in indices)
        taken = [item for i, item in enumerate(self._items) if i in chosen]
        self._items = deque(item for i, item in enumerate(self._items) if i not in chosen)
        return taken

    def column(self, index: int):
        return np.array([item[index] for item in self._items])

    def clear(self) -> None:
        self._items.clear()


def chunk_len(chunk) -> int:
    if isinstance(chunk, list):
        return len(chunk)
    return len(chunk[0]) if chunk else 0


def concat_chunks(chunks):
    """One chunk holding `chunks` in order."""
    if len(chunks) == 1:
        return chunks[0]
    if isinstance(chunks[0], list):
        return [item for chunk in chunks for item in chunk]
    return tuple(np.concatenate(parts) for parts in zip(*chunks))


def chunk_as_element(chunk) -> tuple:
    """The components of a one-element chunk (no batch dimension)."""
    if isinstance(chunk, list):
        return chunk[0]
    return tuple(comp[0, ...] for comp in chunk)


def chunk_as_batch(chunk, np_dtypes, shapes, pad: bool, queue_desc: str) -> tuple:
    """Batched components of a chunk: stacked, or padded to the largest element if `pad`."""
    if not isinstance(chunk, list):
        return chunk
    n = len(chunk)
    out = []
    for i, dtype in enumerate(np_dtypes):
        parts = [item[i] for item in chunk]
        if not pad:
            first = parts[0].shape if parts else None
            for part in parts:
                if part.shape != first:
                    raise errors.InvalidArgumentError(
                        None, None, f"{queue_desc}: DequeueMany and DequeueUpTo require the "
                        f"components to have specified shapes (component {i} has shapes "
                        f"{first} and {part.shape}).")
            if not parts:
                if shapes[i] is None or not shapes[i].is_fully_defined():
                    raise errors.InvalidArgumentError(
                        None, None, f"{queue_desc}: DequeueMany and DequeueUpTo require the "
                        "components to have specified shapes.")
                out.append(np.empty([0] + shapes[i].as_list(), dtype))
            else:
                out.append(np.stack(parts).astype(dtype, copy=False))
            continue
        known = shapes[i].as_list() if shapes[i] is not None and shapes[i].rank is not None \
            else None
        rank = len(known) if known is not None else (parts[0].ndim if parts else 0)
        dims = [max((p.shape[d] for p in parts), default=0) for d in range(rank)]
        if known is not None:
            dims = [k if k is not None else d for k, d in zip(known, dims)]
        fill = b"" if dtype == np.object_ else 0
        batch = np.full([n] + dims, fill, dtype=dtype)
        for row, part in enumerate(parts):
            batch[(row,) + tuple(slice(0, s) for s in part.shape) + (Ellipsis,)] = part
        out.append(batch)
    return tuple(out)
