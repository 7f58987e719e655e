"""`tf.dtypes`: the DType class, `as_dtype`, the dtype constants and the casts."""

from tensorflux.framework.dtypes import *  # noqa: F403
from tensorflux.framework.dtypes import DType, QUANTIZED_DTYPES, as_dtype, bool_
from tensorflux.ops.cast_ops import cast, saturate_cast
from tensorflux.ops.string_ops import as_string
from tensorflux.ops.unary_ops import complex

bool = bool_  # noqa: A001 - TF name
