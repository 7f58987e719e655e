"""Test inputs for compiled kernels: normal floats with NaN, ±inf and ±0 mixed in."""

import numpy as np


def floats(rng, shape, dtype, specials: bool, scale: float = 3.0, every: int = 6):
    """`rng.standard_normal(shape) * scale` as `dtype`; with `specials`, about one element in
    `every` (at least one) becomes NaN, +inf, -inf, 0.0 or -0.0."""
    x = (rng.standard_normal(shape) * scale).astype(dtype)
    if specials and x.size:
        flat = x.reshape(-1)
        picks = rng.integers(0, flat.size, size=max(1, flat.size // every))
        flat[picks] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], size=picks.size)
    return x
