"""Ragged tensors: `tf.RaggedTensor` (values + row_splits) and the `tf.ragged` factories.

The family facade: importing it registers the RaggedTensor session conversions.
"""

from tensorflux.ops.ragged import (
    ragged_tensor,
    factories,
)
