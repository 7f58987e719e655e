"""Op definitions: one signature with its shape function, kernels and gradient.

`define_op(name, inputs, outputs, attrs, ...)` parses TensorFlow-style signature strings:
    inputs=["a: T", "values: N * T", "ref: Ref(T)", "shape: int32", "args: Tin"]
    attrs=["T: {float32, float64}", "N: int >= 1", "transpose_a: bool = False",
           "padding: {'SAME', 'VALID'}", "Tin: list(type)", "dtype: type"]

Decorators attach the rules. Each rule declares the attrs it needs as keyword-only parameters;
registration checks them against the declared attrs, so a typo fails at import:
    @MatMul.shape_fn                        # TensorShapes (or constant values) in, shapes out
    @MatMul.kernel                          # ndarrays in, ndarray (or tuple) out
    @Var.kernel(ctx=True)                   # kernel(ctx, *inputs) for stateful kernels
    @Dequeue.kernel(asynchronous=True)      # kernel(ctx, *inputs, done) for blocking ones
    @RandomUniform.kernel(factory=True)     # factory(**attrs) -> per-node callable with state
    @MatMul.gradient                        # grad(op, *grads) -> one grad per input; builds graph

A kernel rule may also declare a `node_name` parameter: it receives the node's name (resource
ops name their resource after it when `shared_name` is empty).

Each OpDef records the module that defined it (`op_def.module`): an op's rules, gradient
included, are registered in that module (tests/ops/test_op_placement.py checks it). Ops whose
kernels create per-step resources (TensorArrays, stacks) pass `step_scoped=True`, so the
runtime drops those resources when the step ends.
"""

from __future__ import annotations

import ast
import collections
import inspect
import re
import sys
from dataclasses import dataclass

import numpy as np

from tensorflux.framework import dtypes, registry
from tensorflux.framework.tensor_shape import TensorShape, as_shape

OP_DEFS = registry.Registry("op")
GRADIENTS = registry.Registry("gradient")

_FLOAT = ("float16", "bfloat16", "float32", "float64")
_INT = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_COMPLEX = ("complex64", "complex128")
TYPE_GROUPS = {
    "floattype": _FLOAT,
    "inttype": _INT,
    "realnumbertype": _FLOAT + _INT,
    "numbertype": _FLOAT + _INT + _COMPLEX,
    "alltypes": _FLOAT + _INT + _COMPLEX + ("bool", "string"),
}


@dataclass(frozen=True)
class ArgSpec:
    """One input or output argument of an op signature."""

    name: str
    type_attr: str | None = None
    fixed_type: dtypes.DType | None = None
    number_attr: str | None = None
    type_list_attr: str | None = None
    is_ref: bool = False

    @property
    def is_list(self) -> bool:
        return self.number_attr is not None or self.type_list_attr is not None


@dataclass(frozen=True)
class AttrSpec:
    """One attr: its kind ('type', 'int', 'list(int)', ...), allowed values, default, minimum."""

    name: str
    kind: str
    allowed: tuple | None = None
    has_default: bool = False
    default: object = None
    minimum: int | None = None


@dataclass
class KernelDef:
    """A kernel registration: how the executor calls it."""

    fn: object
    device_type: str = "CPU"
    ctx: bool = False
    asynchronous: bool = False
    factory: bool = False
    attr_names: tuple = ()
    wants_node_name: bool = False
    wants_input_names: bool = False

    def instantiate(self, attrs: dict, node_name: str = "", input_names: tuple = ()):
        """Binds attrs (and `node_name` / `input_names`, TF's "node:port" input edge names,
        when the rule declares them) once; returns the per-step callable."""
        bound = {k: attrs[k] for k in self.attr_names}
        if self.wants_node_name:
            bound["node_name"] = node_name
        if self.wants_input_names:
            bound["input_names"] = tuple(input_names)
        if self.factory:
            return self.fn(**bound)
        if not bound:
            return self.fn
        fn = self.fn

        def kernel(*args, **kwargs):
            return fn(*args, **kwargs, **bound)

        return kernel


_ATTR_RE = re.compile(r"^\s*(\w+)\s*:\s*(.+?)\s*(?:>=\s*(-?\d+)\s*)?(?:=\s*(.+))?$")


