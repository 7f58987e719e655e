"""`Operation` and `Tensor`: the nodes and edges of a graph.

Both hash and compare by identity. `Tensor.__bool__` and `__iter__` raise TypeError, as in
TensorFlow's graph mode. Operator overloads (`+`, `*`, `[]`, ...) are installed by the op
modules through `Tensor._override_operator`, so this module depends on no op.
"""

from __future__ import annotations

import linecache
import os
import sys

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.device_spec import canonical_name
from tensorflux.framework.tensor_shape import TensorShape, as_shape

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_location():
    """(filename, lineno, function) of the innermost frame outside tensorflux; cheap: a few
    hops."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return ("<unknown>", 0, "<unknown>")
    return (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


class Tensor:
    """One output of an Operation: a symbolic handle to a value computed in a session."""

    # `_keras_mask`: the mask Keras layers attach to their outputs (set only when there is one).
    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "_keras_mask",
                 "__weakref__")
    __array_priority__ = 100

    def __init__(self, op: Operation, value_index: int, dtype: dtypes.DType):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = TensorShape(None)
        self._consumers: list = []

    @property
    def op(self) -> Operation:
        return self._op

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def graph(self):
        return self._op._graph

    @property
    def name(self) -> str:
        return f"{self._op._name}:{self._value_index}"

    @property
    def device(self) -> str:
        return self._op.device

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def _shape_as_list(self):
        """The static shape as a list (None for unknown dims), or None if the rank is unknown.

        TF1's private helper, which gradient-checker call sites use.
        """
        return None if self._shape.ndims is None else self._shape.as_list()

    def set_shape(self, shape) -> None:
        """Merges `shape` into the static shape; ValueError if they are incompatible."""
        shape = as_shape(shape)
        if not self._shape.is_compatible_with(shape):
            raise ValueError(f"Tensor '{self.name}': shape {self._shape} is not compatible "
                             f"with the requested shape {shape}")
        self._shape = self._shape.merge_with(shape)

    def consumers(self) -> list:
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        """Evaluates this tensor in `session` or the default session."""

        return graph_mod.run_in_session(self, feed_dict, session)

    def _as_node_def_input(self) -> str:
        return self._op._name if self._value_index == 0 else self.name

    def __repr__(self) -> str:
        return (f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>")

    def __str__(self) -> str:
        return (f'Tensor("{self.name}", shape={self._shape}, dtype={self._dtype.name})')

    def __bool__(self):
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. Use "
                        "`if t is not None:` instead of `if t:`, or tf.cond to run a branch "
                        "on the tensor's value.")

    def __iter__(self):
        raise TypeError("'Tensor' object is not iterable: a graph tensor's value is only known "
                        "in a session; use tf.unstack or tf.map_fn.")

    def __len__(self):
        raise TypeError(f"len is not well defined for symbolic Tensors ({self.name}). "
                        "Use tf.shape or tensor.shape instead.")

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return self is not other

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise TypeError("Tensors cannot be pickled.")

    @staticmethod
    def _override_operator(operator: str, func) -> None:
        setattr(Tensor, operator, func)


class Operation:
    """A node of the graph: type, name, inputs, attrs, device, outputs."""

    def __init__(self, graph, op_def, name: str, inputs: list, output_types: list, attrs: dict,
                 control_inputs: list, device: str, location):
        self._graph = graph
        self._op_def = op_def
        self._name = name
        self._type = op_def.name
        self._inputs = list(inputs)
        self._control_inputs = list(control_inputs)
        self._attrs = attrs
        self._device = device
        self._location = location
        self._id = 0
        self._control_outputs: list = []
        self._control_flow_context = None
        self._original_op = None
        self._outputs = [Tensor(self, i, t) for i, t in enumerate(output_types)]
        for tensor in self._inputs:
            tensor._consumers.append(self)
        for op in self._control_inputs:
            op._control_outputs.append(self)

    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._type

    @property
    def op_def(self):
        return self._op_def

    @property
    def graph(self):
        return self._graph

    @property
    def device(self) -> str:
        return self._device

    @property
    def inputs(self):
        return _InputList(self._inputs)

    @property
    def outputs(self) -> list:
        return list(self._outputs)

    @property
    def control_inputs(self) -> list:
        return list(self._control_inputs)

    @property
    def values(self):
        return tuple(self._outputs)

    @property
    def traceback(self):
        """[(filename, lineno, function, source line)] of the user code that created the op
        (TF1's format; the innermost user frame)."""
        location = self._location
        filename, lineno = location[0], location[1]
        name = location[2] if len(location) > 2 else "<unknown>"
        return [(filename, lineno, name, linecache.getline(filename, lineno).strip())]

    @property
    def location(self) -> str:
        """'file:line' of the user code that created the op."""
        return f"{self._location[0]}:{self._location[1]}"

    def _set_device(self, device) -> None:
        self._device = canonical_name(device) if not isinstance(device, str) or device else ""

    def get_attr(self, name: str):
        """The value of attr `name` as TensorFlow returns it.

        Strings are bytes (lists of them lists of bytes), types DTypes, shapes
        `TensorShapeProto`s, tensors `TensorProto`s, functions `NameAttrList`s, lists Python
        lists; ints, floats (float32-rounded) and bools as they are.

        Raises:
            ValueError: the op has no such attr ("Operation 'x' has no attr named 'y'.").
        """
        try:
            value = self._attrs[name]
        except KeyError:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.") from None
        # cycle: framework.graph_io -> tensor_util imports this module (at import time)
        from tensorflux.framework import graph_io

        spec = self._op_def.attrs.get(name) if self._op_def is not None else None
        return graph_io.attr_public_value(value, spec.kind if spec is not None else None)

    def get_attr_str(self, name: str):
        """`get_attr` with strings decoded to `str` (lists of strings to lists of `str`).

        For code comparing string attrs (padding "SAME", data_format "NHWC", ...); other kinds
        come back as `get_attr` gives them.
        """
        value = self.get_attr(name)
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            return [v.decode() for v in value]
        return value

    def _set_attr(self, name: str, value) -> None:
        self._attrs[name] = value

    @property
    def attrs(self) -> dict:
        return dict(self._attrs)

    @property
    def node_def(self):
        # cycle: framework.graph_io -> ... imports this module (at import time)
        from tensorflux.framework import graph_io

        return graph_io.node_def_of(self)

    def colocation_groups(self) -> list:
        groups = [c.encode() for c in self._attrs.get("_class", ()) if c.startswith("loc:@")]
        return groups or [f"loc:@{self._name}".encode()]

    def _update_input(self, index: int, tensor: Tensor) -> None:
        old = self._inputs[index]
        old._consumers.remove(self)
        self._inputs[index] = tensor
        tensor._consumers.append(self)
        self._graph._mutation_version += 1

    def _add_input(self, tensor: Tensor) -> None:
        self._inputs.append(tensor)
        tensor._consumers.append(self)
        self._graph._mutation_version += 1

    def _add_control_input(self, op: Operation) -> None:
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)
            self._graph._mutation_version += 1

    def _add_control_inputs(self, ops) -> None:
        for op in ops:
            self._add_control_input(op)

    def _remove_all_control_inputs(self) -> None:
        for op in self._control_inputs:
            op._control_outputs.remove(self)
        self._control_inputs = []
        self._graph._mutation_version += 1

    def run(self, feed_dict=None, session=None) -> None:
        """Runs this op in `session` or the default session."""

        graph_mod.run_in_session(self, feed_dict, session)

    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, context) -> None:
        self._control_flow_context = context

    def __repr__(self) -> str:
        return f"<tf.Operation '{self._name}' type={self._type}>"

    def __str__(self) -> str:
        return str(self.node_def)

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other) -> bool:
        return self is other

    def __reduce__(self):
        raise TypeError("Operations cannot be pickled.")


class _InputList(tuple):
    """op.inputs: a tuple that also answers `._inputs` as TF1's did."""

    __slots__ = ()

    @property
    def _inputs(self):
        return list(self)
