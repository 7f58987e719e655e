"""Gradient checking: symbolic Jacobians from `tf.gradients` against central differences."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.ops import array as array_ops
from tensorflux.ops.autodiff.gradients import gradients

__all__ = ["compute_gradient", "compute_gradient_error"]


def _dense(value, shape):
    if hasattr(value, "indices") and hasattr(value, "values") and not isinstance(
            value, np.ndarray):
        dense = np.zeros(shape, dtype=np.asarray(value.values).dtype)
        np.add.at(dense, np.asarray(value.indices), np.asarray(value.values))
        return dense
    return np.asarray(value)


def _theoretical(session, x, x_shape, x_value, y, y_shape, feed):
    y_size = int(np.prod(y_shape))
    x_size = int(np.prod(x_shape))
    dy = array_ops.placeholder(y.dtype.base_dtype, y_shape)
    (grad,) = gradients(y, x, grad_ys=dy)
    jacobian = np.zeros((x_size, y_size), dtype=np.float64)
    if grad is None:
        return jacobian
    fetch = [grad.values, grad.indices] if isinstance(grad, IndexedSlices) else grad
    for col in range(y_size):
        onehot = np.zeros(y_size, dtype=y.dtype.base_dtype.as_numpy_dtype)
        onehot[col] = 1
        value = session.run(fetch, {**feed, x: x_value, dy: onehot.reshape(y_shape)})
        if isinstance(grad, IndexedSlices):
            dense = np.zeros(x_shape, dtype=np.float64)
            np.add.at(dense, np.asarray(value[1]), np.asarray(value[0]))
            value = dense
        jacobian[:, col] = np.asarray(value, dtype=np.float64).reshape(-1)
    return jacobian


def _numerical(session, x, x_shape, x_value, y, y_shape, delta, feed):
    x_size = int(np.prod(x_shape))
    y_size = int(np.prod(y_shape))
    jacobian = np.zeros((x_size, y_size), dtype=np.float64)
    flat = np.array(x_value, copy=True).reshape(-1)
    for row in range(x_size):
        original = flat[row]
        flat[row] = original + delta
        up = np.asarray(session.run(y, {**feed, x: flat.reshape(x_shape)}), np.float64)
        flat[row] = original - delta
        down = np.asarray(session.run(y, {**feed, x: flat.reshape(x_shape)}), np.float64)
        flat[row] = original
        jacobian[row, :] = ((up - down) / (2 * delta)).reshape(-1)
    return jacobian


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                     init_targets=None, extra_feed_dict=None):
    """Returns (theoretical, numerical) Jacobians of y w.r.t. x (lists when x is a list).

    Uses the default session; `x` must be feedable (a placeholder or any tensor). Without
    `x_init_value`, x is drawn uniformly from [0, 1) with NumPy's global generator (as TF1 does,
    so `np.random.seed` makes a check reproducible).
    """
    session = graph_mod.get_default_session()
    if session is None:
        raise ValueError("compute_gradient needs a default session (use `with sess:`).")
    if init_targets is not None:
        session.run(init_targets)
    feed = dict(extra_feed_dict or {})
    xs = x if isinstance(x, (list, tuple)) else [x]
    shapes = x_shape if isinstance(x, (list, tuple)) else [x_shape]
    inits = x_init_value if isinstance(x, (list, tuple)) else [x_init_value]
    if inits is None:
        inits = [None] * len(xs)
    values = []
    for xi, shape, init in zip(xs, shapes, inits):
        dtype = xi.dtype.base_dtype.as_numpy_dtype
        if init is None:  # TF1: uniform [0, 1) draws from NumPy's global generator
            init = np.random.random_sample(shape).astype(dtype)
            if np.iscomplexobj(init):
                init.imag = np.random.random_sample(shape)
        values.append(np.asarray(init, dtype=dtype))
    results = []
    for i, (xi, shape, value) in enumerate(zip(xs, shapes, values)):
        others = {xj: vj for j, (xj, vj) in enumerate(zip(xs, values)) if j != i}
        merged = {**feed, **others}
        theoretical = _theoretical(session, xi, shape, value, y, y_shape, merged)
        numerical = _numerical(session, xi, shape, value, y, y_shape, delta, merged)
        results.append((theoretical, numerical))
    return results if isinstance(x, (list, tuple)) else results[0]


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                           init_targets=None, extra_feed_dict=None) -> float:
    """The largest absolute difference between the symbolic and numerical Jacobians."""
    result = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets,
                              extra_feed_dict)
    pairs = result if isinstance(result, list) else [result]
    error = 0.0
    for theoretical, numerical in pairs:
        if theoretical.size:
            error = max(error, float(np.max(np.abs(theoretical - numerical))))
    return error
