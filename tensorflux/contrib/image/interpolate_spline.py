"""`tf.contrib.image.interpolate_spline`: polyharmonic spline interpolation (TF 1.15).

The interpolant is f(x) = sum_i w_i phi(|x - c_i|) + v . [x, 1] over the train points c_i,
with phi(r) = r^k (k odd) or r^k log r (k even) of the spline `order` k. w and v solve the
bordered system [[A + lambda I, B], [B^T, 0]] [w; v] = [f; 0] with A_ij = phi(|c_i - c_j|) and
B = [c, 1], so with lambda = 0 the spline passes through every train value. Built from core
ops (matmul, matrix_solve), so it is differentiable in the values and points.
"""

from __future__ import annotations

from tensorflux.framework.scopes import name_scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import dimension_value
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.linalg import solvers

__all__ = ["interpolate_spline"]

# phi is evaluated at max(r^2, EPSILON): keeps log(0) and sqrt's gradient at 0 finite
_EPSILON = 1e-10


def _squared_distances(x, y):
    """[b, n, m] squared distances between the rows of x [b, n, d] and y [b, m, d]."""
    x_sq = math_ops.reduce_sum(math_ops.square(x), 2)
    y_sq = math_ops.reduce_sum(math_ops.square(y), 2)
    cross = math_ops.matmul(x, y, adjoint_b=True)
    return array_ops.expand_dims(x_sq, 2) - 2 * cross + array_ops.expand_dims(y_sq, 1)


def _phi(r_squared, order: int):
    """The radial basis of `order` at squared distance r^2."""
    if order == 1:
        return math_ops.sqrt(math_ops.maximum(r_squared, _EPSILON))
    if order == 2:
        return 0.5 * r_squared * math_ops.log(math_ops.maximum(r_squared, _EPSILON))
    if order == 4:
        return 0.5 * math_ops.square(r_squared) * math_ops.log(
            math_ops.maximum(r_squared, _EPSILON))
    r_squared = math_ops.maximum(r_squared, _EPSILON)
    if order % 2 == 0:
        return 0.5 * math_ops.pow(r_squared, 0.5 * order) * math_ops.log(r_squared)
    return math_ops.pow(r_squared, 0.5 * order)


def _static_dims(tensor, what: str):
    if tensor.shape.ndims != 3:
        raise ValueError(f"{what} must be a [batch_size, n, d] tensor, got shape {tensor.shape}")
    dims = [dimension_value(d) for d in tensor.shape._dim_list]
    if None in dims:
        raise ValueError(f"{what} must have a fully static shape, got {tensor.shape}")
    return dims


def interpolate_spline(train_points, train_values, query_points, order,
                       regularization_weight=0.0, name="interpolate_spline"):
    """Fits a polyharmonic spline to (train_points, train_values) and evaluates it at
    query_points.

    Args:
        train_points: [batch_size, n, d] float points (static shape).
        train_values: [batch_size, n, k] values at those points.
        query_points: [batch_size, m, d] points to evaluate at.
        order: the spline order (1: r, 2: thin plate r^2 log r, 3: r^3, ...), a positive int.
        regularization_weight: lambda >= 0 added to the kernel diagonal (0 interpolates
            exactly).
        name: op name.

    Returns:
        [batch_size, m, k] interpolated values.

    Raises:
        ValueError: bad ranks or shapes, order < 1, negative regularization_weight.
    """
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"order must be a positive int, got {order!r}")
    if regularization_weight < 0:
        raise ValueError(f"regularization_weight must be >= 0, got {regularization_weight}")
    with name_scope(name, "interpolate_spline"):
        c = convert_to_tensor(train_points, name="train_points")
        f = convert_to_tensor(train_values, dtype=c.dtype.base_dtype, name="train_values")
        query = convert_to_tensor(query_points, dtype=c.dtype.base_dtype, name="query_points")
        b, n, d = _static_dims(c, "train_points")
        fb, fn, k = _static_dims(f, "train_values")
        if (fb, fn) != (b, n):
            raise ValueError(f"train_values {f.shape} must match train_points {c.shape} in "
                             f"batch size and number of points")
        if query.shape.ndims != 3 or dimension_value(query.shape._dim_list[2]) not in (None, d):
            raise ValueError(f"query_points must be [batch_size, m, {d}], got shape "
                             f"{query.shape}")
        dtype = c.dtype.base_dtype
        with name_scope(None, "solve"):
            kernel = _phi(_squared_distances(c, c), order)
            if regularization_weight > 0:
                kernel += regularization_weight * array_ops.expand_dims(
                    array_ops.eye(n, dtype=dtype), 0)
            border = array_ops.concat([c, array_ops.ones([b, n, 1], dtype)], 2)
            top = array_ops.concat([kernel, border], 2)
            bottom = array_ops.concat([array_ops.transpose(border, [0, 2, 1]),
                                       array_ops.zeros([b, d + 1, d + 1], dtype)], 2)
            lhs = array_ops.concat([top, bottom], 1)
            rhs = array_ops.concat([f, array_ops.zeros([b, d + 1, k], dtype)], 1)
            w_v = solvers.matrix_solve(lhs, rhs)
            w, v = w_v[:, :n, :], w_v[:, n:, :]
        with name_scope(None, "predict"):
            rbf = math_ops.matmul(_phi(_squared_distances(query, c), order), w)
            ones = array_ops.ones_like(query[..., :1])
            linear = math_ops.matmul(array_ops.concat([query, ones], 2), v)
            return rbf + linear
