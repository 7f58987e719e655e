"""The backward half of rule 6 (runtime/lstm_cells.py): each fused BasicLSTMCell's gradient
nodes (Muls, SigmoidGrads, TanhGrads, the cell-state AddN, the gates' ConcatV2 and the
gradient tuples' Identities) become one `_LSTMCellPointwiseGrad` node; every gradient equals
the graph with only the forward fused, bit for bit (NaN where it has NaN), and the compiled
kernel equals the NumPy kernel."""

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
from tensorflux.runtime import lstm_cells, rewrites, subgraph

GRAD = "_LSTMCellPointwiseGrad"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from special_values import floats  # noqa: E402

SETTINGS = settings(max_examples=5, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _ops(fetches, feeds):
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


def _run_both(monkeypatch, fetches, feed):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(fetches, feed)
        with monkeypatch.context() as patch:
            patch.setattr(lstm_cells, "FUSE_CELL_GRADIENTS", False)
            with tf.Session() as reference:  # a new session: its plans are built unfused
                for var in tf.global_variables():
                    reference.run(var.assign(sess.run(var)))
                want = reference.run(fetches, feed)
    return got, want


@SETTINGS
@given(dtype=st.sampled_from([tf.float32, tf.float64]), batch=st.integers(1, 4),
       steps=st.integers(1, 3), units=st.sampled_from([1, 2, 5]),
       state_loss=st.booleans(), specials=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_cell_gradients_fuse_and_match(monkeypatch, dtype, batch, steps, units, state_loss,
                                       specials, seed):
    with tf.Graph().as_default():
        tf.set_random_seed(seed % 97)
        inputs = tf.placeholder(dtype, [batch, steps, 3])
        cell = tf.nn.rnn_cell.BasicLSTMCell(units)
        outputs, state = tf.nn.static_rnn(cell, tf.unstack(inputs, axis=1), dtype=dtype)
        loss = tf.reduce_sum(tf.concat(outputs, 1) ** 2)
        if state_loss:  # the last cell state's gradient comes in from outside: with_dc
            loss += tf.reduce_sum(state.c * 3)
        fetches = [loss] + tf.gradients(loss, [inputs] + tf.trainable_variables())
        ops = _ops(fetches, [inputs])
        assert ops.count(GRAD) == steps
        assert "SigmoidGrad" not in ops and "TanhGrad" not in ops
        rng = np.random.default_rng(seed)
        values = rng.standard_normal((batch, steps, 3)) * 4
        if specials:
            values.reshape(-1)[rng.integers(0, values.size)] = rng.choice(
                [np.nan, np.inf, -np.inf, 0.0, -0.0])
        got, want = _run_both(monkeypatch, fetches, {inputs: values.astype(
            dtype.as_numpy_dtype)})
    for g, w in zip(got, want):
        _same(g, w)


def test_a_fetched_intermediate_gradient_keeps_the_cell_unfused(monkeypatch):
    with tf.Graph().as_default():
        inputs = tf.placeholder(tf.float32, [2, 2, 3])
        outputs, _ = tf.nn.static_rnn(tf.nn.rnn_cell.BasicLSTMCell(4),
                                      tf.unstack(inputs, axis=1), dtype=tf.float32)
        loss = tf.reduce_sum(tf.concat(outputs, 1) ** 2)
        sigmoid = tf.get_default_graph().get_tensor_by_name("rnn/basic_lstm_cell/Sigmoid_1:0")
        grads = tf.gradients(loss, [inputs, sigmoid])
        ops = _ops([loss] + grads, [inputs])
        assert ops.count(GRAD) == 1  # the first cell's input gate gradient is fetched
        feed = {inputs: np.linspace(-2, 2, 12, dtype=np.float32).reshape(2, 2, 3)}
        got, want = _run_both(monkeypatch, [loss] + grads, feed)
    for g, w in zip(got, want):
        _same(g, w)


def _operands(rng, dtype, batch, units, special=True):
    shape = (batch, units)
    gates = [floats(rng, shape, dtype, special, scale=2.0) for _ in range(3)]
    squashed = [np.tanh(g) if k else 1 / (1 + np.exp(-g)) for k, g in enumerate(gates)]
    ig = 1 / (1 + np.exp(-floats(rng, shape, dtype, special, scale=2.0)))
    return [floats(rng, shape, dtype, special, scale=3.0) for _ in range(3)] + [
        squashed[0], ig, squashed[1], squashed[2], 1 / (1 + np.exp(-gates[0]))]


def test_kernel_values_and_shape_errors():
    rng = np.random.default_rng(3)
    dh, dc, c, fg, ig, cand, tc, og = (a.astype(np.float64) for a in _operands(
        rng, np.float32, 3, 2, special=False))
    d_gates, d_c = lstm_pointwise._grad_kernel(dh, dc, c, fg, ig, cand, tc, og, with_dc=True)
    d_new_c = dh * og * (1 - tc ** 2) + dc
    np.testing.assert_allclose(d_c, d_new_c * fg, rtol=1e-12)
    want = np.concatenate([d_new_c * cand * ig * (1 - ig), d_new_c * ig * (1 - cand ** 2),
                           d_new_c * c * fg * (1 - fg), dh * tc * og * (1 - og)], axis=1)
    np.testing.assert_allclose(d_gates, want, rtol=1e-12)
    no_dc = lstm_pointwise._grad_kernel(dh, dc * np.nan, c, fg, ig, cand, tc, og,
                                        with_dc=False)
    np.testing.assert_allclose(no_dc[1], (d_new_c - dc) * fg, rtol=1e-12)
    with pytest.raises(errors.InvalidArgumentError, match=GRAD):
        lstm_pointwise._grad_kernel(dh[:2], dc, c, fg, ig, cand, tc, og, with_dc=True)


@pytest.mark.jit_compile
@pytest.mark.skipif(not jit.available(), reason="numba is not available")
@settings(SETTINGS, max_examples=40)
@given(dtype=st.sampled_from([np.float32, np.float64]), batch=st.integers(0, 5),
       units=st.sampled_from([1, 3, 16, 33]), with_dc=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_compiled_kernel_matches_the_numpy_kernel(monkeypatch, dtype, batch, units, with_dc,
                                                  seed):
    rng = np.random.default_rng(seed)
    operands = _operands(rng, dtype, batch, units)
    monkeypatch.setenv("TFX_JIT", "0")
    want = lstm_pointwise._grad_kernel(*operands, with_dc=with_dc)
    monkeypatch.setenv("TFX_JIT", "1")
    for layout in (operands, [np.asfortranarray(a) for a in operands]):
        got = lstm_pointwise._grad_kernel(*layout, with_dc=with_dc)
        for g, w in zip(got, want):
            _same(g, w)
