"""`tf.debugging`: assertions and numeric checks."""

from tensorflux.ops.debug.checks import *  # noqa: F403
from tensorflux.ops.debug.logging import Assert, check_numerics
from tensorflux.ops.debug.shape_checks import assert_shapes
