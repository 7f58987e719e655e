"""tf.py_func / tf.numpy_function / tf.py_function: values, Tout handling, errors, gradients."""

import gc

import numpy as np
import pytest
from array_checks import check
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.script import py_func as script_ops

COVERED_OPS = {"PyFunc", "PyFuncStateless", "EagerPyFunc"}
X = np.array([1.0, -2.0, 3.5], dtype=np.float32)


def test_rows_for_each_op_type():
    y = tf.py_func(lambda a: a * 2, [X], tf.float32)
    s = tf.py_func(lambda a: np.sinh(a), [X], tf.float32, stateful=False)
    e = tf.py_function(lambda a: a.numpy() + 1, [X], tf.float32)
    assert (y.op.type, s.op.type, e.op.type) == ("PyFunc", "PyFuncStateless", "EagerPyFunc")
    assert y.shape.ndims is None and y.name == "PyFunc:0"
    check([y, s, e], [X * 2, np.sinh(X), X + 1])
    assert tf.numpy_function(lambda a: a, [X], tf.float32).op.type == "PyFunc"
    assert tf.numpy_function(lambda a: a, [X], tf.float32, stateful=False).op.type == \
        "PyFuncStateless"


def test_attrs_and_naming():
    y = tf.py_func(lambda a, b: a, [X, 3], tf.float32, name="my_func")
    assert y.name == "my_func:0"
    assert list(y.op.get_attr("Tin")) == [tf.float32, tf.int32]
    assert list(y.op.get_attr("Tout")) == [tf.float32]
    token = y.op.get_attr("token")
    token = token.decode() if isinstance(token, bytes) else token
    assert token.startswith("pyfunc_")
    z = tf.py_func(lambda a: a, [X], tf.float32)
    assert z.op.get_attr("token") != y.op.get_attr("token")
    with tf.name_scope("ns"):
        w = tf.py_func(lambda a: a, [X], "float32")
    assert w.name == "ns/PyFunc:0" and w.dtype == tf.float32
    assert tf.py_function(lambda a: a, [X], tf.float32).op.get_attr("is_async") is False


def test_tout_single_list_tuple_and_empty():
    single = tf.py_func(lambda a: a, [X], tf.float32)
    one_list = tf.py_func(lambda a: a, [X], [tf.float32])
    pair = tf.py_func(lambda a: (a, np.int64(a.shape[0])), [X], (tf.float32, tf.int64))
    assert isinstance(single, tf.Tensor)
    assert isinstance(one_list, list) and len(one_list) == 1
    assert isinstance(pair, list) and [t.dtype for t in pair] == [tf.float32, tf.int64]
    calls = []
    op = tf.py_func(lambda a: calls.append(a.sum()), [X], [])
    assert isinstance(op, tf.Operation) and op.type == "PyFunc" and not op.outputs
    values = run([single, one_list, pair, op])
    np.testing.assert_array_equal(values[0], X)
    np.testing.assert_array_equal(values[1][0], X)
    np.testing.assert_array_equal(values[2][0], X)
    assert values[2][1] == 3 and values[3] is None and calls == [X.sum()]


def test_argument_types_seen_by_func():
    seen = []

    def record(*args):
        seen.extend(args)
        return np.int32(0)

    run(tf.py_func(record, [tf.constant(1.5), tf.constant(["a", "bc"]), tf.constant("s"),
                             tf.constant(3), tf.constant([True, False])], tf.int32))
    number, strings, string, integer, flags = seen
    assert isinstance(number, np.float32) and number == 1.5
    assert strings.dtype == object and strings.tolist() == [b"a", b"bc"]
    assert string == b"s"
    assert isinstance(integer, np.int32)
    assert flags.dtype == np.bool_ and not flags.flags.writeable


def test_func_cannot_write_into_a_variable():
    v = tf.Variable([1.0, 2.0])

    def mutate(a):
        a += 1
        return a

    y = tf.py_func(mutate, [v], tf.float32)
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(errors.InvalidArgumentError, match="read-only"):
            sess.run(y)
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_python_results_convert_like_numpy():
    out = tf.py_func(lambda a: (1, 2.0, "text", ["x", "yz"], True),
                     [X], [tf.int64, tf.float64, tf.string, tf.string, tf.bool])
    values = run(out)
    assert values[0] == 1 and values[0].dtype == np.int64
    assert values[1] == 2.0 and values[1].dtype == np.float64
    assert values[2] == b"text"
    assert values[3].tolist() == [b"x", b"yz"]
    assert values[4] == np.True_


