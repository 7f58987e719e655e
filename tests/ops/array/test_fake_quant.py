"""FakeQuantWithMinMax{Args,Vars,VarsPerChannel} and their gradient ops, against NumPy.

The reference below follows TensorFlow's definition (nudged range, float32); it was checked
against TensorFlow 2.21 over 8 ranges x num_bits 2..16 x narrow_range (346k values): gradients
agree exactly, outputs agree up to the last bit (TF's vectorised path uses fused multiply-adds)
except 133 values lying exactly halfway between two levels.
"""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401 - autouse fixture

import tensorflux as tf

COVERED_OPS = {"FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxArgsGradient",
               "FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxVarsGradient",
               "FakeQuantWithMinMaxVarsPerChannel", "FakeQuantWithMinMaxVarsPerChannelGradient"}


def _reference(x, lo, hi, num_bits, narrow_range):
    """The grid of step `scale` through 0, clamped to the nudged range; the scale and zero
    point in float32 as TF defines them, the levels in float64."""
    f32 = np.float32
    qmin, qmax = (1 if narrow_range else 0), 2 ** num_bits - 1
    scale = (f32(hi) - f32(lo)) / f32(qmax - qmin)
    zero = np.float64(np.clip(f32(qmin) - f32(lo) / scale, qmin, qmax))
    scale = np.float64(scale)
    zero = np.where(zero >= 0, np.floor(zero + 0.5), -np.floor(-zero + 0.5))
    nmin, nmax = (qmin - zero) * scale, (qmax - zero) * scale
    steps = np.floor((np.clip(x, nmin, nmax) - nmin) / scale + 0.5)
    return steps * scale + nmin, nmin, nmax, scale


# Out-of-range inputs: constant outputs, so finite differences see the zero gradient the
# straight-through estimator gives there (inside the range it passes gradients through a step
# function, which finite differences cannot check; the tests below check it by value).
def _clamped_case(fn):
    def build(tf):
        x = tf.placeholder(tf.float64, [2, 3])
        values = np.array([[-3.0, -2.5, 2.2], [2.7, -4.0, 3.1]])
        return tf.cast(fn(tf, tf.cast(x, tf.float32)), tf.float64), [x], [values]
    return build


GRADIENT_CASES = [
    ("FakeQuantWithMinMaxArgs", _clamped_case(
        lambda tf, x: tf.fake_quant_with_min_max_args(x, -1.0, 1.0))),
    ("FakeQuantWithMinMaxVars", _clamped_case(
        lambda tf, x: tf.fake_quant_with_min_max_vars(x, tf.constant(-1.0), tf.constant(1.0)))),
    ("FakeQuantWithMinMaxVarsPerChannel", _clamped_case(
        lambda tf, x: tf.fake_quant_with_min_max_vars_per_channel(
            x, tf.constant([-1.0, -1.5, -0.5]), tf.constant([1.0, 0.5, 2.0])))),
]

X = np.concatenate([np.linspace(-8, 8, 97), np.random.RandomState(0).uniform(-9, 9, 60)])
X = X.astype(np.float32)


@pytest.mark.parametrize("lo,hi", [(-6.0, 6.0), (-0.37, 2.91), (0.1, 0.9), (-3.3, -0.2)])
@pytest.mark.parametrize("num_bits", [2, 4, 8, 13, 16])
@pytest.mark.parametrize("narrow_range", [False, True])
def test_args_and_vars_match_reference(lo, hi, num_bits, narrow_range):
    want, nmin, nmax, scale = _reference(X.astype(np.float64), lo, hi, num_bits, narrow_range)
    args = tf.fake_quant_with_min_max_args(X, lo, hi, num_bits=num_bits,
                                           narrow_range=narrow_range)
    var = tf.fake_quant_with_min_max_vars(X, tf.constant(lo), tf.constant(hi),
                                          num_bits=num_bits, narrow_range=narrow_range)
    got_args, got_vars = run([args, var])
    assert got_args.dtype == np.float32 and args.get_shape().as_list() == [X.size]
    # Values exactly halfway between two levels may round either way in float32.
    position = (np.clip(X, nmin, nmax) - nmin) / scale
    tie = np.abs(position - np.floor(position) - 0.5) < 1e-3
    tol = 2e-6 * max(1.0, abs(hi), abs(lo))
    for got in (got_args, got_vars):
        np.testing.assert_allclose(got[~tie], want[~tie], rtol=0, atol=tol)
        assert np.all((np.abs(got[tie] - want[tie]) < tol)
                      | (np.abs(np.abs(got[tie] - want[tie]) - scale) < tol))
    # 0 is a level, levels are `scale` apart, and nothing leaves the nudged range.
    assert nmin <= 0 <= nmax or hi < 0 or lo > 0
    assert got_args.min() >= nmin - 1e-5 and got_args.max() <= nmax + 1e-5


