"""`tf.debugging`: assertions and numeric checks."""

from tensorflux.ops.check_ops import *  # noqa: F403