def _parse_attr(text: str) -> AttrSpec:
    match = _ATTR_RE.match(text)
    if not match:
        raise ValueError(f"Malformed attr spec {text!r}")
    name, kind, minimum, default_text = match.groups()
    kind = kind.strip()
    allowed = None
    if kind in TYPE_GROUPS:
        allowed = tuple(dtypes.as_dtype(t) for t in TYPE_GROUPS[kind])
        kind = "type"
    elif kind.startswith("{"):
        items = [s.strip() for s in kind[1:-1].split(",") if s.strip()]
        if items and items[0][0] in "'\"":
            allowed = tuple(ast.literal_eval(s) for s in items)
            kind = "string"
        else:
            expanded = []
            for item in items:
                expanded.extend(TYPE_GROUPS.get(item, (item,)))
            allowed = tuple(dtypes.as_dtype(t) for t in expanded)
            kind = "type"
    has_default = default_text is not None
    default = None
    if has_default:
        default_text = default_text.strip()
        if kind in ("type",) and not default_text.startswith(("'", '"')):
            default = dtypes.as_dtype(default_text)
        else:
            default = ast.literal_eval(default_text)
        default = _coerce_attr(name, kind, default, None)
    return AttrSpec(name, kind, allowed, has_default, default,
                    int(minimum) if minimum is not None else None)


_INPUT_RE = re.compile(r"^\s*(\w+)\s*:\s*(?:(\w+)\s*\*\s*)?(Ref\()?\s*(\w+)\s*\)?\s*$")


def _parse_arg(text: str, attrs: dict[str, AttrSpec]) -> ArgSpec:
    match = _INPUT_RE.match(text)
    if not match:
        raise ValueError(f"Malformed argument spec {text!r}")
    name, number_attr, ref, type_name = match.groups()
    is_ref = ref is not None
    spec = attrs.get(type_name)
    if spec is not None and spec.kind == "type":
        return ArgSpec(name, type_attr=type_name, number_attr=number_attr, is_ref=is_ref)
    if spec is not None and spec.kind == "list(type)":
        return ArgSpec(name, type_list_attr=type_name, is_ref=is_ref)
    return ArgSpec(name, fixed_type=dtypes.as_dtype(type_name), number_attr=number_attr,
                   is_ref=is_ref)


def _coerce_attr(name: str, kind: str, value, allowed):
    """Validates and normalises an attr value; raises TypeError/ValueError naming the attr."""
    if value is None and kind in ("shape", "tensor", "func", "any"):
        return value
    if kind.startswith("list(") and not hasattr(value, "__iter__"):
        raise TypeError(f"Expected list for attr {name}, obtained {type(value).__name__} "
                        "instead.")
    try:
        if kind == "type":
            value = dtypes.as_dtype(value)
        elif kind == "list(type)":
            value = tuple(dtypes.as_dtype(v) for v in value)
        elif kind == "int":
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"expected an int, got {value!r}")
            value = int(value)
        elif kind == "float":
            value = float(value)
        elif kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"expected a bool, got {value!r}")
            value = bool(value)
        elif kind == "string":
            if isinstance(value, bytes):
                try:
                    value = value.decode()
                except UnicodeDecodeError:
                    return value  # a binary payload (TF's serialized config_proto) stays bytes
            if not isinstance(value, str):
                raise TypeError(f"expected a string, got {value!r}")
        elif kind == "shape":
            value = as_shape(value)
        elif kind == "list(int)":
            value = tuple(int(v) for v in value)
        elif kind == "list(float)":
            value = tuple(float(v) for v in value)
        elif kind == "list(string)":
            value = tuple(v.decode() if isinstance(v, bytes) else str(v) for v in value)
        elif kind == "list(shape)":
            value = tuple(as_shape(v) for v in value)
        elif kind == "list(bool)":
            value = tuple(bool(v) for v in value)
    except (TypeError, ValueError) as err:
        raise type(err)(f"attr '{name}': {err}") from None
    if allowed is not None:
        if kind == "type" and value.base_dtype not in allowed:
            names = ", ".join(d.name for d in allowed)
            raise TypeError(f"Value for attr '{name}' of {value.name} is not in the list of "
                            f"allowed values: {names}")
        if kind == "string" and value not in allowed:
            choices = ", ".join(f'"{a}"' for a in allowed)  # worded as TF's op_def_library
            raise ValueError(f"Attr '{name}' Op passed string '{value}' not in: {choices}.")
    return value


def _keyword_only(fn) -> tuple:
    """The attrs a rule declares: its keyword-only parameters (none for NumPy ufuncs)."""
    if isinstance(fn, np.ufunc):
        return ()
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY)


