"""tf.function (graph mode) and the call/functional control-flow ops: values against NumPy,
one trace per signature, captured variables by reference, gradients against finite
differences, errors."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.control_flow import functional_control as fc

COVERED_OPS = {"PartitionedCall", "StatefulPartitionedCall", "If", "StatelessIf", "Case",
               "While", "StatelessWhile", "For"}


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _numeric_grad(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


# -- GRADIENT_CASES ------------------------------------------------------------------------------


def _call_case(tf):
    x = tf.placeholder(tf.float64, [3])
    f = tf.function(lambda a: tf.reduce_sum(tf.sin(a) * a))
    return f(x), [x], [np.array([0.3, -0.7, 1.1])]


def _stateful_call_case(tf):
    x = tf.placeholder(tf.float64, [2, 2])
    f = tf.function(lambda a: tf.matmul(a, a) + 0.0 * tf.random_uniform([], dtype=tf.float64))
    return f(x), [x], [np.array([[0.5, -1.0], [2.0, 0.25]])]


def _if_case(tf, op):
    x = tf.placeholder(tf.float64, [3])
    y = tf.placeholder(tf.float64, [])
    then_branch = (lambda a, b: a * b + tf.random_uniform([], dtype=tf.float64) * 0.0) \
        if op == "If" else (lambda a, b: a * b)
    (out,) = fc.if_(tf.constant(True), [x, y], then_branch, lambda a, b: a - b)
    return out * out, [x, y], [np.array([1.0, -2.0, 0.5]), np.array(1.5)]


def _case_case(tf):
    x = tf.placeholder(tf.float64, [3])
    (out,) = fc.case_(tf.constant(1), [x], [lambda a: a + 1.0, lambda a: tf.exp(a) * a,
                                            lambda a: -a])
    return out, [x], [np.array([0.1, -0.4, 0.8])]


def _while_case(tf, op):
    x = tf.placeholder(tf.float64, [2])
    c = tf.placeholder(tf.float64, [])
    noise = (lambda: tf.random_uniform([], dtype=tf.float64) * 0.0) if op == "While" else (
        lambda: 0.0)
    _, y = fc.while_([tf.constant(0), x], lambda i, s: i < 3,
                     lambda i, s: (i + 1, tf.sin(s) * c + s + noise()))
    return y, [x, c], [np.array([0.3, -0.5]), np.array(0.7)]


def _for_case(tf):
    x = tf.placeholder(tf.float64, [2])
    c = tf.placeholder(tf.float64, [])
    (y,) = fc.for_(0, 4, 1, [x], lambda k, s: s * s * 0.5 + tf.cast(k, tf.float64) * c)
    return y, [x, c], [np.array([0.3, -0.5]), np.array(0.7)]


GRADIENT_CASES = [
    ("PartitionedCall", _call_case),
    ("While", lambda tf: _while_case(tf, "While")),
    ("StatelessWhile", lambda tf: _while_case(tf, "StatelessWhile")),
    ("For", _for_case),
    ("StatefulPartitionedCall", _stateful_call_case),
    ("If", lambda tf: _if_case(tf, "If")),
    ("StatelessIf", lambda tf: _if_case(tf, "StatelessIf")),
    ("Case", _case_case),
]


# -- tf.function ---------------------------------------------------------------------------------


def test_function_values_structure_and_one_trace_per_signature():
    traces = []

    @tf.function
    def f(x, y, scale=2.0):
        traces.append(scale)
        return {"lin": x * scale + y, "sum": (tf.reduce_sum(x),)}

    a = tf.placeholder(tf.float32, [3])
    b = tf.constant([1.0, 2.0, 3.0])
    r1 = f(a, b)
    r2 = f(b, a)
    r3 = f(a, b, scale=3.0)
    r4 = f(tf.constant([[1.0]]), tf.constant([[2.0]]))
    assert traces == [2.0, 3.0, 2.0]  # same dtype/shape and scale reuse the first trace
    assert r1["lin"].op.type == "PartitionedCall" and r1["lin"].shape.as_list() == [3]
    xa = np.array([0.5, -1.0, 4.0], np.float32)
    out = _run([r1, r2, r3, r4], {a: xa})
    bv = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(out[0]["lin"], xa * 2 + bv)
    np.testing.assert_allclose(out[0]["sum"][0], xa.sum())
    np.testing.assert_allclose(out[1]["lin"], bv * 2 + xa)
    np.testing.assert_allclose(out[2]["lin"], xa * 3 + bv)
    np.testing.assert_allclose(out[3]["lin"], [[4.0]])


def test_function_input_signature_one_trace_and_mismatch_errors():
    traces = []

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        traces.append(1)
        return x * x

    y1 = f(tf.constant([1.0, 2.0]))
    y2 = f([3.0, 4.0, 5.0])
    assert len(traces) == 1 and y1.shape.as_list() == [None]
    np.testing.assert_allclose(_run(y2), [9.0, 16.0, 25.0])
    with pytest.raises(ValueError, match="not compatible"):
        f(tf.constant([[1.0]]))
    with pytest.raises(ValueError, match="input_signature has 1 arguments"):
        f(tf.constant([1.0]), tf.constant([2.0]))
    with pytest.raises(TypeError, match="TensorSpec"):
        tf.function(lambda x: x, input_signature=[tf.float32])


def test_function_captures_tensors_and_variables_by_reference():
    v = tf.Variable(3.0)
    outer = tf.placeholder(tf.float32, [])

    @tf.function
    def bump(x):
        tf.assign_add(v, x)
        return v.read_value() * 2.0 + outer

    out = bump(tf.constant(1.0))
    assert out.op.type == "StatefulPartitionedCall"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(out, {outer: 0.5}) == pytest.approx(8.5)
        assert sess.run(out, {outer: 0.0}) == pytest.approx(10.0)
        assert sess.run(v) == pytest.approx(5.0)


def test_function_nested_calls_and_no_outputs_returns_the_op():
    v = tf.Variable(0.0)

    @tf.function
    def inner(x):
        return x + 1.0

    @tf.function
    def outer(x):
        return inner(inner(x)) * 3.0

    @tf.function
    def effect():
        tf.assign_add(v, 2.0)

    y = outer(tf.constant(1.0))
    op = effect()
    assert isinstance(op, tf.Operation)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(y) == pytest.approx(9.0)
        sess.run(op)
        sess.run(op)
        assert sess.run(v) == pytest.approx(4.0)
    names = sorted(f.signature.name for f in tf.get_default_graph().as_graph_def()
                   .library.function)
    assert len(names) == 3 and all(n.startswith("__inference_") for n in names)


def test_function_errors_name_the_inner_op():
    @tf.function
    def f(x):
        return tf.reshape(x, [5])

    y = f(tf.placeholder(tf.float32, [None]))
    with pytest.raises(errors.InvalidArgumentError, match="Reshape"):
        _run(y, {y.op.inputs[0]: np.zeros(3, np.float32)})


def test_function_gradients_match_finite_differences_with_captured_variable():
    w = tf.Variable(np.array([[0.5, -1.0], [2.0, 0.3]]))
    x = tf.placeholder(tf.float64, [2])

    @tf.function
    def f(a):
        return tf.reduce_sum(tf.tanh(tf.linalg.matvec(w, a)) ** 2)

    y = f(x)
    gx, gw = tf.gradients(y, [x, w])
    xv = np.array([0.4, -0.9])
    wv = np.array([[0.5, -1.0], [2.0, 0.3]])

    def ref(xa, wa):
        return float(np.sum(np.tanh(wa @ xa) ** 2))

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_x, got_w = sess.run([gx, gw], {x: xv})
    np.testing.assert_allclose(got_x, _numeric_grad(lambda a: ref(a, wv), xv), rtol=1e-6)
    np.testing.assert_allclose(got_w, _numeric_grad(lambda m: ref(xv, m), wv), rtol=1e-6)


def test_function_second_order_gradient():
    x = tf.placeholder(tf.float64, [])
    f = tf.function(lambda a: a ** 3)
    (g,) = tf.gradients(f(x), x)
    (h,) = tf.gradients(g, x)
    assert _run([g, h], {x: 2.0}) == pytest.approx([12.0, 12.0])


# -- functional control flow -------------------------------------------------------------------


def test_if_values_both_branches_and_predicate_rules():
    x = tf.placeholder(tf.float32, [3])
    pred = tf.placeholder(tf.float32, [None])
    (out,) = fc.if_(pred, [x], lambda a: a * 2.0, lambda a: a - 1.0)
    assert out.op.type == "StatelessIf"
    xv = np.array([1.0, 2.0, 3.0], np.float32)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(out, {x: xv, pred: [0.0, 0.0]}), xv * 2)  # non-empty
        np.testing.assert_allclose(sess.run(out, {x: xv, pred: []}), xv - 1)  # empty: false
    s = tf.placeholder(tf.int32, [])
    (out2,) = fc.if_(s, [x], lambda a: a * 2.0, lambda a: a - 1.0)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(out2, {x: xv, s: 0}), xv - 1)
        np.testing.assert_allclose(sess.run(out2, {x: xv, s: -3}), xv * 2)
    with pytest.raises(TypeError, match="else_branch returns"):
        fc.if_(True, [x], lambda a: a, lambda a: tf.cast(a, tf.int32))


def test_if_and_case_share_captured_tensors():
    x = tf.placeholder(tf.float64, [])
    c1 = tf.placeholder(tf.float64, [])
    c2 = tf.placeholder(tf.float64, [])
    (out,) = fc.if_(x > 0, [x], lambda a: a * c1, lambda a: a + c2)
    (case_out,) = fc.case_(tf.cast(x, tf.int32), [x], [lambda a: a * c1, lambda a: a + c2])
    feed = {c1: 10.0, c2: 100.0}
    assert _run([out, case_out], {x: 2.0, **feed}) == pytest.approx([20.0, 102.0])
    assert _run([out, case_out], {x: -2.0, **feed}) == pytest.approx([98.0, 98.0])
    assert _run(case_out, {x: 0.0, **feed}) == pytest.approx(0.0)


def test_case_out_of_range_runs_the_last_branch_and_validates():
    i = tf.placeholder(tf.int32, [])
    (out,) = fc.case_(i, [tf.constant(5)], [lambda a: a + 1, lambda a: a * 2, lambda a: -a])
    assert [_run(out, {i: k}) for k in (0, 1, 2, 7, -1)] == [6, 10, -5, -5, -5]
    with pytest.raises(ValueError, match="must be a scalar"):
        fc.case_(tf.constant([0, 1]), [tf.constant(1)], [lambda a: a])
    with pytest.raises(ValueError, match="empty"):
        fc.case_(0, [tf.constant(1)], [])


def test_if_gradients_match_finite_differences_on_each_branch():
    x = tf.placeholder(tf.float64, [2])
    pred = tf.placeholder(tf.bool, [])
    (out,) = fc.if_(pred, [x], lambda a: tf.reduce_sum(a * a * a), lambda a: tf.reduce_sum(
        tf.sin(a)))
    (g,) = tf.gradients(out, x)
    xv = np.array([0.7, -1.3])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: xv, pred: True}), 3 * xv ** 2)
        np.testing.assert_allclose(sess.run(g, {x: xv, pred: False}), np.cos(xv))


def test_while_values_captures_and_int_loop_variables():
    limit = tf.placeholder(tf.int32, [])
    scale = tf.placeholder(tf.float64, [])
    i, total = fc.while_([tf.constant(0), tf.constant(0.0, tf.float64)],
                         lambda i, s: i < limit,
                         lambda i, s: (i + 1, s + tf.cast(i, tf.float64) * scale))
    assert i.op.type == "StatelessWhile"
    got = _run([i, total], {limit: 5, scale: 0.5})
    assert got[0] == 5 and got[1] == pytest.approx(0.5 * sum(range(5)))
    assert _run([i, total], {limit: 0, scale: 0.5}) == [0, 0.0]
    with pytest.raises(TypeError, match="body returns"):
        fc.while_([tf.constant(0)], lambda i: i < 3, lambda i: tf.cast(i, tf.float32))


def test_for_values_negative_delta_and_bad_range():
    (out,) = fc.for_(10, 0, -3, [tf.constant(0)], lambda i, s: s + i)
    assert _run(out) == 10 + 7 + 4 + 1
    (empty,) = fc.for_(3, 3, 1, [tf.constant(7)], lambda i, s: s + i)
    assert _run(empty) == 7
    (bad,) = fc.for_(0, 5, -1, [tf.constant(0)], lambda i, s: s + i)
    with pytest.raises(errors.InvalidArgumentError, match="finite range"):
        _run(bad)


def test_loop_gradients_match_finite_differences_and_second_order_raises():
    x = tf.placeholder(tf.float64, [2])
    c = tf.placeholder(tf.float64, [])
    _, y = fc.while_([tf.constant(0), x], lambda i, s: i < 3,
                     lambda i, s: (i + 1, tf.sin(s) * c + s))
    (z,) = fc.for_(4, 0, -1, [x], lambda k, s: s * s * 0.5 + tf.cast(k, tf.float64) * c)
    grads = tf.gradients(tf.reduce_sum(y) + tf.reduce_sum(z), [x, c])
    xv, cv = np.array([0.3, -0.5]), 0.7

    def ref(xa, ca):
        s = xa.copy()
        for _ in range(3):
            s = np.sin(s) * ca + s
        t = xa.copy()
        for k in range(4, 0, -1):
            t = t * t * 0.5 + k * ca
        return float(s.sum() + t.sum())

    gx, gc = _run(grads, {x: xv, c: cv})
    np.testing.assert_allclose(gx, _numeric_grad(lambda a: ref(a, cv), xv), rtol=1e-6)
    assert gc == pytest.approx(_numeric_grad(lambda a: ref(xv, float(a)), np.array(cv)),
                               rel=1e-6)
    with pytest.raises(LookupError, match="_FunctionalLoopGrad"):
        tf.gradients(grads[0], x)


def test_loop_gradient_with_zero_iterations_is_the_incoming_gradient():
    x = tf.placeholder(tf.float64, [])
    _, y = fc.while_([tf.constant(5), x], lambda i, s: i < 3, lambda i, s: (i + 1, s * s))
    (g,) = tf.gradients(y * 4.0, x)
    assert _run(g, {x: 2.0}) == pytest.approx(4.0)


def test_stateful_branch_in_while_runs_every_iteration():
    v = tf.Variable(0)
    (i,) = fc.while_([tf.constant(0)], lambda i: i < 4,
                     lambda i: tf.identity(i + 1) + 0 * tf.assign_add(v, i))
    assert i.op.type == "While"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(i) == 4
        assert sess.run(v) == 0 + 1 + 2 + 3


def test_endless_functional_loop_honours_the_step_timeout():
    (i,) = fc.while_([tf.constant(0)], lambda i: i >= 0, lambda i: i + 1)
    options = tf.RunOptions(timeout_in_ms=200)
    with tf.Session() as sess:
        with pytest.raises(errors.DeadlineExceededError, match="functional loop"):
            sess.run(i, options=options)


def test_concrete_functions_methods_and_one_trace_per_graph():
    traces = []

    class Scaler:
        def __init__(self, k):
            self.k = k

        @tf.function
        def apply(self, x):
            traces.append(self.k)
            return x * self.k

    two, three = Scaler(2.0), Scaler(3.0)
    x = tf.constant([1.0, 2.0])
    assert _run([two.apply(x), three.apply(x), two.apply(x)])[0].tolist() == [2.0, 4.0]
    assert traces == [2.0, 3.0]

    @tf.function
    def f(a):
        traces.append("f")
        return a + 1

    concrete = f.get_concrete_function(tf.TensorSpec([None], tf.int32))
    assert concrete.function_def.signature.input_arg[0].type == tf.int32.as_datatype_enum
    assert _run(concrete(tf.constant([1, 2]))).tolist() == [2, 3]
    assert f.get_concrete_function(tf.TensorSpec([None], tf.int32)) is concrete
    with tf.Graph().as_default():
        assert _run(f(tf.constant([5]))).tolist() == [6]  # traced again for the new graph
    assert traces.count("f") == 2
    with pytest.raises(TypeError, match="callable"):
        tf.function(3)


def test_gradients_through_tf1_control_flow_inside_a_function_and_effects_run_once():
    x = tf.placeholder(tf.float64, [])
    w = tf.placeholder(tf.float64, [])
    counter = tf.Variable(0.0, dtype=tf.float64)

    @tf.function
    def f(a):
        tf.assign_add(counter, 1.0)
        _, r = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * a * w),
                             [0, tf.constant(1.0, tf.float64)])
        return tf.cond(a > 0, lambda: r, lambda: -r)

    y = f(x)
    gx, gw = tf.gradients(y, [x, w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for xv, sign in ((1.5, 1.0), (-0.5, -1.0)):
            got = sess.run([y, gx, gw], {x: xv, w: 2.0})
            assert got == pytest.approx([sign * (xv * 2.0) ** 3, sign * 3 * xv ** 2 * 8.0,
                                         sign * 3 * 4.0 * xv ** 3])
        assert sess.run(counter) == 2.0  # one increment per step: the gradient does not rerun it


def test_creating_variables_inside_a_function_is_refused():
    @tf.function
    def f(x):
        return x * tf.Variable(2.0)

    with pytest.raises(ValueError, match="creates variables"):
        f(tf.constant(1.0))


def test_function_called_from_a_dataset_map():
    f = tf.function(lambda x: x * 2 + 1)
    element = tf.data.Dataset.range(4).map(f).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert [sess.run(element) for _ in range(4)] == [1, 3, 5, 7]


def test_branch_assigns_reach_the_outer_variable_only_when_taken():
    v = tf.Variable(10.0)
    pred = tf.placeholder(tf.bool, [])
    (out,) = fc.if_(pred, [tf.constant(1.0)], lambda a: tf.assign_add(v, a) * 1.0,
                    lambda a: a * 0.0)
    assert out.op.type == "If"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(out, {pred: True}) == 11.0
        assert sess.run(out, {pred: False}) == 0.0
        assert sess.run(out, {pred: True}) == 12.0
        assert sess.run(v) == 12.0
