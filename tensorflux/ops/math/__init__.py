"""Math ops: elementwise arithmetic, unary functions, comparisons, reductions, matrix products,
casts, selects, sequences, segments, special functions, bitwise ops, histograms and clipping.

The family facade (TensorFlow's `math_ops`): importing it registers every op, kernel and
gradient of the family, and it re-exports the public wrappers of its core modules.
"""

from tensorflux.ops.math.binary import *  # noqa: F403
from tensorflux.ops.math.casting import *  # noqa: F403
from tensorflux.ops.math.comparison import *  # noqa: F403
from tensorflux.ops.math.matrix_product import *  # noqa: F403
from tensorflux.ops.math.reduction import *  # noqa: F403
from tensorflux.ops.math.segment import *  # noqa: F403
from tensorflux.ops.math.select import *  # noqa: F403
from tensorflux.ops.math.sequence import *  # noqa: F403
from tensorflux.ops.math.unary import *  # noqa: F403
from tensorflux.ops.math.bitwise import compare_and_bitpack
from tensorflux.ops.math import (
    binary,
    casting,
    comparison,
    matrix_product,
    reduction,
    segment,
    select,
    sequence,
    unary,
    special,
    bitwise,
    histogram,
    clip,
    nan_safe,
    broadcast_gradient,
    weights_broadcast,
)

__all__ = [name for module in (binary, casting, comparison, matrix_product, reduction, segment,
                               select, sequence, unary)
           for name in module.__all__] + ["compare_and_bitpack"]