class OpDef:
    """An op's signature plus its rules. Calling it adds the op to the default graph."""

    def __init__(self, name, inputs, outputs, attrs, stateful, differentiable, is_control_flow,
                 allows_uninitialized_input, where, module=None, step_scoped=False):
        self.name = name
        self.attrs: dict[str, AttrSpec] = {}
        for text in attrs:
            spec = _parse_attr(text)
            self.attrs[spec.name] = spec
        self.inputs = [_parse_arg(t, self.attrs) for t in inputs]
        self.outputs = [_parse_arg(t, self.attrs) for t in outputs]
        self.is_stateful = stateful
        self.differentiable = differentiable
        self.is_control_flow = is_control_flow
        self.allows_uninitialized_input = allows_uninitialized_input
        self.where = where
        self.module = module
        self.step_scoped = step_scoped
        self.kernels: dict[str, KernelDef] = {}
        self.shape_rule = None
        self.shape_attr_names: tuple = ()
        self.value_inputs: tuple = ()
        self.static_inputs: tuple = ()
        self._output_tuple = None

    def __repr__(self) -> str:
        return f"<OpDef {self.name}>"

    # -- rule registration -------------------------------------------------------------------

    def _check_attr_names(self, fn, names, what):
        for attr in names:
            if attr not in self.attrs:
                raise TypeError(f"{what} {fn.__name__} of op '{self.name}' declares attr "
                                f"'{attr}', which the op does not have "
                                f"(attrs: {', '.join(self.attrs) or 'none'}).")

    def shape_fn(self, fn=None, *, value_inputs: tuple = (), static_inputs: tuple = ()):
        """Registers the shape function.

        Inputs named in `value_inputs` arrive as constant ndarrays (None when not constant);
        those in `static_inputs` as `static_values.StaticInput` (shape, constant, partial and
        shape-tensor values); the others as TensorShapes.
        """

        def register(fn):
            if self.shape_rule is not None:
                raise KeyError(f"Op '{self.name}' already has a shape function.")
            names = _keyword_only(fn)
            self._check_attr_names(fn, names, "Shape function")
            input_names = [a.name for a in self.inputs]
            for name in (*value_inputs, *static_inputs):
                if name not in input_names:
                    raise TypeError(f"Shape function of '{self.name}': no input '{name}'.")
            self.shape_rule = fn
            self.shape_attr_names = names
            self.value_inputs = tuple(input_names.index(n) for n in value_inputs)
            self.static_inputs = tuple(input_names.index(n) for n in static_inputs)
            return fn

        return register(fn) if fn is not None else register

    def kernel(self, fn=None, *, device: str = "CPU", ctx: bool = False,
               asynchronous: bool = False, factory: bool = False):
        """Registers a kernel for `device` (see the module docstring for the forms)."""

        def register(fn):
            if device in self.kernels:
                raise KeyError(f"Op '{self.name}' already has a {device} kernel "
                               f"({self.kernels[device].fn.__name__}).")
            names = _keyword_only(fn) if not factory else tuple(
                p.name for p in inspect.signature(fn).parameters.values())
            wants_node_name = "node_name" in names  # resources default to their node's name
            wants_input_names = "input_names" in names  # messages naming an input edge
            names = tuple(n for n in names if n not in ("done", "node_name", "input_names"))
            self._check_attr_names(fn, names, "Kernel")
            self.kernels[device] = KernelDef(fn, device, ctx or asynchronous, asynchronous,
                                             factory, names, wants_node_name,
                                             wants_input_names)
            return fn

        return register(fn) if fn is not None else register

    def gradient(self, fn):
        """Registers `fn(op, *output_grads) -> [grad per input]` as this op's gradient."""
        GRADIENTS.register(self.name, fn, registry.caller_location(2))
        return fn

    # -- graph construction ------------------------------------------------------------------

    def output_tuple_type(self):
        if self._output_tuple is None:
            self._output_tuple = collections.namedtuple(self.name, [a.name for a in self.outputs])
        return self._output_tuple

    def __call__(self, *args, name=None, **kwargs):
        # cycle: framework.op_builder imports this module (at import time)
        from tensorflux.framework.op_builder import create_op_from_def

        return create_op_from_def(self, args, kwargs, name)


def define_op(name: str, inputs=(), outputs=(), attrs=(), *, stateful: bool = False,
              differentiable: bool = True, is_control_flow: bool = False,
              allows_uninitialized_input: bool = False, step_scoped: bool = False) -> OpDef:
    """Defines and registers an op signature (see the module docstring).

    `step_scoped=True` declares that the op's kernel creates or uses per-step resources
    (ops/data_flow/step_resources.py): a plan holding such an op ends the step's resources.
    """
    where = registry.caller_location(2)
    module = sys._getframe(1).f_globals.get("__name__")
    op_def = OpDef(name, list(inputs), list(outputs), list(attrs), stateful, differentiable,
                   is_control_flow, allows_uninitialized_input, where, module, step_scoped)
    OP_DEFS.register(name, op_def, where)
    return op_def


def get_op_def(name: str) -> OpDef:
    return OP_DEFS.lookup(name)


def coerce_attr(spec: AttrSpec, value):
    return _coerce_attr(spec.name, spec.kind, value, spec.allowed)


def unknown_outputs(op_def: OpDef, n: int) -> list:
    return [TensorShape(None)] * n


__all__ = ["ArgSpec", "AttrSpec", "KernelDef", "OpDef", "define_op", "get_op_def", "OP_DEFS",
           "GRADIENTS", "coerce_attr"]
