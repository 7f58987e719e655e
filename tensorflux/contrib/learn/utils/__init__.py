"""`tf.contrib.learn.utils`: `input_fn_utils` (serving input functions for export)."""

from tensorflux.contrib.learn.utils import input_fn_utils

__all__ = ["input_fn_utils"]
