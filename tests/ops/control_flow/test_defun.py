"""TF 1.x Defun and the functional_ops wrappers taking it: values against NumPy, errors at
run time with TF's classes and wording."""

import numpy as np
import pytest
from op_helpers import graph  # noqa: F401

import tensorflux as tf
from tensorflux.ops.control_flow import defun


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def test_defun_call_and_library_name():
    @defun.Defun(tf.float64, tf.float64, func_name="Hypot")
    def hypot(a, b):
        return tf.sqrt(a * a + b * b)

    out = hypot(tf.constant([3.0, 5.0], tf.float64), tf.constant([4.0, 12.0], tf.float64))
    np.testing.assert_allclose(_run(out), np.hypot([3.0, 5.0], [4.0, 12.0]))
    names = [f.signature.name for f in tf.get_default_graph().as_graph_def().library.function]
    assert "Hypot" in names


def test_defun_several_outputs_is_a_tuple():
    @defun.Defun(tf.int32)
    def split(x):
        return x // 3, x % 3

    q, r = split(tf.constant([7, 11, -4]))
    a, b = _run([q, r])
    np.testing.assert_array_equal(a, np.array([7, 11, -4]) // 3)
    np.testing.assert_array_equal(b, np.array([7, 11, -4]) % 3)


def test_if_with_defuns():
    @defun.Defun(tf.float32)
    def half(x):
        return x * 0.5

    @defun.Defun(tf.float32)
    def neg_cube(x):
        return -x * x * x

    x = tf.placeholder(tf.float32)
    (out,) = defun.If(x > 1.0, [x], half, neg_cube)
    for v in (6.0, -2.0, 1.0):
        expected = v * 0.5 if v > 1.0 else -v ** 3
        assert _run(out, {x: v}) == pytest.approx(expected)


def test_while_with_defuns_computes_triangular_numbers():
    @defun.Defun(tf.float64, tf.float64)
    def cond(n, _):
        return n > 0

    @defun.Defun(tf.float64, tf.float64)
    def body(n, acc):
        return n - 1, acc + n

    n = tf.placeholder(tf.float64)
    _, total = defun.While([n, tf.constant(0.0, tf.float64)], cond, body)
    assert _run(total, {n: 13.0}) == pytest.approx(13 * 14 / 2)


@pytest.mark.parametrize("rewrite", [False, True])
def test_for_captures_a_variable(rewrite):
    w = tf.Variable(0.25, dtype=tf.float32)

    @defun.Defun(tf.int32, tf.float32)
    def body(i, acc):
        return acc + tf.cast(i, tf.float32) * w

    (out,) = defun.For(2, 11, 3, [tf.constant(1.0)], body, rewrite_with_while=rewrite)
    assert _run(out) == pytest.approx(1.0 + 0.25 * sum(range(2, 11, 3)))


@pytest.mark.parametrize("rewrite", [False, True])
def test_for_counts_down(rewrite):
    @defun.Defun(tf.int32, tf.float32)
    def body(i, acc):
        return acc * 2.0 + tf.cast(i, tf.float32)

    (out,) = defun.For(4, 0, -1, [tf.constant(0.0)], body, rewrite_with_while=rewrite)
    expected = 0.0
    for i in range(4, 0, -1):
        expected = expected * 2 + i
    assert _run(out) == pytest.approx(expected)


def test_for_errors_are_run_time_invalid_argument():
    @defun.Defun(tf.int32, tf.float32)
    def body(i, v):
        return v + 1.0

    @defun.Defun(tf.int32, tf.float32)
    def two_values(i, v):
        return v, v

    cases = [
        (defun.For([1], 4, 1, [0.0], body), "must be a scalar"),
        (defun.For(5, 9, -2, [0.0], body), "Invalid start/limit/delta"),
        (defun.For(0, 3, 1, [0.0], two_values), "For loop body returned 2 arguments. "
                                                  "Expected: 1"),
    ]
    for (out,), pattern in cases:
        with pytest.raises(tf.errors.InvalidArgumentError, match=pattern):
            _run(out)


def test_while_errors_are_run_time_invalid_argument():
    @defun.Defun(tf.float32, tf.float32)
    def cond(n, _):
        return n > 0

    @defun.Defun(tf.float32, tf.float32)
    def cond_two(n, x):
        return n > 0, x

    @defun.Defun(tf.float32, tf.float32)
    def body(n, x):
        return n - 1, x + n

    @defun.Defun(tf.float32, tf.float32)
    def body_three(n, x):
        return n - 1, x, x

    with pytest.raises(tf.errors.InvalidArgumentError, match="single scalar.*got 2 tensors"):
        _run(defun.While([3.0, 0.0], cond_two, body)[0])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="While loop body returned 3 arguments. Expected: 2"):
        _run(defun.While([3.0, 0.0], cond, body_three)[0])


def test_gradient_of_a_defun_matches_finite_differences():
    @defun.Defun(tf.float64)
    def f(x):
        return tf.sin(x) * x * x

    @defun.Defun(tf.float64)
    def df(x):
        return defun.Gradient([x, tf.constant(1.0, tf.float64)], f)[0]

    xs = np.array([-1.3, 0.2, 2.5])
    got = _run(df(tf.constant(xs)))
    eps = 1e-6
    numeric = ((np.sin(xs + eps) * (xs + eps) ** 2 - np.sin(xs - eps) * (xs - eps) ** 2)
               / (2 * eps))
    np.testing.assert_allclose(got, numeric, rtol=1e-6)


def test_partitioned_call_takes_captured_inputs_as_args():
    v = tf.get_variable("v", initializer=tf.constant(5.0), use_resource=True)

    @defun.Defun()
    def bump():
        v.assign_add(2.5)

    op = defun.partitioned_call(args=bump.captured_inputs, f=bump)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(op)
        assert sess.run(v.read_value()) == pytest.approx(7.5)


def test_remote_call_on_a_second_cpu():
    @defun.Defun(tf.int32, tf.int32)
    def mul(a, b):
        return a * b

    (out,) = defun.remote_call(args=[tf.constant(6), tf.constant(-7)], Tout=[tf.int32], f=mul,
                               target="/cpu:1")
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(config=config) as sess:
        assert sess.run(out) == -42


def test_for_rewritten_as_while_names_its_functions_after_the_body():
    @defun.Defun(tf.int32, tf.float32, func_name="Accumulate")
    def body(i, acc):
        return acc * 0.5 + tf.cast(i, tf.float32)

    (out,) = defun.For(0, 5, 1, [tf.constant(8.0)], body, rewrite_with_while=True)
    names = {f.signature.name for f in tf.get_default_graph().as_graph_def().library.function}
    assert {"Accumulate", "Accumulate_Cond", "Accumulate_Body"} <= names
    expected = 8.0
    for i in range(5):
        expected = expected * 0.5 + i
    assert _run(out) == pytest.approx(expected)


def test_two_rewritten_fors_share_the_body_functions():
    @defun.Defun(tf.int32, tf.float32, func_name="Sum")
    def body(i, acc):
        return acc + tf.cast(i, tf.float32)

    (up,) = defun.For(1, 21, 1, [0.0], body, rewrite_with_while=True)
    (down,) = defun.For(100, 0, -1, [0.0], body, rewrite_with_while=True)
    assert _run([up, down]) == [210.0, 5050.0]
