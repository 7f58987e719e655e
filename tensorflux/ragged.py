"""The `tf.ragged` namespace."""

from tensorflux.ops.ragged.factories import constant, range  # noqa: A004 - TF name
from tensorflux.ops.ragged.ragged_tensor import RaggedTensorValue

__all__ = ["constant", "range", "RaggedTensorValue"]
