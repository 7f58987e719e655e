"""`tf.function` in graph mode: a Python function traced once per input signature.

Contract: calling a `Function` with tensors traces the Python function (once per graph and
signature: the dtypes and static shapes of the tensor arguments plus the values of the other
arguments) into a `DefinedFunction` of the graph's library and adds one call op
(`StatefulPartitionedCall` when the body has stateful ops, else `PartitionedCall`); later
calls with the same signature reuse the trace. NumPy arrays are tensor arguments; other
Python values are baked into the trace. With `input_signature` there is one trace and the
arguments must match it. Tensors of the calling graph used in the body are captured (extra
inputs of the call; variables by reference). Effects run in program order (automatic control
dependencies). Variables must be created outside the function (a ValueError otherwise).
"""

from __future__ import annotations

import functools
import weakref

import numpy as np

from tensorflux.framework import function as function_lib
from tensorflux.framework import graph as graph_mod
from tensorflux.framework import nest
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.framework.tensor_spec import TensorSpec
from tensorflux.ops.control_flow.function_call import call_function

__all__ = ["function"]


class ConcreteFunction:
    """One trace: a DefinedFunction plus the structure of its results."""

    def __init__(self, defined, structure, specs):
        self.function_def_object = defined
        self.structured_outputs = structure
        self.input_signature = specs

    @property
    def name(self) -> str:
        return self.function_def_object.name

    @property
    def graph(self):
        return self.function_def_object.graph

    @property
    def captured_inputs(self) -> list:
        return list(self.function_def_object.captured_inputs)

    @property
    def function_def(self):
        return self.function_def_object.definition

    def __call__(self, *tensors):
        """Calls the function on its tensor arguments (flat, in signature order)."""
        outputs = call_function(self.function_def_object,
                                [convert_to_tensor(t) for t in tensors])
        if self.structured_outputs is None:
            return outputs
        return nest.map_structure(lambda i: None if i is None else outputs[i],
                                  self.structured_outputs)


def _is_tensor_leaf(leaf) -> bool:
    return isinstance(leaf, (Tensor, np.ndarray)) or hasattr(leaf, "_as_graph_element")


def _as_tensor(leaf):
    if hasattr(leaf, "_as_graph_element") and not isinstance(leaf, Tensor):
        return leaf._as_graph_element()
    return convert_to_tensor(leaf)


