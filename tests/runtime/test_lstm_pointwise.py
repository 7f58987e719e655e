"""fuse_lstm_pointwise (runtime/remapper.py, rule 6 of rewrites): a BasicLSTMCell step's gate
Split and its eleven elementwise nodes become one `_LSTMCellPointwise` node; the forward
values and every gradient equal the unfused graph's bit for bit (NaN where it has NaN)."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.lib.numerics import jit
from tensorflux.ops.internal import lstm_pointwise
from tensorflux.runtime import rewrites, subgraph

FUSED = "_LSTMCellPointwise"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from special_values import floats  # noqa: E402

SETTINGS = settings(max_examples=5, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
KERNEL_SETTINGS = settings(SETTINGS, max_examples=40)


def _unfused(monkeypatch):
    monkeypatch.setattr(rewrites, "fuse_lstm_pointwise", lambda nodes, protected: list(nodes))


def _ops(fetches, feeds=()):
    nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), list(feeds),
                                                 list(fetches), [])
    return [node.op for node in rewrites.optimize(nodes, points)]


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    bits = f"u{got.itemsize}"
    np.testing.assert_array_equal(got[~nan].view(bits), want[~nan].view(bits))


def _lstm(dtype, batch, steps, units, forget_bias=1.0, activation=None):
    inputs = tf.placeholder(dtype, [batch, steps, 3])
    cell = tf.nn.rnn_cell.BasicLSTMCell(units, forget_bias=forget_bias, activation=activation)
    outputs, state = tf.nn.static_rnn(cell, tf.unstack(inputs, axis=1), dtype=dtype)
    loss = tf.reduce_sum(tf.concat(outputs, 1) ** 2) + tf.reduce_sum(state.c)
    grads = tf.gradients(loss, [inputs] + tf.trainable_variables())
    return inputs, [loss, state.c, state.h] + grads


def _run_both(monkeypatch, fetches, feed):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(fetches, feed)
        with monkeypatch.context() as patch:
            _unfused(patch)
            with tf.Session() as reference:  # a new session: its plans are built unfused
                for var in tf.global_variables():
                    reference.run(var.assign(sess.run(var)))
                want = reference.run(fetches, feed)
    return got, want


@SETTINGS
@given(dtype=st.sampled_from([tf.float32, tf.float64]), batch=st.integers(1, 4),
       steps=st.integers(1, 3), units=st.sampled_from([1, 2, 5]),
       forget_bias=st.sampled_from([1.0, 0.0, -2.5]), specials=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_cells_fuse_and_match_the_unfused_graph(monkeypatch, dtype, batch, steps, units,
                                                forget_bias, specials, seed):
    with tf.Graph().as_default():
        tf.set_random_seed(seed % 97)
        inputs, fetches = _lstm(dtype, batch, steps, units, forget_bias)
        ops = _ops(fetches, [inputs])
        assert ops.count(FUSED) == steps and "Split" not in ops and "Sigmoid" not in ops
        rng = np.random.default_rng(seed)
        values = rng.standard_normal((batch, steps, 3)) * 4
        if specials:
            values.reshape(-1)[rng.integers(0, values.size)] = rng.choice(
                [np.nan, np.inf, -np.inf, 0.0, -0.0])
        got, want = _run_both(monkeypatch, fetches, {inputs: values.astype(
            dtype.as_numpy_dtype)})
    for g, w in zip(got, want):
        _same(g, w)


def test_fetched_values_other_activations_and_loops(monkeypatch):
    with tf.Graph().as_default():
        inputs, fetches = _lstm(tf.float32, 2, 2, 3)
        graph = tf.get_default_graph()
        sigmoid = graph.get_tensor_by_name("rnn/basic_lstm_cell/Sigmoid:0")
        # Fetched values (the first step's forget gate, the final state) stay as Identity
        # nodes of the fused outputs, under their names.
        ops = _ops(fetches + [sigmoid], [inputs])
        assert ops.count(FUSED) == 2 and "Sigmoid" not in ops
        feed = {inputs: np.linspace(-2, 2, 12, dtype=np.float32).reshape(2, 2, 3)}
        got, want = _run_both(monkeypatch, fetches + [sigmoid], feed)
        for g, w in zip(got, want):
            _same(g, w)
    with tf.Graph().as_default():
        inputs, fetches = _lstm(tf.float32, 2, 2, 3, activation=tf.nn.relu)
        assert FUSED not in _ops(fetches, [inputs])
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 4, 3])
        cell = tf.nn.rnn_cell.BasicLSTMCell(3)
        outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        loss = tf.reduce_sum(outputs)
        fetches = [loss] + tf.gradients(loss, [x])
        assert FUSED not in _ops(fetches, [x])
        feed = {x: np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 4, 3)}
        got, want = _run_both(monkeypatch, fetches, feed)
        for g, w in zip(got, want):
            _same(g, w)


def test_kernel_values_and_shape_errors():
    rng = np.random.default_rng(2)
    gates = rng.standard_normal((3, 8)).astype(np.float32)
    c = rng.standard_normal((3, 2)).astype(np.float32)
    out = dict(zip(lstm_pointwise.OUTPUTS, lstm_pointwise._kernel(gates, c, np.float32(1))))
    i, j, f, o = np.split(gates.astype(np.float64), 4, axis=1)

    def sigmoid(x):
        return 1 / (1 + np.exp(-x))

    new_c = c * sigmoid(f + 1) + sigmoid(i) * np.tanh(j)
    np.testing.assert_allclose(out["new_c"], new_c, rtol=1e-6)
    np.testing.assert_allclose(out["new_h"], np.tanh(new_c) * sigmoid(o), rtol=1e-6)
    assert all(v.dtype == np.float32 and v.shape == (3, 2) for v in out.values())
    with pytest.raises(errors.InvalidArgumentError, match="_LSTMCellPointwise"):
        lstm_pointwise._kernel(gates[:, :6], c, np.float32(1))
    with pytest.raises(errors.InvalidArgumentError, match="cell state"):
        lstm_pointwise._kernel(gates, c[:2], np.float32(1))


@pytest.mark.jit_compile
@pytest.mark.skipif(not jit.available(), reason="numba is not available")
@KERNEL_SETTINGS
@given(dtype=st.sampled_from([np.float32, np.float64]), batch=st.integers(0, 5),
       units=st.sampled_from([1, 3, 16, 33]), bias=st.sampled_from([1.0, 0.0, -0.5]),
       seed=st.integers(0, 2 ** 16))
def test_compiled_kernel_matches_the_numpy_kernel(monkeypatch, dtype, batch, units, bias,
                                                  seed):
    rng = np.random.default_rng(seed)
    gates = floats(rng, (batch, 4 * units), dtype, True, scale=6.0)
    c = floats(rng, (batch, units), dtype, True, scale=3.0)
    views = (gates, np.asfortranarray(gates))  # a non-contiguous layout too
    monkeypatch.setenv("TFX_JIT", "0")
    want = lstm_pointwise._kernel(gates, c, dtype(bias))
    monkeypatch.setenv("TFX_JIT", "1")
    for view in views:
        got = lstm_pointwise._kernel(view, c, dtype(bias))
        for g, w in zip(got, want):
            _same(g, w)
