"""`tf.manip`: TF 1.x's namespace of array manipulation ops (re-exports only)."""

from tensorflux.ops.array.gather_scatter import gather_nd, scatter_nd
from tensorflux.ops.array.padding import reverse, tile
from tensorflux.ops.array.shapes import reshape
from tensorflux.ops.array.sorting import roll
from tensorflux.ops.array.space_batch import batch_to_space_nd, space_to_batch_nd
