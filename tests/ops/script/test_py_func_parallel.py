"""py_func calls of one step run in parallel (one may wait for another); EagerPyFunc
gradients; string outputs."""

import queue
import threading
import time

import numpy as np
import pytest
from op_helpers import gradient_case, graph, run  # noqa: F401

import tensorflux as tf


@pytest.mark.parametrize("get_first", [True, False])
def test_blocking_py_funcs_meet_in_one_step(get_first):
    q = queue.Queue(1)

    def put():
        q.put(42)
        return np.int64(42)

    def get():
        return np.int64(q.get(block=True, timeout=5))

    if get_first:
        g = tf.py_func(get, [], [tf.int64])
        p = tf.py_func(put, [], [tf.int64])
    else:
        p = tf.py_func(put, [], [tf.int64])
        g = tf.py_func(get, [], [tf.int64])
    with tf.Session() as sess:
        for _ in range(10):
            assert sess.run([g, p]) == [[42], [42]]


def test_py_funcs_overlap_in_time():
    barrier = threading.Barrier(3, timeout=5)

    def meet(v):
        barrier.wait()
        return v + 1

    x = tf.constant(np.float32(1))
    ys = [tf.py_func(meet, [x + i], tf.float32) for i in range(3)]
    start = time.time()
    assert run(ys) == [2.0, 3.0, 4.0]
    assert time.time() - start < 5


def test_py_func_error_still_reported():
    def boom():
        raise ValueError("bad value 7")

    with pytest.raises(tf.errors.InvalidArgumentError, match="bad value 7"):
        run(tf.py_func(boom, [], tf.float32))


def test_eager_py_func_gradient_matches_analytic():
    x = tf.constant(3.0)
    y = tf.py_function(lambda v: v ** 2, inp=[x], Tout=tf.float32)
    (g,) = tf.gradients(y, x)
    a, b = tf.constant([1.0, 2.0]), tf.constant(2.0)
    z = tf.py_function(lambda u, w: [u * w, u * u * u], inp=[a, b],
                       Tout=[tf.float32, tf.float32])
    ga, gb = tf.gradients(z[0] + z[1], [a, b])
    vy, vg, vga, vgb = run([y, g, ga, gb])
    assert vy == 9.0 and vg == 6.0
    np.testing.assert_allclose(vga, 2.0 + 3 * np.array([1.0, 4.0]))
    assert vgb == 3.0


def test_eager_py_func_gradient_of_numpy_function_is_lookup_error():
    x = tf.constant(3.0)
    n = tf.py_function(lambda v: np.float32(v.numpy() * 2), inp=[x], Tout=tf.float32)
    assert run(n) == 6.0
    with pytest.raises(LookupError, match="EagerPyFunc"):
        tf.gradients(n, x)


@pytest.mark.parametrize("make,want", [
    (lambda: np.array(["ab", "c"]), [b"ab", b"c"]),
    (lambda: np.array([b"ab", "c"], dtype=object), [b"ab", b"c"]),
    (lambda: "h\u00e9", "h\u00e9".encode()),
    (lambda: np.array([["a", "bb"], ["c", "d"]]), [[b"a", b"bb"], [b"c", b"d"]]),
])
def test_string_outputs(make, want):
    got = run(tf.py_func(make, [], tf.string))
    np.testing.assert_array_equal(got, np.array(want, dtype=object))


def _eager_cube(tf, x):
    return tf.py_function(lambda v: v * v * v, inp=[x], Tout=tf.float64)


GRADIENT_CASES = [("EagerPyFunc", gradient_case(_eager_cube, (2, 3)))]
