"""`tf.custom_gradient`: a function whose gradient is given by a Python `grad_fn`.

Graph mode, as in TensorFlow: the decorated `f(*x)` returns `(y, grad_fn)`; each result goes
through an `Identity`, then results, inputs and the variables `f` used go through one
`IdentityN` whose gradient is overridden (`_gradient_op_type`) with a uniquely named gradient
(`CustomGradient-<n>`). That gradient gives the results' inputs no gradient (so nothing flows
into the ops inside `f`) and gives the inputs `grad_fn(*dys)`, and the variables the
`variable_grads` of `grad_fn(*dys, variables=vars) -> (input_grads, variable_grads)`.

Variables are those read by ops that `f` creates (ref or resource variables), other than the
inputs themselves.
"""

from __future__ import annotations

import functools
import inspect
import itertools

from tensorflux.framework import graph as graph_mod
from tensorflux.framework import nest
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.autodiff.gradients import RegisterGradient

__all__ = ["custom_gradient", "grad_pass_through"]

_UIDS = itertools.count()


def _variables_used(graph, new_ops, inputs) -> list:
    by_tensor = {}
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
        for var in graph.get_collection(key):
            for tensor in (var._ref(), var.value()):
                by_tensor.setdefault(tensor, var)
    input_set = set(inputs)
    found = []
    for op in new_ops:
        for tensor in op.inputs:
            var = by_tensor.get(tensor)
            if var is not None and var not in found and var.value() not in input_set and \
                    var._ref() not in input_set:
                found.append(var)
    return found


def _accepts_variables(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "variables" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _graph_mode_call(f, args, kwargs):
    if kwargs:
        raise ValueError("The custom_gradient decorator currently supports keywords arguments "
                         "only when eager execution is enabled.")
    graph = graph_mod.get_default_graph()
    args = [convert_to_tensor(a) for a in args]
    n_before = len(graph.get_operations())
    result, grad_fn = f(*args)
    new_ops = graph.get_operations()[n_before:]
    variables = _variables_used(graph, new_ops, args)
    if variables and not _accepts_variables(grad_fn):
        raise TypeError(f"@tf.custom_gradient grad_fn must accept keyword argument "
                        f"'variables', since function uses variables: {variables}")
    flat_result = [array_ops.identity(convert_to_tensor(y)) for y in nest.flatten(result)]
    n_results = len(flat_result)
    n_args = len(args)

    def internal_grad(op, *out_grads):
        dys = out_grads[:n_results]
        if variables:
            returned = grad_fn(*dys, variables=variables)
            if not isinstance(returned, (list, tuple)) or len(returned) != 2:
                raise ValueError("@tf.custom_gradient grad_fn must return (input_grads, "
                                 "variable_grads) when the function uses variables.")
            input_grads, variable_grads = returned
            variable_grads = nest.flatten(variable_grads)
            if len(variable_grads) != len(variables):
                raise ValueError("Must return gradient for each variable from "
                                 "@custom_gradient grad_fn.")
        else:
            input_grads = grad_fn(*dys)
            variable_grads = []
        input_grads = nest.flatten(input_grads)
        if len(input_grads) != n_args:
            raise ValueError(f"custom_gradient function expected to return {n_args} gradients "
                             f"but returned {len(input_grads)} instead.")
        return [None] * n_results + input_grads + variable_grads

    name = f"CustomGradient-{next(_UIDS)}"
    RegisterGradient(name)(internal_grad)
    with graph.gradient_override_map({"IdentityN": name}):
        outputs = array_ops.identity_n(flat_result + args + [v.value() for v in variables])
    return nest.pack_sequence_as(result, list(outputs[:n_results]))


def custom_gradient(f=None):
    """Decorator giving `f` a gradient computed by the `grad_fn` it returns.

    Args:
        f: `f(*x) -> (y, grad_fn)`: `y` a Tensor or nested list/tuple of Tensors;
            `grad_fn(*dys)` returns one gradient per `x` (a Tensor or None; a list when `f`
            has several inputs). When `f` reads variables, `grad_fn(*dys, variables=None)`
            returns `(input_grads, variable_grads)` with one gradient per variable.

    Returns:
        The decorated function (called with the same positional arguments as `f`).

    Raises:
        ValueError: keyword arguments in graph mode; a gradient count that does not match.
        TypeError: `f` uses variables but `grad_fn` has no `variables` argument.

    Example:
        >>> @tf.custom_gradient
        ... def log1pexp(x):
        ...     e = tf.exp(x)
        ...     return tf.log(1 + e), lambda dy: dy * (1 - 1 / (1 + e))
    """
    if f is None:
        return custom_gradient
    return _Decorated(f)


class _Decorated:
    """The decorated function; also binds as a method (`self` is not converted to a Tensor)."""

    def __init__(self, f):
        self._f = f
        functools.update_wrapper(self, f)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return _Decorated(self._f.__get__(instance, owner))

    def __call__(self, *args, **kwargs):
        return _graph_mode_call(self._f, args, kwargs)


def grad_pass_through(f):
    """Wraps `f` so its results keep `f`'s values but take the gradient of an identity.

    The gradient of `h(*x) = f(*x)` with respect to each `x` is the incoming gradient itself
    (variables `f` reads get none), e.g. to differentiate through an assignment or a moving
    average.

    Args:
        f: a function of tensors returning a Tensor or a nested structure of Tensors, with as
            many results as arguments.

    Returns:
        The wrapped function.

    Example:
        >>> y = tf.grad_pass_through(x.assign)(z ** 2)   # dy/dz = 2 z
    """

    @functools.wraps(f)
    def wrapped(*args):
        @custom_gradient
        def _pass_through(*inner):
            def grad(*dys, variables=None):
                if variables is not None:
                    return list(dys), [None] * len(variables)
                return list(dys)

            return f(*inner), grad

        return _pass_through(*args)

    return wrapped