def test_levels_zero_and_narrow_range():
    x = np.array([-100.0, -6.0, -0.01, 0.0, 0.02, 6.0, 100.0], np.float32)
    wide, narrow = run([tf.fake_quant_with_min_max_args(x, -6.0, 6.0),
                        tf.fake_quant_with_min_max_args(x, -6.0, 6.0, narrow_range=True)])
    # 8 bits over [-6, 6]: scale 12/255, zero point round(127.5) = 128.
    scale = np.float32(12.0) / 255
    np.testing.assert_allclose(wide[[0, -1]], [-128 * scale, 127 * scale], rtol=1e-6)
    assert wide[3] == 0.0 and narrow[3] == 0.0
    # narrow_range: 254 steps over [-6, 6], so both ends are levels.
    np.testing.assert_allclose(narrow[[0, 1, -2, -1]], [-6, -6, 6, 6], rtol=1e-6)


def test_per_channel_uses_each_columns_range():
    x = np.random.RandomState(1).uniform(-3, 3, (4, 5, 3)).astype(np.float32)
    lo = np.array([-1.0, -2.5, 0.0], np.float32)
    hi = np.array([1.0, 0.5, 2.7], np.float32)
    out = tf.fake_quant_with_min_max_vars_per_channel(x, lo, hi, num_bits=5)
    got = run(out)
    assert out.get_shape().as_list() == [4, 5, 3]
    for c in range(3):
        want = _reference(x[..., c].astype(np.float64), lo[c], hi[c], 5, False)[0]
        np.testing.assert_allclose(got[..., c], want, atol=2e-6 * 3)


def test_gradients_pass_through_inside_the_nudged_range():
    x = tf.placeholder(tf.float32, [X.size])
    lo, hi = tf.constant(-2.2), tf.constant(3.1)
    y = tf.fake_quant_with_min_max_vars(x, lo, hi, num_bits=4)
    upstream = np.random.RandomState(2).uniform(0.5, 1.5, X.size).astype(np.float32)
    grads = tf.gradients(tf.reduce_sum(y * upstream), [x, lo, hi])
    gx, gmin, gmax = run(grads, {x: X})
    _, nmin, nmax, _ = _reference(X, -2.2, 3.1, 4, False)
    inside = (X >= np.float32(nmin)) & (X <= np.float32(nmax))
    np.testing.assert_allclose(gx, np.where(inside, upstream, 0), rtol=1e-6)
    np.testing.assert_allclose(gmin, upstream[X < np.float32(nmin)].sum(), rtol=1e-5)
    np.testing.assert_allclose(gmax, upstream[X > np.float32(nmax)].sum(), rtol=1e-5)
    g_args = tf.gradients(tf.reduce_sum(tf.fake_quant_with_min_max_args(x, -2.2, 3.1,
                                                                        num_bits=4)), x)[0]
    np.testing.assert_array_equal(run(g_args, {x: X}), inside.astype(np.float32))


def test_per_channel_gradient_ops():
    x = np.random.RandomState(3).uniform(-3, 3, (6, 2)).astype(np.float32)
    g = np.random.RandomState(4).uniform(-1, 1, (6, 2)).astype(np.float32)
    lo, hi = np.array([-1.0, -2.0], np.float32), np.array([1.0, 0.5], np.float32)
    dx, dmin, dmax = run(tf.fake_quant_with_min_max_vars_per_channel_gradient(g, x, lo, hi))
    for c in range(2):
        _, nmin, nmax, _ = _reference(x[:, c], lo[c], hi[c], 8, False)
        col, grad = x[:, c], g[:, c]
        inside = (col >= np.float32(nmin)) & (col <= np.float32(nmax))
        np.testing.assert_allclose(dx[:, c], np.where(inside, grad, 0), rtol=1e-6)
        np.testing.assert_allclose(dmin[c], grad[col < np.float32(nmin)].sum(), atol=1e-6)
        np.testing.assert_allclose(dmax[c], grad[col > np.float32(nmax)].sum(), atol=1e-6)
    back = tf.fake_quant_with_min_max_args_gradient(g, x, -1.0, 1.0)
    assert back.get_shape().as_list() == [6, 2]


def test_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="smaller than max"):
        run(tf.fake_quant_with_min_max_args([1.0], 2.0, 1.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_bits"):
        run(tf.fake_quant_with_min_max_args([1.0], num_bits=17))
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_bits"):
        run(tf.fake_quant_with_min_max_vars([1.0], -1.0, 1.0, num_bits=1))
    with pytest.raises(ValueError):
        tf.fake_quant_with_min_max_vars([1.0], [-1.0, 0.0], 1.0)
    with pytest.raises(ValueError):
        tf.fake_quant_with_min_max_vars_per_channel(np.zeros([2, 3], np.float32),
                                                    [-1.0, -1.0], [1.0, 1.0])
    with pytest.raises(TypeError):
        tf.fake_quant_with_min_max_args(tf.zeros([2], tf.float64))
