"""`tf.contrib.rnn` wrappers that own variables: output/input projections and embeddings.

Unlike DropoutWrapper or ResidualWrapper, these are cells with a scope of their own
(`output_projection_wrapper`, `input_projection_wrapper`, `embedding_wrapper`), so the cell
they wrap lives below it (`rnn/embedding_wrapper/basic_lstm_cell/kernel`), as in TF1.
"""

from __future__ import annotations

import math

from tensorflux.framework import nest
from tensorflux.layers.rnn_cell import CellDelegate, DeviceWrapper, RNNCell, _Wrapper
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.math import matrix_product as matmul_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.nn import core as nn_ops
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope as vs

__all__ = ["OutputProjectionWrapper", "InputProjectionWrapper", "EmbeddingWrapper",
           "DeviceWrapper", "HighwayWrapper", "CompiledWrapper", "linear"]


def linear(layer, args, output_size, bias=True, bias_initializer=None, kernel_initializer=None):
    """`concat(args, 1) @ kernel + bias` with `kernel`/`bias` made by `layer` in the current
    variable scope (TF's `_Linear`)."""
    args = list(args) if isinstance(args, (list, tuple)) else [args]
    total = 0
    for arg in args:
        depth = arg.get_shape()[-1].value if arg.get_shape().ndims == 2 else None
        if depth is None:
            raise ValueError(f"linear expects 2-D arguments with a known last dimension, got "
                             f"{arg.get_shape()} for {arg.name}")
        total += depth
    dtype = args[0].dtype.base_dtype
    kernel = layer.add_variable("kernel", [total, output_size], dtype=dtype,
                                initializer=kernel_initializer)
    joined = args[0] if len(args) == 1 else concat_ops.concat(args, 1)
    result = matmul_ops.matmul(joined, kernel)
    if not bias:
        return result
    biases = layer.add_variable("bias", [output_size], dtype=dtype,
                                initializer=bias_initializer or init_ops.zeros_initializer())
    return nn_ops.bias_add(result, biases)


class OutputProjectionWrapper(CellDelegate, RNNCell):
    """Projects the wrapped cell's output to `output_size` (kernel/bias in this scope)."""

    _default_name = "output_projection_wrapper"

    def __init__(self, cell, output_size, activation=None, reuse=None):
        super().__init__(_reuse=reuse)
        if output_size < 1:
            raise ValueError(f"Parameter output_size must be > 0: {output_size}.")
        self._cell = cell
        self._output_size = output_size
        self._activation = activation

    @property
    def output_size(self):
        return self._output_size

    def call(self, inputs, state):
        output, new_state = self._cell(inputs, state)
        projected = linear(self, output, self._output_size)
        if self._activation is not None:
            projected = self._activation(projected)
        return projected, new_state


class InputProjectionWrapper(CellDelegate, RNNCell):
    """Projects inputs to `num_proj` before the wrapped cell (kernel/bias in this scope)."""

    _default_name = "input_projection_wrapper"

    def __init__(self, cell, num_proj, activation=None, input_size=None, reuse=None):
        super().__init__(_reuse=reuse)
        self._cell = cell
        self._num_proj = num_proj
        self._activation = activation

    def call(self, inputs, state):
        projected = linear(self, inputs, self._num_proj)
        if self._activation is not None:
            projected = self._activation(projected)
        return self._cell(projected, state)


class EmbeddingWrapper(CellDelegate, RNNCell):
    """Embeds integer inputs ([batch] or [batch, 1]) with an `embedding` variable, then runs
    the wrapped cell."""

    _default_name = "embedding_wrapper"

    def __init__(self, cell, embedding_classes, embedding_size, initializer=None, reuse=None):
        super().__init__(_reuse=reuse)
        if embedding_classes <= 0 or embedding_size <= 0:
            raise ValueError(f"Both embedding_classes and embedding_size must be > 0: "
                             f"{embedding_classes}, {embedding_size}.")
        self._cell = cell
        self._embedding_classes = embedding_classes
        self._embedding_size = embedding_size
        self._initializer = initializer

    def build(self, input_shape):
        # The embedding's dtype is the float type of the state, not the integer inputs.
        self.built = True

    def call(self, inputs, state):
        dtype = _state_dtype(state)
        initializer = self._initializer or init_ops.random_uniform_initializer(
            -math.sqrt(3), math.sqrt(3))
        embedding = self.add_variable("embedding",
                                      [self._embedding_classes, self._embedding_size],
                                      dtype=dtype, initializer=initializer)
        embedded = nn_impl.embedding_lookup(embedding, shape_ops.reshape(inputs, [-1]))
        return self._cell(embedded, state)


def _state_dtype(state):
    while isinstance(state, (list, tuple)):
        state = state[0]
    return state.dtype.base_dtype


class HighwayWrapper(CellDelegate, RNNCell):
    """Highway connection around a cell whose output has its input's size:
    out = input * carry + cell_output * transform, carry = sigmoid(input @ carry_w + carry_b)
    and transform = 1 - carry (or its own `transform_w`/`transform_b`). Like TF's, the
    variables are made in the caller's scope (no scope of its own)."""

    def __init__(self, cell, couple_carry_transform_gates=True, carry_bias_init=1.0):
        super().__init__()
        self._cell = cell
        self._couple = couple_carry_transform_gates
        self._carry_bias_init = carry_bias_init

    def _highway(self, inp, out):
        size = inp.get_shape().with_rank(2)[1].value
        dtype = inp.dtype.base_dtype
        carry_w = vs.get_variable("carry_w", [size, size], dtype=dtype)
        carry_b = vs.get_variable("carry_b", [size], dtype=dtype,
                                  initializer=init_ops.constant_initializer(
                                      self._carry_bias_init))
        carry = unary_ops.sigmoid(nn_impl.xw_plus_b(inp, carry_w, carry_b))
        if self._couple:
            transform = 1 - carry
        else:
            transform_w = vs.get_variable("transform_w", [size, size], dtype=dtype)
            transform_b = vs.get_variable("transform_b", [size], dtype=dtype,
                                          initializer=init_ops.constant_initializer(
                                              -self._carry_bias_init))
            transform = unary_ops.sigmoid(nn_impl.xw_plus_b(inp, transform_w, transform_b))
        return inp * carry + out * transform

    def __call__(self, inputs, state, scope=None):
        outputs, new_state = self._cell(inputs, state, scope=scope)
        nest.assert_same_structure(inputs, outputs)
        nest.map_structure(lambda i, o: i.get_shape().assert_is_compatible_with(o.get_shape()),
                           inputs, outputs)
        return nest.map_structure(self._highway, inputs, outputs), new_state


class CompiledWrapper(_Wrapper):
    """TF's XLA JIT scope around a cell. There is no XLA here: the cell runs as is."""

    def __init__(self, cell, compile_stateful=False):
        super().__init__(cell)

    def call(self, inputs, state):
        return self._cell(inputs, state)
