"""fuse_moving_averages (runtime/moving_averages.py, rule 6 of rewrites): a moving average's
`AssignSub(avg, Mul(Sub(avg, value), factor))` becomes one `_AssignMovingAverage` node whose
shadow values equal the unfused graph's bit for bit (NaN where it has NaN)."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.internal import moving_average
from tensorflux.runtime import moving_averages, rewrites, subgraph
from tensorflux.train import moving_averages as train_averages

FUSED = "_AssignMovingAverage"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from special_values import floats  # noqa: E402

SETTINGS = settings(max_examples=5, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _ops(targets):
    targets = [getattr(t, "op", t) for t in targets]
    nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), [], [], targets)
    return [n.op for n in rewrites.optimize(nodes, points)]


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    bits = f"u{got.itemsize}"
    np.testing.assert_array_equal(got.view(bits), want.view(bits))


def _run_both(monkeypatch, update, fetches, steps=3):
    results = []
    for on in (True, False):
        with monkeypatch.context() as patch:
            patch.setattr(moving_averages, "FUSE_MOVING_AVERAGES", on)
            with tf.Session() as sess:  # a new session: its plans are built with `on`
                sess.run(tf.global_variables_initializer())
                for _ in range(steps):
                    sess.run(update)
                results.append(sess.run(fetches))
    return results


@SETTINGS
@given(dtype=st.sampled_from([tf.float32, tf.float64]), specials=st.booleans(),
       decay=st.sampled_from([0.9, 0.999, 0.0]), seed=st.integers(0, 2 ** 16))
def test_ema_updates_fuse_and_match_the_unfused_graph(monkeypatch, dtype, specials, decay,
                                                      seed):
    rng = np.random.default_rng(seed)
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        shapes = [(300, 4), (7,), (2, 3, 5), ()]
        variables = [tf.Variable(floats(rng, shape, dtype.as_numpy_dtype, specials, scale=3.0))
                     for shape in shapes]
        ema = tf.train.ExponentialMovingAverage(decay, step)
        with tf.control_dependencies([ema.apply(variables)]):
            update = tf.group(*[v.assign(v * 1.5 - 0.25) for v in variables],
                              tf.assign_add(step, 1))
        ops = _ops([update])
        assert ops.count(FUSED) == len(variables) and "AssignSub" not in ops
        got, want = _run_both(monkeypatch, update, [ema.average(v) for v in variables])
    for g, w in zip(got, want):
        _same(g, w)


def test_debiased_and_fetched_forms(monkeypatch):
    with tf.Graph().as_default():
        avg = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
        value = tf.constant(np.full((2, 3), 10, np.float32))
        debiased = train_averages.assign_moving_average(avg, value, 0.5, zero_debias=True)
        assert FUSED in _ops([debiased])  # the shadow's own update, after the debiasing
        got, want = _run_both(monkeypatch, debiased, avg)
        _same(got, want)
    with tf.Graph().as_default():
        avg = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
        value = tf.constant(np.full((2, 3), 10, np.float32))
        update = train_averages.assign_moving_average(avg, value, 0.5, zero_debias=False)
        assert _ops([update]).count(FUSED) == 1
        sub = tf.get_default_graph().get_tensor_by_name(
            update.op.inputs[1].op.inputs[0].name)
        nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), [], [sub],
                                                     [update.op])
        assert FUSED not in [n.op for n in rewrites.optimize(nodes, points)]  # Sub fetched
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(update)
            np.testing.assert_array_equal(sess.run(avg), np.arange(6).reshape(2, 3) * 0.5 + 5)


@pytest.mark.parametrize("jit_flag", ["0", "1"])
def test_kernel_values_fallbacks_and_errors(monkeypatch, jit_flag):
    monkeypatch.setenv("TFX_JIT", jit_flag)
    rng = np.random.default_rng(4)
    for dtype in (np.float32, np.float64):
        for shape in ((0,), (5,), (300, 7), (2, 1, 3)):
            buf = floats(rng, shape, dtype, True, scale=4.0)
            value = floats(rng, shape, dtype, True, scale=4.0)
            factor = dtype(0.001)
            want = buf - (buf - value) * factor
            got = buf.copy()
            moving_average.assign_moving_average(got, value, factor)
            _same(got, want)
    buf = np.ones((2, 3), np.float32)
    moving_average.assign_moving_average(buf, np.zeros(3, np.float32), np.float32(0.5))
    _same(buf, np.full((2, 3), 0.5, np.float32))  # a broadcast value: the NumPy passes
    with pytest.raises(errors.InvalidArgumentError, match="AssignSub"):
        moving_average.assign_moving_average(np.ones(3, np.float32), np.ones((2, 3), np.float32),
                                             np.float32(0.5))
