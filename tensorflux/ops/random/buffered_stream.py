"""A stateful random op's stream drawn a block at a time: small draws served from the block.

Per-example preprocessing draws a few values per run from each op (random_crop's offsets, a
flip's coin, a brightness delta). NumPy's draw of one value costs 5-15 us of Python-level
argument handling (more for `integers`), all of it with the GIL held, per value; a block of
values costs about as much as one. `BufferedStream` draws `BLOCK` values at once and hands them
out in order.

Values: an element of an array draw consumes the bit generator exactly as a draw of one value
does (for `Generator.random` and `Generator.integers`, whatever the dtype; the stream tests
check it), so the values handed out, in order, are the ones value-by-value draws would give.
A block is drawn for one set of draw arguments (`integers`' bounds); when the arguments change,
the generator is put back where the values handed out end (its state from before the block,
then one array draw of as many values as were handed out), so the next values are the ones the
unbuffered stream gives. A block is only drawn for arguments used twice in a row, so an op
whose bounds change every run never draws (and rewinds) blocks.

Threads: one lock per stream; a block is drawn while holding it (NumPy releases the GIL for the
fill), so every value is handed out once.
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["BufferedStream", "BLOCK", "SMALL"]

# Values drawn per block.
BLOCK = 256

# Draws of at most this many values are served from the block; larger ones are array draws
# (after what is left of the block).
SMALL = 16


def _count(dims: tuple) -> int:
    count = 1
    for d in dims:
        count *= d
    return count


class BufferedStream:
    """The values of `draw(*args, size=..., dtype=dtype)` of one generator, in stream order.

    Args:
        generator: the op's `numpy.random.Generator`; nothing else may draw from it.
        draw: the generator's bound method (`generator.random` or `generator.integers`).
        dtype: the NumPy dtype drawn.
    """

    __slots__ = ("_generator", "_draw", "_dtype", "_lock", "_args", "_uses", "_block", "_pos",
                 "_state")

    def __init__(self, generator: np.random.Generator, draw, dtype):
        self._generator = generator
        self._draw = draw
        self._dtype = np.dtype(dtype)
        self._lock = threading.Lock()
        self._args: tuple | None = None
        self._uses = 0
        self._block = None
        self._pos = 0
        self._state = None

    def take(self, dims: tuple, *args) -> np.ndarray:
        """The next `dims`-shaped array of the stream (a fresh array; `dims == ()`: 0-d).

        Args:
            dims: the shape, a tuple of non-negative Python ints.
            *args: the draw's positional arguments (`integers`' low and high).

        Returns:
            An array of the stream's dtype.
        """
        count = _count(dims)
        with self._lock:
            if args != self._args:
                self._rewind()
                self._args = args
                self._uses = 0
            self._uses += 1
            if self._uses < 2 and self._block is None:
                return self._direct(dims, count, args)
            block, pos = self._block, self._pos
            if block is None or pos + count > block.shape[0]:
                if count > SMALL:
                    return self._large(dims, count, args)
                head = block[pos:] if block is not None else block
                self._fill(args)
                if head is not None and head.shape[0]:
                    block, pos = self._block, count - head.shape[0]
                    self._pos = pos
                    values = np.concatenate([head, block[:pos]])
                    return values.reshape(dims)
                block, pos = self._block, 0
            self._pos = pos + count
            if not dims:
                return np.array(block[pos], self._dtype)
            values = block[pos:pos + count].copy()
            return values.reshape(dims) if len(dims) != 1 else values

    def _direct(self, dims: tuple, count: int, args: tuple) -> np.ndarray:
        dtype = self._dtype
        if not dims:
            return np.array(self._draw(*args, dtype=dtype), dtype)
        if count > SMALL:
            return self._draw(*args, size=dims, dtype=dtype)
        # NOTE: value by value (NumPy's scalar path keeps the GIL): the same values.
        values = np.array([self._draw(*args, dtype=dtype) for _ in range(count)], dtype)
        return values.reshape(dims) if len(dims) != 1 else values

    def _large(self, dims: tuple, count: int, args: tuple) -> np.ndarray:
        block = self._block
        head = block[self._pos:] if block is not None else None
        self._block, self._state, self._pos = None, None, 0
        if head is None or not head.shape[0]:
            return self._draw(*args, size=dims, dtype=self._dtype)
        rest = self._draw(*args, size=count - head.shape[0], dtype=self._dtype)
        return np.concatenate([head, rest]).reshape(dims)

    def _fill(self, args: tuple) -> None:
        self._state = self._generator.bit_generator.state
        self._block = self._draw(*args, size=BLOCK, dtype=self._dtype)
        self._pos = 0

    def _rewind(self) -> None:
        """Puts the generator where the values handed out end (drops the block's rest)."""
        block = self._block
        if block is None:
            return
        served = self._pos
        self._generator.bit_generator.state = self._state
        if served:
            self._draw(*self._args, size=served, dtype=self._dtype)
        self._block, self._state, self._pos = None, None, 0
