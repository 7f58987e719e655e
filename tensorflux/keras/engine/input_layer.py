"""`InputLayer` and `Input`: the placeholders functional and Sequential models start from."""

from __future__ import annotations

from tensorflux.framework import tensor_conversion
from tensorflux.keras import backend
from tensorflux.keras.engine.base_layer import _HISTORY, Layer, Node
from tensorflux.ops import array as array_ops

__all__ = ["InputLayer", "Input"]


class InputLayer(Layer):
    """A layer whose output is a placeholder of `batch_input_shape` (or wraps `input_tensor`)."""

    def __init__(
        self,
        input_shape=None,
        batch_size=None,
        dtype=None,
        input_tensor=None,
        sparse=False,
        name=None,
        batch_input_shape=None,
        **kwargs,
    ):
        if sparse:
            raise ValueError("InputLayer: sparse inputs are not supported.")
        if name is None:
            name = f"input_{backend.get_uid('input')}"
        super().__init__(
            name=name,
            dtype=dtype,
            input_shape=input_shape,
            batch_input_shape=batch_input_shape,
            batch_size=batch_size,
            **kwargs,
        )
        if input_tensor is None:
            if self._batch_input_shape is None:
                raise ValueError(f'InputLayer "{name}": give input_shape or batch_input_shape.')
            input_tensor = array_ops.placeholder(
                self.dtype, shape=self._batch_input_shape, name=name
            )
        else:
            input_tensor = tensor_conversion.convert_to_tensor(input_tensor)
            self.dtype = input_tensor.dtype.base_dtype.name
            shape = input_tensor.get_shape()
            self._batch_input_shape = None if shape.ndims is None else tuple(shape.as_list())
        self.built = True
        node = Node(self, [], input_tensor, {}, [], [])
        self._inbound_nodes.append(node)
        _HISTORY[input_tensor] = (node, 0)


def Input(
    shape=None, batch_size=None, name=None, dtype=None, sparse=False, tensor=None, batch_shape=None
):
    """A Keras tensor: a placeholder of shape (batch_size, *shape), recorded for models.

    Example:
        >>> x = tf.keras.Input(shape=(4,))      # float32 placeholder "input_1", shape (?, 4)
    """
    if shape is None and batch_shape is None and tensor is None:
        raise ValueError("Input: please provide `shape`, `batch_shape` or `tensor`.")
    if shape is not None and not isinstance(shape, (tuple, list)):
        shape = (shape,)
    layer = InputLayer(
        input_shape=shape,
        batch_size=batch_size,
        dtype=dtype,
        sparse=sparse,
        input_tensor=tensor,
        name=name,
        batch_input_shape=batch_shape,
    )
    return layer._inbound_nodes[0].outputs
