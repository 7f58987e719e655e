"""`tf.data.experimental.Optional` and `get_next_as_optional` (TF 1.15, graph mode).

TF carries an optional as one variant tensor; here it is a boolean `has_value` tensor plus the
value's component tensors (zeros, or empty strings, when there is no value). `get_value()`
raises InvalidArgumentError at run time when there is no value, as TF does. At the end of the
input, `get_next_as_optional` gives an empty optional instead of raising OutOfRangeError.
"""

from __future__ import annotations

import numpy as np

from tensorflux.data import structure
from tensorflux.data.iterator_ops import Iterator
from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops.array.constants import constant
from tensorflux.ops.debug import checks as check_ops

__all__ = ["Optional", "get_next_as_optional"]

IteratorGetNextAsOptional = define_op(
    "IteratorGetNextAsOptional", inputs=["iterator: resource"],
    outputs=["has_value: bool", "components: output_types"],
    attrs=["output_types: list(type) >= 1", "output_shapes: list(shape) >= 1"],
    stateful=True, differentiable=False)


@IteratorGetNextAsOptional.shape_fn
def _optional_shape(iterator, *, output_types, output_shapes):
    return [TensorShape([]), [TensorShape(s) for s in output_shapes]]


def _empty(dtype, shape):
    dims = [0 if d is None else d for d in (TensorShape(shape).as_list()
                                             if TensorShape(shape).ndims is not None else [])]
    if dtype == dtypes.string:
        return np.full(dims, b"", dtype=object)
    return np.zeros(dims, dtype=dtype.as_numpy_dtype)


@IteratorGetNextAsOptional.kernel(factory=True, ctx=True)
def _optional_factory(output_types, output_shapes):
    types = [dtypes.as_dtype(t) for t in output_types]

    def kernel(ctx, iterator):
        try:
            value = iterator.get_next()
        except errors.OutOfRangeError:
            return (np.bool_(False),) + tuple(_empty(t, s) for t, s in zip(types,
                                                                            output_shapes))
        values = value if isinstance(value, tuple) else (value,)
        return (np.bool_(True),) + tuple(values)

    return kernel


class Optional:
    """A value that may be absent: `has_value()` (a bool tensor) and `get_value()`."""

    def __init__(self, has_value, components, template):
        self._has_value = has_value
        self._components = list(components)
        self._template = template

    @staticmethod
    def from_value(value):
        """An Optional holding `value` (a nested structure of tensors)."""
        with graph_mod.get_default_graph().name_scope("OptionalFromValue"):
            converted = structure.map_structure(convert_to_tensor, value)
            return Optional(constant(True), structure.flatten(converted), converted)

    @staticmethod
    def none_from_structure(output_types, output_shapes):
        """An empty Optional whose value would have these (nested) types and shapes."""
        types = structure.flatten(output_types)
        shapes = structure.flatten(output_shapes) if output_shapes is not None else \
            [TensorShape(None)] * len(types)
        return Optional(constant(False), [constant(_empty(dtypes.as_dtype(t), s),
                                                   dtypes.as_dtype(t))
                                          for t, s in zip(types, shapes)], output_types)

    def has_value(self, name=None):
        """A scalar bool tensor: whether there is a value."""
        return self._has_value

    def get_value(self, name=None):
        """The value (a nested structure of tensors); InvalidArgumentError when run without
        one."""
        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or "OptionalGetValue"):
            check = check_ops.assert_equal(self._has_value, constant(True),
                                           message="The optional does not have a value.")
            with graph.control_dependencies([check]):
                flat = [array_ops.identity(t) for t in self._components]
        return structure.pack_element(self._template, flat)

    @property
    def output_types(self):
        return structure.pack_types(self._template,
                                    [t.dtype.base_dtype for t in self._components])

    @property
    def output_shapes(self):
        return structure.pack_shapes(self._template, [t.shape for t in self._components])


def get_next_as_optional(iterator):
    """An Optional with the iterator's next element, empty at the end of the input.

    Raises:
        TypeError: `iterator` is not a tf.data Iterator.
    """
    if not isinstance(iterator, Iterator):
        raise TypeError(f"get_next_as_optional() expects a tf.data Iterator, got {iterator!r}")
    outputs = IteratorGetNextAsOptional(iterator._handle, output_types=iterator._types,
                                        output_shapes=iterator._shapes,
                                        name="IteratorGetNextAsOptional")
    components = outputs.components
    components = [components] if isinstance(components, Tensor) else list(components)
    return Optional(outputs.has_value, components, iterator._template)
