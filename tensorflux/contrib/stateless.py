"""`tf.contrib.stateless`: random ops determined by a `seed` tensor of two ints (TF 1.15)."""

from tensorflux.contrib import missing as _missing
from tensorflux.ops.random.stateless import (
    stateless_multinomial,
    stateless_random_normal,
    stateless_random_uniform,
    stateless_truncated_normal,
)

__all__ = ["stateless_multinomial", "stateless_random_normal", "stateless_random_uniform",
           "stateless_truncated_normal"]

__getattr__ = _missing.module_getattr("contrib.stateless", {"*": "tf.random.stateless_*"})
