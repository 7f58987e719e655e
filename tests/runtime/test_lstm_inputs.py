"""hoist_input_products (runtime/lstm_inputs.py, rule 6 of rewrites): an unrolled RNN's
`x_t @ K_x` for every step as one product, forward and backward; the values (losses, states,
every gradient, the trained variables) match the unrewritten graph within float tolerance,
NaN/inf where it has them."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.internal import lstm_inputs as kernels
from tensorflux.protos.rewriter_config_pb2 import RewriterConfig
from tensorflux.runtime import lstm_inputs, rewrites, subgraph

SETTINGS = settings(max_examples=4, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
HOISTED, STATE, GRAD = "_InputProducts", "_StateProduct", "_InputProductsGrad"
STATE_GRAD = "_StateProductGrad"
STACKED = "_InputProductsGradStacked"


def _ops(fetches, feeds=(), rewrite_options=None):
    nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), list(feeds),
                                                 list(fetches), [])
    return [n.op for n in rewrites.optimize(nodes, points, rewrite_options=rewrite_options)]


def _close(got, want, dtype):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 2e-5 if want.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.nanmax(
        np.abs(np.where(np.isfinite(want), want, 0)), initial=0)))


def _run_both(monkeypatch, fetches, feed, train=None):
    """The fetches (and the variables after `train`) with the rule on, then off."""
    results = []
    for on in (True, False):
        with monkeypatch.context() as patch:
            patch.setattr(lstm_inputs, "HOIST_INPUT_PRODUCTS", on)
            with tf.Session() as sess:  # a new session: its plans are built with `on`
                sess.run(tf.global_variables_initializer())
                values = sess.run(fetches, feed)
                if train is not None:
                    sess.run(train, feed)
                    values += sess.run(tf.trainable_variables())
        results.append(values)
    return results


def _lstm(dtype, batch, steps, width, units):
    inputs = tf.placeholder(dtype, [batch, steps, width])
    cell = tf.nn.rnn_cell.BasicLSTMCell(units)
    outputs, state = tf.nn.static_rnn(cell, tf.unstack(inputs, axis=1), dtype=dtype)
    loss = tf.reduce_sum(tf.concat(outputs, 1) ** 2) + tf.reduce_sum(state.c)
    grads = tf.gradients(loss, [inputs] + tf.trainable_variables())
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return inputs, [loss, state.c, state.h] + grads, train


@SETTINGS
@given(dtype=st.sampled_from([tf.float32, tf.float64]), batch=st.integers(1, 4),
       steps=st.integers(1, 4), width=st.sampled_from([1, 3, 7]),
       units=st.sampled_from([1, 2, 5]), special=st.sampled_from([None, np.nan, np.inf]),
       seed=st.integers(0, 2 ** 16))
def test_hoisted_products_match_the_unrewritten_graph(monkeypatch, dtype, batch, steps, width,
                                                      units, special, seed):
    with tf.Graph().as_default():
        tf.set_random_seed(seed % 97)
        inputs, fetches, train = _lstm(dtype, batch, steps, width, units)
        ops = _ops(fetches, [inputs])
        hoisted = steps >= 2
        assert ops.count(HOISTED) == int(hoisted)
        # the input gradients read the kernel gradient's stacked step gradients
        assert ops.count(STACKED) == int(hoisted) and GRAD not in ops
        assert ops.count(STATE) == (steps if hoisted else 0)
        assert ops.count(STATE_GRAD) in ((steps - 1, steps) if hoisted else (0,))
        rng = np.random.default_rng(seed)
        values = rng.standard_normal((batch, steps, width)) * 2
        if special is not None:
            values.reshape(-1)[rng.integers(0, values.size)] = special
        got, want = _run_both(monkeypatch, fetches, {inputs: values.astype(
            dtype.as_numpy_dtype)}, train)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        _close(g, w, dtype)


def test_fetched_gates_switches_and_inputs_not_known_up_front(monkeypatch):
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        inputs, fetches, _ = _lstm(tf.float32, 2, 3, 4, 3)
        gates = tf.get_default_graph().get_tensor_by_name("rnn/basic_lstm_cell/BiasAdd_1:0")
        ops = _ops(fetches + [gates], [inputs])
        assert ops.count(STATE) == 3  # the fetched gate product keeps its name
        feed = {inputs: np.linspace(-2, 2, 24, dtype=np.float32).reshape(2, 3, 4)}
        got, want = _run_both(monkeypatch, fetches + [gates], feed)
        for g, w in zip(got, want):
            _close(g, w, tf.float32)
        off = RewriterConfig(remapping=RewriterConfig.OFF)
        assert HOISTED not in _ops(fetches, [inputs], rewrite_options=off)
    with tf.Graph().as_default():
        # Each step's input is the previous step's output: nothing to hoist.
        tf.set_random_seed(2)
        x = tf.placeholder(tf.float32, [2, 3])
        cell = tf.nn.rnn_cell.BasicLSTMCell(3)
        state = cell.zero_state(2, tf.float32)
        out = x
        for _ in range(3):
            out, state = cell(out, state)
        loss = tf.reduce_sum(out)
        fetches = [loss] + tf.gradients(loss, [x] + tf.trainable_variables())
        assert HOISTED not in _ops(fetches, [x])
        feed = {x: np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)}
        got, want = _run_both(monkeypatch, fetches, feed)
        for g, w in zip(got, want):
            _close(g, w, tf.float32)


@settings(max_examples=25, deadline=None)
@given(dtype=st.sampled_from([np.float32, np.float64]), rows=st.lists(
    st.integers(0, 4), min_size=1, max_size=4), width=st.integers(0, 5),
    state=st.integers(0, 4), units=st.integers(1, 6), seed=st.integers(0, 2 ** 16))
def test_kernels_match_numpy(dtype, rows, width, state, units, seed):
    rng = np.random.default_rng(seed)
    kernel = rng.standard_normal((width + state, units)).astype(dtype)
    bias = rng.standard_normal(units).astype(dtype)
    xs = [rng.standard_normal((r, width)).astype(dtype) for r in rows]
    kept, *parts = kernels.input_products(xs, kernel, bias)
    np.testing.assert_array_equal(kept, kernel[:width])
    assert not np.shares_memory(kept, kernel)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for x, part in zip(xs, parts):
        assert part.dtype == dtype
        np.testing.assert_allclose(part, x @ kernel[:width] + bias, rtol=tol, atol=tol)
    h = rng.standard_normal((rows[0], state)).astype(dtype)
    gates = kernels.state_product(h, kernel, parts[0])
    np.testing.assert_allclose(gates, np.concatenate([xs[0], h], 1) @ kernel + bias,
                               rtol=tol, atol=10 * tol)
    grads = [rng.standard_normal((r, units)).astype(dtype) for r in rows]
    got = kernels.input_products_grad(grads, kept)
    got = [got] if len(grads) == 1 else got
    for g, part in zip(grads, got):
        np.testing.assert_allclose(part, g @ kernel[:width].T, rtol=tol, atol=tol)
    state_grad = kernels.state_product_grad(grads[0], kernel, width)
    assert state_grad.shape == (rows[0], state) and state_grad.dtype == dtype
    np.testing.assert_allclose(state_grad, grads[0] @ kernel[width:].T, rtol=tol, atol=tol)


def test_kernel_shape_errors_name_the_op():
    k = np.ones((5, 4), np.float32)
    b = np.zeros(4, np.float32)
    with pytest.raises(errors.InvalidArgumentError, match="_InputProducts"):
        kernels.input_products([np.ones((2, 3), np.float32), np.ones((2, 2), np.float32)], k, b)
    with pytest.raises(errors.InvalidArgumentError, match="bias"):
        kernels.input_products([np.ones((2, 3), np.float32)], k, b[:3])
    with pytest.raises(errors.InvalidArgumentError, match="_StateProduct"):
        kernels.state_product(np.ones((2, 2), np.float32), k, np.ones((3, 4), np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="_InputProductsGrad"):
        kernels.input_products_grad([np.ones((2, 3), np.float32)], k[:3])
    with pytest.raises(errors.InvalidArgumentError, match="_StateProductGrad"):
        kernels.state_product_grad(np.ones((2, 3), np.float32), k, 2)
    with pytest.raises(errors.InvalidArgumentError, match="matrix"):
        kernels.state_product(np.ones(2, np.float32), k, np.ones((2, 4), np.float32))


@pytest.mark.parametrize("make_cell", [
    lambda: tf.nn.rnn_cell.GRUCell(3),
    lambda: tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True, num_proj=2),
    lambda: tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3) for _ in range(2)]),
])
def test_other_cells_match_the_unrewritten_graph(monkeypatch, make_cell):
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        inputs = tf.placeholder(tf.float32, [2, 4, 5])
        outputs, _ = tf.nn.static_rnn(make_cell(), tf.unstack(inputs, axis=1), dtype=tf.float32)
        loss = tf.reduce_sum(tf.concat(outputs, 1) ** 2)
        fetches = [loss] + tf.gradients(loss, [inputs] + tf.trainable_variables())
        assert HOISTED in _ops(fetches, [inputs])
        feed = {inputs: np.linspace(-2, 2, 40, dtype=np.float32).reshape(2, 4, 5)}
        got, want = _run_both(monkeypatch, fetches, feed)
    for g, w in zip(got, want):
        _close(g, w, tf.float32)


def test_stacked_gradients_are_shared_and_the_stacked_kernel():
    with tf.Graph().as_default():
        inputs, fetches, train = _lstm(tf.float32, 2, 3, 3, 2)
        nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), [inputs],
                                                     fetches, [train])
        out = rewrites.optimize(nodes, points)
        stacked = [n for n in out if n.op == STACKED]
        assert len(stacked) == 1
        concat = stacked[0].inputs[0][0]
        assert concat.op == "ConcatV2" and concat.attrs["N"] == 3
        # the kernel and the bias gradients read that one concat: no other concat of them
        readers = {n.op for n in out if any(src is concat for src, _ in n.inputs)}
        assert STACKED in readers and len(readers) >= 2
        same = lstm_inputs._resolved(concat.inputs[:-1])
        assert [n for n in out if n.op == "ConcatV2" and
                lstm_inputs._resolved(n.inputs[:-1]) == same] == [concat]
    rng = np.random.default_rng(0)
    grads, rows = rng.standard_normal((6, 8)), rng.standard_normal((3, 8))
    parts = kernels._input_products_grad_stacked(grads, rows, N=3)
    want = kernels.input_products_grad(np.split(grads, 3), rows)
    for got, ref in zip(parts, want):
        np.testing.assert_array_equal(got, ref)
    with pytest.raises(errors.InvalidArgumentError, match=STACKED):
        kernels._input_products_grad_stacked(grads, rows, N=4)