@pytest.mark.parametrize("func, tout, message", [
    (lambda a: 1, tf.float32, "0-th value returned by pyfunc_\\d+ is int64, but expects float"),
    (lambda a: a.astype(np.float64), tf.float32, "is double, but expects float"),
    (lambda a: (a, 1.0), [tf.float32, tf.float32], "1-th value .* is double, but expects float"),
    (lambda a: [1, 2], tf.int64, "pyfunc_\\d+ returns 2 values, but expects to see 1 values"),
    (lambda a: None, tf.float32, "returns 0 values, but expects to see 1 values"),
    (lambda a: (a, a, a), [tf.float32] * 2, "returns 3 values, but expects to see 2"),
])
def test_result_mismatch_is_invalid_argument(func, tout, message):
    y = tf.py_func(func, [X], tout, name="bad_func")
    with pytest.raises(errors.InvalidArgumentError, match=message) as info:
        run(y)
    assert "bad_func" in str(info.value)


@pytest.mark.parametrize("exc, status", [
    (ValueError("v"), errors.InvalidArgumentError),
    (TypeError("t"), errors.InvalidArgumentError),
    (StopIteration(), errors.OutOfRangeError),
    (MemoryError("m"), errors.ResourceExhaustedError),
    (NotImplementedError("n"), errors.UnimplementedError),
    (KeyError("k"), errors.UnknownError),
    (IndexError("i"), errors.UnknownError),
    (RuntimeError("boom"), errors.UnknownError),
    (errors.NotFoundError(None, None, "nf"), errors.UnknownError),
])
def test_exceptions_map_to_status_classes(exc, status):
    def raiser(a):
        raise exc

    y = tf.py_func(raiser, [X], tf.float32, name="raiser")
    with pytest.raises(status) as info:
        run(y)
    assert type(info.value) is status
    assert type(exc).__name__ in str(info.value) and "raiser" in str(info.value)


def test_stop_iteration_ends_a_loop_like_a_queue():
    items = iter([np.float32(1), np.float32(2)])
    y = tf.py_func(lambda: next(items), [], tf.float32)
    seen = []
    with tf.Session() as sess:
        with pytest.raises(errors.OutOfRangeError):
            while True:
                seen.append(sess.run(y))
    assert seen == [1.0, 2.0]


def test_stateful_runs_every_step_and_stateless_is_folded_once_per_plan():
    # TF 1.x folds a stateless py_func of constants when the plan is built (checked against
    # TF: the second run of `s` returns 4.0 again).
    counter = []

    def tick():
        counter.append(1)
        return np.int64(len(counter) - 1)

    y = tf.py_func(tick, [], tf.int64)
    s = tf.py_func(lambda a: a + np.float32(len(counter)), [tf.constant(1.0)], tf.float32,
                   stateful=False)
    with tf.Session() as sess:
        assert [sess.run(y) for _ in range(3)] == [0, 1, 2]
        assert sess.run(s) == 4.0
        assert sess.run(y) == 3
        assert sess.run(s) == 4.0


def test_stateless_identical_calls_stay_distinct():
    a = tf.py_func(lambda v: v + 1, [X], tf.float32, stateful=False)
    b = tf.py_func(lambda v: v - 1, [X], tf.float32, stateful=False)
    va, vb = run([a, b])
    np.testing.assert_array_equal(va, X + 1)
    np.testing.assert_array_equal(vb, X - 1)


def test_feeds_and_set_shape():
    p = tf.placeholder(tf.float64, [None, 2])
    y = tf.py_func(lambda a: a.T.copy(), [p], tf.float64)
    y.set_shape([2, None])
    value = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(run(y, {p: value}), value.T)


def test_not_differentiable_by_default():
    x = tf.constant(X)
    y = tf.py_func(lambda a: a * 2, [x], tf.float32)
    assert tf.gradients(y, x) == [None]
    # EagerPyFunc is differentiable, as in TF (see test_py_func_parallel.py).
    e = tf.py_function(lambda a: a * 2, [x], tf.float32)
    np.testing.assert_allclose(run(tf.gradients(e, x)[0]), np.full(X.shape, 2.0))


