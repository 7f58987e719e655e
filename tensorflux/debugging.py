"""`tf.debugging`: assertions and numeric checks."""

from tensorflux.framework.behavior import set_log_device_placement
from tensorflux.framework.tensor_util import is_numeric_tensor
from tensorflux.ops.debug.checks import *  # noqa: F403
from tensorflux.ops.debug.checks import (assert_near, assert_proper_iterable, assert_rank_in,
                                         assert_same_float_dtype)
from tensorflux.ops.debug.checks import verify_tensor_all_finite as assert_all_finite
from tensorflux.ops.debug.logging import Assert, check_numerics
from tensorflux.ops.debug.shape_checks import assert_shapes
from tensorflux.ops.math.nan_safe import is_non_decreasing, is_strictly_increasing
from tensorflux.ops.math.unary import is_finite, is_inf, is_nan
