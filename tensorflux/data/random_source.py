"""`tf.data.experimental.RandomDataset`: an infinite dataset of uniform random int64 scalars.

As in TF: with an op- or graph-level seed every initialization yields the same sequence;
without one each initialization draws a new seed (recorded, so a saved iterator state
replays it). The values cover the whole int64 range (negative ones included); the bit stream
is NumPy's PCG64, not TF's Philox, so sequences differ from TF's for the same seed.
"""

from __future__ import annotations

import numpy as np

from tensorflux.data.dataset_ops import Dataset
from tensorflux.framework import dtypes
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.random.seed import get_seed

__all__ = ["RandomDataset"]

_CHUNK = 256  # values drawn at once (the stream does not depend on it)


class RandomDataset(Dataset):
    """Uniform random int64 scalars, forever.

    Example:
        >>> ds = tf.data.experimental.RandomDataset(seed=7).take(3)

    Raises:
        TypeError: a non-integer seed; ValueError: a seed tensor that is not constant.
    """

    def __init__(self, seed=None):
        if isinstance(seed, Tensor):
            folded = constant_value(seed)
            if folded is None:
                raise ValueError(f"RandomDataset(): seed must be constant, got '{seed.name}'")
            seed = folded
        if seed is not None:
            if isinstance(seed, (bool, float)) or not np.issubdtype(np.asarray(seed).dtype,
                                                                    np.integer):
                raise TypeError(f"RandomDataset(): seed must be an integer, got {seed!r}")
            seed = int(seed)
        self._seeds = get_seed(seed)
        super().__init__([], [], [dtypes.int64], [TensorShape([])], 0)

    def _iterate(self, ctx):
        seed, seed2 = self._seeds
        rng = np.random.default_rng(ctx.draw_seed() if seed is None else [seed, seed2])
        info = np.iinfo(np.int64)
        while True:
            for value in rng.integers(info.min, info.max, size=_CHUNK, dtype=np.int64,
                                      endpoint=True):
                yield (np.array(value, dtype=np.int64),)