def test_gradient_override_map_on_pyfunc():
    @tf.RegisterGradient("ScriptOpsTestDouble")
    def _double_grad(op, grad):
        return grad * 2.0

    x = tf.constant(X)
    with tf.get_default_graph().gradient_override_map({"PyFunc": "ScriptOpsTestDouble",
                                      "PyFuncStateless": "ScriptOpsTestDouble"}):
        y = tf.py_func(lambda a: a * 2, [x], tf.float32)
        s = tf.py_func(lambda a: a * 2, [x], tf.float32, stateful=False)
    gy, = tf.gradients(tf.reduce_sum(y * y), x)
    gs, = tf.gradients(s, x)
    vy, vs = run([gy, gs])
    np.testing.assert_allclose(vy, 2 * (X * 2) * 2)
    np.testing.assert_allclose(vs, np.full(3, 2.0))


def test_py_func_as_its_own_gradient():
    def forward(a):
        return np.sin(a)

    @tf.RegisterGradient("ScriptOpsTestSin")
    def _sin_grad(op, grad):
        return grad * tf.py_func(np.cos, [op.inputs[0]], tf.float64)

    x = tf.placeholder(tf.float64, [4])
    with tf.get_default_graph().gradient_override_map({"PyFunc": "ScriptOpsTestSin"}):
        y = tf.py_func(forward, [x], tf.float64)
    y.set_shape([4])
    value = np.linspace(-1.0, 1.0, 4)
    with tf.Session():
        err = tf.test.compute_gradient_error(x, [4], y, [4], x_init_value=value)
    assert err < 1e-6


def test_graph_def_round_trip_in_process():
    y = tf.py_func(lambda a: a * 3, [X], tf.float32, name="triple")
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run("triple:0"), X * 3)
    assert y.op.type == "PyFunc"


def test_unregistered_token_fails_at_run_time():
    y = tf.py_func(lambda a: a, [X], tf.float32, name="orphan")
    graph_def = tf.get_default_graph().as_graph_def()
    for node in graph_def.node:
        if node.op == "PyFunc":
            node.attr["token"].s = b"pyfunc_not_registered"
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError,
                               match="pyfunc_not_registered.*never serialized"):
                sess.run("orphan:0")
    assert y.op.name == "orphan"


def test_registry_releases_functions_with_their_graph():
    gc.collect()  # graphs of earlier tests may still await the cycle collector
    before = script_ops._REGISTRY.size()
    with tf.Graph().as_default():
        for _ in range(3):
            tf.py_func(lambda a: a, [X], tf.float32)
        assert script_ops._REGISTRY.size() == before + 3
    gc.collect()
    assert script_ops._REGISTRY.size() <= before


def test_construction_errors():
    with pytest.raises(TypeError, match="callable"):
        tf.py_func(3, [X], tf.float32)
    with pytest.raises(TypeError):
        tf.py_func(lambda a: a, tf.constant(X), tf.float32)
    with pytest.raises(TypeError):
        tf.py_func(lambda a: a, [X], "not_a_type")


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, width=32), min_size=0, max_size=6),
       st.sampled_from([np.float32, np.float64, np.int32, np.int64]))
def test_identity_round_trips_values(values, np_dtype):
    with tf.Graph().as_default():
        array = np.asarray(values, dtype=np_dtype)
        dtype = tf.as_dtype(np_dtype)
        y = tf.py_func(lambda a: np.asarray(a).copy(), [array], dtype)
        result = run(y)
    assert result.dtype == np_dtype
    np.testing.assert_array_equal(result, array)


def test_inside_while_loop_and_cond():
    def body(i, x):
        y = tf.py_func(lambda v: np.float32(v * 2), [x], tf.float32)
        y.set_shape([])
        return i + 1, y

    _, looped = tf.while_loop(lambda i, x: i < 5, body, [tf.constant(0), tf.constant(1.0)])
    p = tf.placeholder(tf.bool, [])
    chosen = tf.cond(p, lambda: tf.py_func(lambda: np.float32(1), [], tf.float32),
                     lambda: tf.py_func(lambda: np.float32(2), [], tf.float32))
    with tf.Session() as sess:
        assert sess.run(looped) == 32.0
        assert sess.run(chosen, {p: True}) == 1.0 and sess.run(chosen, {p: False}) == 2.0

