"""TF 1.x's function API: `function.Defun` and the `functional_ops` wrappers that take it
(`If`, `While`, `For`, `Gradient`, `remote_call`, `partitioned_call`).

A `Defun(*input_types)` decorator turns a Python function into a `DefunFunction`. Its body is
traced on first use (a call, `captured_inputs`, `definition`, or a functional op given it),
with placeholders of the declared types and unknown shapes, once per outermost graph. Calling
it adds a call op (`PartitionedCall` / `StatefulPartitionedCall`); tensors of the calling graph
that the body uses are captured as extra inputs. `func_name` names the function in the
graph's library exactly; otherwise the Python name gets a unique suffix.

The functional wrappers hand the Python function to `functional_control` (`if_`, `while_`,
`for_`), which traces it on the loop variables so captured tensors are passed through loop
iterations; errors TF reports when the op runs (a body returning the wrong number of values, a
bad `For` range) are reported when it runs here too.
"""

from __future__ import annotations

import itertools
import weakref

from tensorflux.framework import dtypes, function
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import function_call, functional_control

__all__ = ["Defun", "DefunFunction", "If", "While", "For", "Gradient", "remote_call",
           "partitioned_call"]

_SUFFIX = itertools.count(1)


def _outermost(graph):
    while getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    return graph


class DefunFunction:
    """A Python function with a declared signature, traced lazily into a graph function."""

    def __init__(self, python_func, input_types, func_name=None):
        self._python_func = python_func
        self._input_types = [dtypes.as_dtype(t) for t in input_types]
        self._name = func_name or f"{python_func.__name__}_{next(_SUFFIX)}"
        self._traced: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.__name__ = getattr(python_func, "__name__", self._name)

    @property
    def name(self) -> str:
        return self._name

    @property
    def python_func(self):
        return self._python_func

    @property
    def declared_input_types(self) -> list:
        return list(self._input_types)

    @property
    def function_def_object(self) -> function.DefinedFunction:
        """The traced body for the current graph (traced on first use)."""
        graph = graph_mod.get_default_graph()
        key = _outermost(graph)
        found = self._traced.get(key)
        if found is None:
            markers = [object() for _ in self._input_types]
            specs = {id(m): (t, TensorShape(None)) for m, t in zip(markers, self._input_types)}
            found, _ = function.trace(self._python_func, tuple(markers), {},
                                      lambda leaf: specs.get(id(leaf)), self._name,
                                      outer_graph=graph)
            self._traced[key] = found
        function.add_function(graph, found)
        return found

    @property
    def captured_inputs(self) -> list:
        return list(self.function_def_object.captured_inputs)

    @property
    def definition(self):
        """The body as a `FunctionDef` proto."""
        return self.function_def_object.definition

    def __call__(self, *args, **kwargs):
        """Adds a call of the function on `args`; returns its output (one), a tuple of
        outputs (several), or the call Operation (none)."""
        name = kwargs.pop("name", None)
        if kwargs:
            raise TypeError(f"Defun {self._name}: unexpected keyword arguments {sorted(kwargs)}")
        if len(args) != len(self._input_types):
            raise ValueError(f"Defun {self._name} takes {len(self._input_types)} arguments, "
                             f"got {len(args)}.")
        tensors = [convert_to_tensor(a, dtype=t) for a, t in zip(args, self._input_types)]
        result = function_call.call_function(self.function_def_object, tensors, name=name)
        if not isinstance(result, list):
            return result
        return result[0] if len(result) == 1 else tuple(result)


class Defun:
    """TF 1.x decorator `@function.Defun(*input_types, func_name=None)`.

    Args:
        *input_types: the dtypes of the function's arguments.
        func_name: the function's library name (default: the Python name, made unique).
        **kwargs: TF's other options (`grad_func`, `python_grad_func`, `out_names`,
            `noinline`, ...) are accepted and ignored: gradients come from the body.
    """

    def __init__(self, *input_types, func_name=None, **kwargs):
        self._input_types = input_types
        self._func_name = func_name

    def __call__(self, func) -> DefunFunction:
        if not callable(func):
            raise ValueError(f"Defun: func must be callable, got {func!r}")
        return DefunFunction(func, self._input_types, self._func_name)


def _callable(fn):
    """What functional_control should trace: a Defun's Python function (so captures become
    loop variables), or `fn` itself (a DefinedFunction, tf.function or callable)."""
    return fn.python_func if isinstance(fn, DefunFunction) else fn


def If(cond, inputs, then_branch, else_branch, name=None):  # noqa: N802 - TF1 name
    """TF 1.x `functional_ops.If`: the list of outputs of the branch `cond` selects."""
    return functional_control.if_(cond, inputs, _callable(then_branch),
                                  _callable(else_branch), name=name)


def While(input_, cond, body, name=None, hostmem=None,  # noqa: N802 - TF1 name
          parallel_iterations=10):
    """TF 1.x `functional_ops.While`: `input_ = body(*input_)` while `cond(*input_)`."""
    return functional_control.while_(input_, _callable(cond), _callable(body),
                                     parallel_iterations=parallel_iterations, name=name)


