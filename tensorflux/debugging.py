"""`tf.debugging`: assertions and numeric checks."""

from tensorflux.ops.check_ops import *  # noqa: F403
from tensorflux.ops.logging_ops import Assert, check_numerics
