"""`tensorflow.contrib.learn.python.learn.utils` (alias of `tf.contrib.learn.utils`)."""

from tensorflux.contrib.learn.utils import input_fn_utils

__all__ = ["input_fn_utils"]
