"""Fractional max and average pooling (Graham, 2014): FractionalMaxPool, FractionalAvgPool and
their gradients.

Each spatial dimension of length `n` is cut into `m = floor(n / ratio)` intervals of length
`floor(n / m)` or one more, given as a cumulative pooling sequence `[0, ..., n]`: a random
permutation of the lengths, or (`pseudo_random`) `ceil(alpha * (i + u))` boundaries for a random
`u`. With `overlapping`, each window also takes the first element of the next interval. Kernels
loop over offsets inside the (small) window, gathering one strided plane per offset.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.array import shapes as shape_ops

__all__ = ["fractional_max_pool", "fractional_avg_pool"]

_TYPES = "T: {float32, float64, int32, int64}"
_POOL_ATTRS = ["pooling_ratio: list(float) >= 4", "pseudo_random: bool = False",
               "overlapping: bool = False", "deterministic: bool = False", "seed: int = 0",
               "seed2: int = 0", _TYPES]
_UINT64 = (1 << 64) - 1


def _check_ratio(pooling_ratio):
    if len(pooling_ratio) != 4:
        raise ValueError(f"pooling_ratio must have 4 elements, got {list(pooling_ratio)}")
    if pooling_ratio[0] != 1 or pooling_ratio[3] != 1:
        raise ValueError(f"fractional pooling is not supported on the batch nor channel "
                         f"dimension: pooling_ratio = {list(pooling_ratio)}")
    if min(pooling_ratio) < 1:
        raise ValueError(f"pooling_ratio must be >= 1, got {list(pooling_ratio)}")


def _pool_shape(value, pooling_ratio):
    _check_ratio(pooling_ratio)
    dims = value.with_rank(4).as_list()
    out = [None if d is None else int(np.floor(d / r)) for d, r in zip(dims, pooling_ratio)]
    for d, o in zip(dims[1:3], out[1:3]):
        if d is not None and o < 1:
            raise ValueError(f"pooling_ratio {list(pooling_ratio)} is higher than the input "
                             f"size {dims}")
    return [TensorShape(out), TensorShape([None if out[1] is None else out[1] + 1]),
            TensorShape([None if out[2] is None else out[2] + 1])]


def _sequence(rng, n, m, pseudo_random):
    """Cumulative pooling sequence of length m + 1 from 0 to n."""
    k = n // m
    if pseudo_random:
        alpha = n / m
        u_max = min((k + 2) / alpha - 1, (n + 1 - k) / alpha - (m - 1))
        u = rng.random() * u_max
        bounds = np.ceil(alpha * (np.arange(1, m) + u)).astype(np.int64) - 1
        return np.concatenate([[0], bounds, [n]]).astype(np.int64)
    lengths = np.full(m, k, np.int64)
    lengths[:n % m] += 1
    return np.concatenate([[0], np.cumsum(rng.permutation(lengths))]).astype(np.int64)


def _windows(seq, size, overlapping):
    """(start, inclusive end) per window, the end clipped to the input."""
    start = seq[:-1]
    end = seq[1:] if overlapping else seq[1:] - 1
    return start, np.minimum(end, size - 1)


def _check_sequences(shape, out_shape, rows, cols):
    for what, seq, n, m in (("row", rows, shape[1], out_shape[1]),
                            ("col", cols, shape[2], out_shape[2])):
        if seq.shape != (m + 1,) or seq[0] != 0 or seq[-1] > n or np.any(np.diff(seq) < 1):
            raise errors.InvalidArgumentError(
                None, None, f"{what}_pooling_sequence must be {m + 1} increasing positions "
                            f"from 0 to at most {n}, got {seq.tolist()}")


def _offsets(rows, cols, size, overlapping):
    """Per window offset (di, dj): input rows/cols and validity for every output position."""
    r0, r1 = _windows(rows, size[0], overlapping)
    c0, c1 = _windows(cols, size[1], overlapping)
    for di in range(int((r1 - r0).max(initial=0)) + 1):
        for dj in range(int((c1 - c0).max(initial=0)) + 1):
            r, c = r0 + di, c0 + dj
            valid = (r <= r1)[:, None] & (c <= c1)[None, :]
            yield np.minimum(r, size[0] - 1), np.minimum(c, size[1] - 1), valid


def _argmax_positions(x, rows, cols, overlapping):
    """Max and flat input index of the first maximum (row-major in the window) per output."""
    out_shape = (x.shape[0], rows.size - 1, cols.size - 1, x.shape[3])
    best = np.zeros(out_shape, x.dtype)
    where = np.zeros(out_shape, np.int64)
    have = np.zeros(out_shape, bool)
    n, h, w, c = x.shape
    base = (np.arange(n)[:, None, None, None] * h) * w * c + np.arange(c)
    for r, q, valid in _offsets(rows, cols, (h, w), overlapping):
        value = x[:, r[:, None], q[None, :], :]
        better = valid[None, :, :, None] & (~have | (value > best))
        have |= better
        np.copyto(best, value, where=better)
        flat = base + ((r[:, None] * w + q[None, :]) * c)[None, :, :, None]
        np.copyto(where, np.broadcast_to(flat, out_shape), where=better)
    return best, where


def _window_sums(x, rows, cols, overlapping):
    """Sum and element count of each window."""
    sums = np.zeros((x.shape[0], rows.size - 1, cols.size - 1, x.shape[3]), np.float64)
    counts = np.zeros((rows.size - 1, cols.size - 1), np.float64)
    for r, q, valid in _offsets(rows, cols, x.shape[1:3], overlapping):
        sums += np.where(valid[None, :, :, None], x[:, r[:, None], q[None, :], :], 0)
        counts += valid
    return sums, counts


def _pool_kernel_factory(reduce):
    def factory(pooling_ratio, pseudo_random, overlapping, deterministic, seed, seed2, T):
        if not deterministic and (seed or seed2):
            def refuse(value):
                raise errors.InvalidArgumentError(
                    None, None, "Both seed and seed2 should be 0 if deterministic is false.")

            return refuse
        if seed == 0 and seed2 == 0:
            entropy = np.random.SeedSequence().entropy
            key = [entropy & _UINT64, (entropy >> 64) & _UINT64]
        else:
            key = [int(seed) & _UINT64, int(seed2) & _UINT64]
        shared = np.random.Generator(np.random.PCG64(np.random.SeedSequence(key)))

        def pool(value):
            if value.ndim != 4:
                raise errors.InvalidArgumentError(
                    None, None, f"value must be 4-D, got shape {list(value.shape)}")
            out = [int(np.floor(d / r)) for d, r in zip(value.shape, pooling_ratio)]
            if min(out[1:3]) < 1:
                raise errors.InvalidArgumentError(
                    None, None, f"Pooling ratio is higher than input dimension size: input "
                                f"shape {list(value.shape)}, pooling_ratio "
                                f"{list(pooling_ratio)}")
            # NOTE: deterministic pooling redraws from the seeds each step, so every run of
            # the node pools the same regions.
            rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(key))) \
                if deterministic else shared
            rows = _sequence(rng, value.shape[1], out[1], pseudo_random)
            cols = _sequence(rng, value.shape[2], out[2], pseudo_random)
            return reduce(value, rows, cols, overlapping), rows, cols

        return pool

    return factory


def _max_reduce(value, rows, cols, overlapping):
    return _argmax_positions(value, rows, cols, overlapping)[0]


def _avg_reduce(value, rows, cols, overlapping):
    sums, counts = _window_sums(value, rows, cols, overlapping)
    out = sums / counts[None, :, :, None]
    if np.issubdtype(value.dtype, np.integer):
        return np.trunc(out).astype(value.dtype)
    return out.astype(value.dtype)


def _define_pool(name, reduce):
    op = define_op(name, inputs=["value: T"],
                   outputs=["output: T", "row_pooling_sequence: int64",
                            "col_pooling_sequence: int64"],
                   attrs=_POOL_ATTRS, stateful=True)

    def shape(value, *, pooling_ratio):
        return _pool_shape(value, pooling_ratio)

    shape.__name__ = f"_{name.lower()}_shape"
    op.shape_fn(shape)
    op.kernel(factory=True)(_pool_kernel_factory(reduce))
    return op


FractionalMaxPool = _define_pool("FractionalMaxPool", _max_reduce)
FractionalAvgPool = _define_pool("FractionalAvgPool", _avg_reduce)

FractionalMaxPoolGrad = define_op(
    "FractionalMaxPoolGrad",
    inputs=["orig_input: T", "orig_output: T", "out_backprop: T",
            "row_pooling_sequence: int64", "col_pooling_sequence: int64"],
    outputs=["output: T"], attrs=["overlapping: bool = False", _TYPES], differentiable=False)


@FractionalMaxPoolGrad.shape_fn
def _fractional_max_pool_grad_shape(orig_input, orig_output, out_backprop,
                                    row_pooling_sequence, col_pooling_sequence):
    return orig_input.with_rank(4)


@FractionalMaxPoolGrad.kernel
def _fractional_max_pool_grad_kernel(orig_input, orig_output, out_backprop,
                                     row_pooling_sequence, col_pooling_sequence, *,
                                     overlapping):
    _check_sequences(orig_input.shape, out_backprop.shape, row_pooling_sequence,
                     col_pooling_sequence)
    _, where = _argmax_positions(orig_input, row_pooling_sequence, col_pooling_sequence,
                                 overlapping)
    grad = np.bincount(where.reshape(-1), weights=out_backprop.reshape(-1).astype(np.float64),
                       minlength=orig_input.size)
    return grad.reshape(orig_input.shape).astype(orig_input.dtype)


FractionalAvgPoolGrad = define_op(
    "FractionalAvgPoolGrad",
    inputs=["orig_input_tensor_shape: int64", "out_backprop: T",
            "row_pooling_sequence: int64", "col_pooling_sequence: int64"],
    outputs=["output: T"], attrs=["overlapping: bool = False", _TYPES], differentiable=False)


@FractionalAvgPoolGrad.shape_fn(value_inputs=("orig_input_tensor_shape",))
def _fractional_avg_pool_grad_shape(orig_input_tensor_shape, out_backprop,
                                    row_pooling_sequence, col_pooling_sequence):
    if orig_input_tensor_shape is None:
        return TensorShape([None] * 4)
    return TensorShape([int(d) for d in orig_input_tensor_shape])


@FractionalAvgPoolGrad.kernel
def _fractional_avg_pool_grad_kernel(orig_input_tensor_shape, out_backprop,
                                     row_pooling_sequence, col_pooling_sequence, *,
                                     overlapping):
    shape = tuple(int(d) for d in orig_input_tensor_shape)
    if len(shape) != 4:
        raise errors.InvalidArgumentError(
            None, None, f"orig_input_tensor_shape must have 4 elements, got {list(shape)}")
    _check_sequences(shape, out_backprop.shape, row_pooling_sequence, col_pooling_sequence)
    n, h, w, c = shape
    _, counts = _window_sums(np.zeros((1, h, w, 1)), row_pooling_sequence,
                             col_pooling_sequence, overlapping)
    share = out_backprop.astype(np.float64) / counts[None, :, :, None]
    grad = np.zeros(n * h * w * c, np.float64)
    base = (np.arange(n)[:, None, None, None] * h) * w * c + np.arange(c)
    for r, q, valid in _offsets(row_pooling_sequence, col_pooling_sequence, (h, w),
                                overlapping):
        flat = base + ((r[:, None] * w + q[None, :]) * c)[None, :, :, None]
        weights = np.where(valid[None, :, :, None], share, 0.0)
        grad += np.bincount(np.broadcast_to(flat, weights.shape).reshape(-1),
                            weights=weights.reshape(-1), minlength=grad.size)
    return grad.reshape(shape).astype(out_backprop.dtype)


@FractionalMaxPool.gradient
def _fractional_max_pool_grad(op, grad, _rows, _cols):
    return [FractionalMaxPoolGrad(op.inputs[0], op.outputs[0], grad, op.outputs[1],
                                  op.outputs[2], overlapping=op.get_attr("overlapping"))]


@FractionalAvgPool.gradient
def _fractional_avg_pool_grad(op, grad, _rows, _cols):
    return [FractionalAvgPoolGrad(shape_ops.shape(op.inputs[0], out_type=dtypes.int64), grad,
                                  op.outputs[1], op.outputs[2],
                                  overlapping=op.get_attr("overlapping"))]


def _pool(op, value, pooling_ratio, pseudo_random, overlapping, deterministic, seed, seed2,
          name, default):
    with graph_mod.get_default_graph().name_scope(name or default):
        value = convert_to_tensor(value, name="value")
        return tuple(op(value, pooling_ratio=[float(r) for r in pooling_ratio],
                        pseudo_random=pseudo_random, overlapping=overlapping,
                        deterministic=deterministic, seed=seed, seed2=seed2))


def fractional_max_pool(value, pooling_ratio, pseudo_random=False, overlapping=False,
                        deterministic=False, seed=0, seed2=0, name=None):
    """Fractional max pooling of a 4-D NHWC tensor by non-integer ratios.

    Args:
        value: `[batch, height, width, channels]` tensor (float32/64, int32/64).
        pooling_ratio: 4 floats `[1.0, ratio_h, ratio_w, 1.0]`, each >= 1.
        pseudo_random: pseudorandom instead of random interval boundaries.
        overlapping: windows also take the first element of the next interval.
        deterministic: pool the same regions every run (from `seed`, `seed2`).
        seed, seed2: seeds; both must be 0 unless `deterministic`.
        name: optional name.

    Returns:
        `(output, row_pooling_sequence, col_pooling_sequence)`: the pooled tensor
        `[batch, floor(h / ratio_h), floor(w / ratio_w), channels]` and the int64 cumulative
        interval boundaries used for rows and columns.

    Raises:
        ValueError: a ratio below 1 or on the batch/channel dimension.

    Example:
        >>> out, rows, cols = tf.nn.fractional_max_pool(x, [1.0, 1.44, 1.73, 1.0])
    """
    return _pool(FractionalMaxPool, value, pooling_ratio, pseudo_random, overlapping,
                 deterministic, seed, seed2, name, "FractionalMaxPool")


def fractional_avg_pool(value, pooling_ratio, pseudo_random=False, overlapping=False,
                        deterministic=False, seed=0, seed2=0, name=None):
    """Fractional average pooling; arguments and results as in `fractional_max_pool`.

    Example:
        >>> out, rows, cols = tf.nn.fractional_avg_pool(x, [1.0, 1.5, 1.5, 1.0], seed=0)
    """
    return _pool(FractionalAvgPool, value, pooling_ratio, pseudo_random, overlapping,
                 deterministic, seed, seed2, name, "FractionalAvgPool")
