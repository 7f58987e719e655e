"""`tf.dtypes`: the DType class, `as_dtype`, the dtype constants and the casts."""

from tensorflux.framework.dtypes import *  # noqa: F403
from tensorflux.framework.dtypes import DType, QUANTIZED_DTYPES, as_dtype, bool_
from tensorflux.ops.math.casting import cast, saturate_cast
from tensorflux.ops.strings.conversion import as_string
from tensorflux.ops.math.unary import complex

bool = bool_  # noqa: A001 - TF name