class Function:
    """A `tf.function`-decorated callable (see the module docstring)."""

    def __init__(self, python_function, name, input_signature=None, autograph=True):
        self._python_function = python_function
        self._name = name
        self._autograph = autograph
        self._input_signature = None
        if input_signature is not None:
            specs = nest.flatten(input_signature)
            for spec in specs:
                if not isinstance(spec, TensorSpec):
                    raise TypeError(f"input_signature must be a possibly nested sequence of "
                                    f"TensorSpec objects, got {spec!r}")
            self._input_signature = tuple(input_signature)
        self._traces: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        functools.update_wrapper(self, python_function)

    @property
    def python_function(self):
        return self._python_function

    @property
    def input_signature(self):
        return self._input_signature

    def __get__(self, instance, owner):
        if instance is None:
            return self
        bound = Function(functools.partial(self._python_function, instance), self._name,
                         self._input_signature, self._autograph)
        cache = instance.__dict__.setdefault("_tfx_bound_functions", {})
        return cache.setdefault(id(self), bound)

    def _canonical(self, args, kwargs):
        """(flat tensor arguments, trace key, args and kwargs with tensors in place)."""
        if self._input_signature is not None:
            if kwargs:
                raise TypeError(f"{self._name}: keyword arguments are not supported with an "
                                "input_signature.")
            specs = nest.flatten(self._input_signature)
            if len(args) != len(self._input_signature):
                raise ValueError(f"{self._name}: the input_signature has "
                                 f"{len(self._input_signature)} arguments but the call passes "
                                 f"{len(args)}.")
            flat = _flatten_up_to(self._input_signature, args)
            if len(flat) != len(specs):
                raise ValueError(f"{self._name}: the input_signature has {len(specs)} tensors "
                                 f"but the call passes {len(flat)} values.")
            tensors = []
            for value, spec in zip(flat, specs):
                tensor = convert_to_tensor(value, dtype=spec.dtype)
                if not spec.shape.is_compatible_with(tensor.shape):
                    raise ValueError(f"{self._name}: argument {tensor.name} of shape "
                                     f"{tensor.shape} is not compatible with the input_signature"
                                     f" {spec}.")
                tensors.append(tensor)
            args = nest.pack_sequence_as(self._input_signature, tensors)
            return tensors, ("signature",), args, {}, list(specs)
        flat = nest.flatten((args, kwargs))
        tensors, key, values = [], [], []
        for leaf in flat:
            if _is_tensor_leaf(leaf):
                tensor = _as_tensor(leaf)
                tensors.append(tensor)
                values.append(tensor)
                shape = tensor.shape
                key.append(("T", tensor.dtype.base_dtype,
                            None if shape.ndims is None else tuple(shape.as_list())))
            else:
                values.append(leaf)
                try:
                    hash(leaf)
                    key.append(("V", type(leaf), leaf))
                except TypeError:
                    key.append(("O", id(leaf)))
        args, kwargs = nest.pack_sequence_as((args, kwargs), values)
        specs = [TensorSpec(t.shape, t.dtype.base_dtype) for t in tensors]
        return tensors, tuple(key), args, kwargs, specs

    def get_concrete_function(self, *args, **kwargs) -> ConcreteFunction:
        """The trace for these arguments (TensorSpecs stand for tensors), traced if new."""
        if not args and not kwargs and self._input_signature is not None:
            args = self._input_signature
        if any(isinstance(leaf, TensorSpec) for leaf in nest.flatten((args, kwargs))):
            # cycle: a module-level import breaks `import tensorflux` (partly initialized module)
            from tensorflux.ops.array import placeholder

            args, kwargs = nest.map_structure(
                lambda leaf: placeholder(leaf.dtype, leaf.shape) if isinstance(leaf, TensorSpec)
                else leaf, (args, kwargs))
        return self._concrete(args, kwargs)[0]

    def _concrete(self, args, kwargs):
        graph = graph_mod.get_default_graph()
        tensors, key, args, kwargs, specs = self._canonical(args, kwargs)
        table = self._traces.setdefault(graph, {})
        concrete = table.get(key)
        if concrete is None:
            inputs = {id(t) for t in tensors}

            def spec_of(leaf):
                if id(leaf) in inputs:
                    return leaf.dtype.base_dtype, _trace_shape(leaf, specs, tensors)
                return None

            defined, structure = function_lib.trace(
                self._python_function, args, kwargs, spec_of, function_lib.unique_name(self._name),
                graph)
            made = [op.name for op in defined.graph.get_operations()
                    if op.type in ("VariableV2", "Variable", "VarHandleOp")]
            if made:
                raise ValueError(f"tf.function '{self._name}' creates variables ({made}); "
                                 "create them outside the function and use them inside (they "
                                 "are captured by reference).")
            function_lib.add_function(graph, defined)
            concrete = table[key] = ConcreteFunction(defined, structure, specs)
        return concrete, tensors

    def __call__(self, *args, **kwargs):
        concrete, tensors = self._concrete(args, kwargs)
        return concrete(*tensors)

    def __repr__(self) -> str:
        return f"<tf.function {self._name}>"


def _flatten_up_to(structure, value) -> list:
    """Leaves of `value` where `structure` has TensorSpecs (a leaf may be a list)."""
    if isinstance(structure, TensorSpec):
        return [value]
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure)
                for leaf in _flatten_up_to(structure[key], value[key])]
    if len(structure) != len(value):
        raise ValueError(f"the call's arguments {value!r} do not match the input_signature "
                         f"{structure!r}.")
    return [leaf for s, v in zip(structure, value) for leaf in _flatten_up_to(s, v)]


def _trace_shape(tensor, specs, tensors) -> TensorShape:
    for spec, t in zip(specs, tensors):
        if t is tensor:
            return spec.shape
    return tensor.shape


def function(func=None, input_signature=None, autograph=True, experimental_autograph_options=None,
             experimental_relax_shapes=False, experimental_compile=None):
    """Compiles a Python function into a graph function (TF 1.15 `tf.function`, graph mode).

    Args:
        func: the function to compile (or None: returns a decorator).
        input_signature: a nested sequence of `tf.TensorSpec`s; one trace for all calls.
        autograph: accepted for compatibility; Python control flow runs at trace time.
        experimental_autograph_options, experimental_relax_shapes, experimental_compile:
            accepted for compatibility.

    Returns:
        A callable `Function` (or a decorator when `func` is None).

    Example:
        >>> @tf.function
        ... def f(x):
        ...     return x * x + 1.0
        >>> y = f(tf.constant(2.0))   # a StatefulPartitionedCall/PartitionedCall op
    """
    del experimental_autograph_options, experimental_relax_shapes, experimental_compile

    def decorate(fn):
        if not callable(fn):
            raise TypeError(f"tf.function expects a callable, got {fn!r}")
        return Function(fn, getattr(fn, "__name__", type(fn).__name__), input_signature,
                         autograph)

    return decorate if func is None else decorate(func)

