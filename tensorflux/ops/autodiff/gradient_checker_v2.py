"""TF's `gradient_checker_v2` (`tf.compat.v2.test.compute_gradient`) in graph mode.

`compute_gradient(f, x)` takes a function and the values of its arguments (not tensors of a
graph, as the TF1 checker does): it feeds each argument through a placeholder, builds
`y = f(*xs)` and returns the symbolic and central-difference Jacobians, each with one row per
element of `y` and one column per element of the argument. It runs in the default session.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.autodiff import checker

__all__ = ["compute_gradient", "max_error"]


def _argument_value(session, value):
    if isinstance(value, Tensor):
        return session.run(value)
    if isinstance(value, np.ndarray):
        return value
    with graph_mod.Graph().as_default():  # TF's dtype for a Python value, off the user's graph
        dtype = convert_to_tensor(value).dtype.base_dtype
    return np.asarray(value, dtype=dtype.as_numpy_dtype)


def compute_gradient(f, x, delta=None):
    """Theoretical and numerical Jacobians of `f` at the argument values `x`.

    Args:
        f: a function of `len(x)` tensors returning one tensor.
        x: a list or tuple of values (arrays, numbers or tensors) for `f`'s arguments.
        delta: the central-difference step (default 1e-3).

    Returns:
        (theoretical, numerical): tuples with one 2-D array per argument, of shape
        [size of y, size of the argument].

    Raises:
        ValueError: `x` is not a list or tuple, or there is no default session.
    """
    if not isinstance(x, (list, tuple)):
        raise ValueError(f"`x` must be a list or tuple of values convertible to a Tensor "
                         f"(arguments to `f`), not a {type(x)}")
    session = graph_mod.get_default_session()
    if session is None:
        raise ValueError("compute_gradient needs a default session in graph mode "
                         "(`with sess.as_default():` or a TestCase session).")
    values = [_argument_value(session, value) for value in x]
    args = [array_ops.placeholder(v.dtype, v.shape, name=f"gradient_checker_x{i}")
            for i, v in enumerate(values)]
    y = convert_to_tensor(f(*args))
    y_shape = tuple(session.run(array_ops.shape(y), {a: v for a, v in zip(args, values)}))
    pairs = checker.compute_gradient(args, [v.shape for v in values], y, y_shape,
                                     x_init_value=values, delta=1e-3 if delta is None else delta)
    theoretical = tuple(np.asarray(t).T for t, _ in pairs)
    numerical = tuple(np.asarray(n).T for _, n in pairs)
    return theoretical, numerical


def max_error(grad1, grad2) -> float:
    """The largest absolute difference between two lists of Jacobians."""
    error = 0.0
    for a, b in zip(grad1, grad2):
        a, b = np.asarray(a), np.asarray(b)
        if a.size or b.size:
            error = max(error, float(np.max(np.fabs(a - b))))
    return error