def For(start, limit, delta, inputs, body, name=None, hostmem=None,  # noqa: N802 - TF1 name
        rewrite_with_while=None):
    """TF 1.x `functional_ops.For`: `inputs = body(i, *inputs)` for i in
    range(start, limit, delta). `rewrite_with_while` builds the same loop as a `While`.

    Returns:
        The list of final loop values.
    """
    if not rewrite_with_while:
        result = functional_control.for_(start, limit, delta, inputs, _callable(body),
                                         name=name)
    else:
        result = _for_as_while(start, limit, delta, inputs, body, name)
    return result if inputs else []  # TF: no loop values, an empty list


def _named_trace(fn, tensors, name):
    library = graph_mod.get_default_graph()._functions
    found = library.get(name)
    if found is not None and [t.dtype.base_dtype for t in found.inputs] == [
            t.dtype.base_dtype for t in tensors]:
        return found  # another loop over the same body
    markers = [object() for _ in tensors]
    specs = {id(m): (t.dtype.base_dtype, t.shape) for m, t in zip(markers, tensors)}
    defined, _ = function.trace(fn, tuple(markers), {}, lambda leaf: specs.get(id(leaf)), name)
    return defined


def _for_as_while(start, limit, delta, inputs, body, name):
    start = convert_to_tensor(start, dtype=dtypes.int32)
    limit = convert_to_tensor(limit, dtype=dtypes.int32)
    delta = convert_to_tensor(delta, dtype=dtypes.int32)
    inputs = [convert_to_tensor(t) for t in inputs]
    named = isinstance(body, DefunFunction) and not body.captured_inputs
    if not named:
        body = _callable(body)

    def cond(i, lim, dlt, *_):
        up = math_ops.logical_and(math_ops.greater(dlt, 0), math_ops.less(i, lim))
        down = math_ops.logical_and(math_ops.less(dlt, 0), math_ops.greater(i, lim))
        return math_ops.logical_or(up, down)

    def step(i, lim, dlt, *values):
        out = body(i, *values)
        out = [] if out is None else list(out) if isinstance(out, (list, tuple)) else [out]
        return [i + dlt, lim, dlt] + out

    loop_vars = [start, limit, delta] + list(inputs)
    if named:  # as TF, the loop's functions are <body>_Cond and <body>_Body in the library
        cond = _named_trace(cond, loop_vars, f"{body.name}_Cond")
        step = _named_trace(step, loop_vars, f"{body.name}_Body")
    result = functional_control.while_(loop_vars, cond, step, name=name or "While")
    return result[3:] if isinstance(result, list) else result


def Gradient(inputs, f, name=None):  # noqa: N802 - TF1 name
    """TF 1.x `functional_ops.Gradient` (SymbolicGradient): given `f`'s inputs followed by
    one gradient per output of `f`, the gradients of `f`'s inputs."""
    defined = f.function_def_object if isinstance(f, DefunFunction) else f
    grad = function_call.gradient_function(defined)
    n_in = len(defined.inputs)
    xs = [convert_to_tensor(t, dtype=x.dtype.base_dtype)
          for t, x in zip(inputs[:n_in], defined.inputs)]
    dys = [convert_to_tensor(t, dtype=defined.outputs[i].dtype.base_dtype)
           for t, i in zip(inputs[n_in:], grad.float_outputs)]
    result = function_call.call_function(grad, xs + dys, name=name or "SymbolicGradient")
    grads = result if isinstance(result, list) else []
    out = [None] * n_in
    for k, g in zip(grad.float_inputs, grads):
        out[k] = g
    return out


def remote_call(args, Tout, f, target, name=None):  # noqa: N803 - TF1 names
    """TF 1.x `functional_ops.remote_call`: calls `f` on the device `target`; returns the
    list of outputs."""
    graph = graph_mod.get_default_graph()
    defined = f.function_def_object if isinstance(f, DefunFunction) else f
    if [dtypes.as_dtype(t).base_dtype for t in Tout] != list(defined.output_types):
        raise TypeError(f"remote_call: Tout {Tout} does not match the outputs of "
                        f"{defined.name} ({defined.output_types}).")
    with graph.device(target):
        result = function_call.call_function(defined, list(args), name=name or "RemoteCall")
    return result if isinstance(result, list) else []


def partitioned_call(args, f, tout=None, executing_eagerly=None, config=None,
                     executor_type=None):
    """TF's `functional_ops.partitioned_call`: `args` are `f`'s arguments followed by its
    captured inputs (as TF passes them); returns the list of outputs, or the call Operation
    when `f` has none."""
    defined = f.function_def_object if isinstance(f, DefunFunction) else f
    n_declared = len(defined.inputs) - len(defined.captured_inputs)
    return function_call.call_function(defined, list(args)[:n_declared])
