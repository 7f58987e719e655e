"""Array ops: constants, shapes, joins, slicing, gathers, padding, partitions, diagonals, sorting
and sets.

The family facade (TensorFlow's `array_ops`): importing it registers every op, kernel and
gradient of the family, and it re-exports the public wrappers of its core modules.
"""

from tensorflux.ops.array.constants import *  # noqa: F403
from tensorflux.ops.array.shapes import *  # noqa: F403
from tensorflux.ops.array.concat_split import *  # noqa: F403
from tensorflux.ops.array.padding import *  # noqa: F403
from tensorflux.ops.array.slicing import *  # noqa: F403
from tensorflux.ops.array.gather_scatter import *  # noqa: F403
from tensorflux.ops.array.partition import *  # noqa: F403
from tensorflux.ops.array.diagonal import *  # noqa: F403
from tensorflux.ops.array import (
    constants,
    shapes,
    concat_split,
    padding,
    slicing,
    gather_scatter,
    partition,
    diagonal,
    util,
    space_batch,
    tensor_scatter,
    sorting,
    sets,
    gradient_helpers,
    fake_quant,
    quantize,
    fingerprint,
    inplace,
)
from tensorflux.ops.array import forwarding  # noqa: E402,F401 - Snapshot, GuaranteeConst, Ref*
# TensorFlow's array_ops also exposes tf.where (defined with the selects).
from tensorflux.ops.math.select import where  # noqa: E402

__all__ = [name for module in (constants, shapes, concat_split, padding, slicing, gather_scatter,
                               partition, diagonal)
           for name in module.__all__]
