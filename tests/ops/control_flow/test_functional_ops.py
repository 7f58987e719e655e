"""tf.map_fn, tf.scan, tf.foldl, tf.foldr: values against NumPy, nested elems and results,
errors, and gradients against finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.extra import numpy as hnp

import tensorflux as tf

X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]], np.float32)


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_map_fn_values_shapes_and_dtype():
    squares = tf.map_fn(lambda t: t * t, tf.constant([1.0, 2.0, 3.0]))
    assert squares.shape.as_list() == [3]
    np.testing.assert_array_equal(_run(squares), [1.0, 4.0, 9.0])
    rows = tf.map_fn(lambda r: tf.reduce_sum(r), tf.constant(X))
    np.testing.assert_allclose(_run(rows), X.sum(1))
    as_int = tf.map_fn(lambda r: tf.cast(r[0], tf.int32), tf.constant(X), dtype=tf.int32)
    assert as_int.dtype == tf.int32 and _run(as_int).tolist() == [1, 3, 0]


def test_map_fn_nested_elems_and_outputs_and_dynamic_length():
    a = tf.placeholder(tf.float32, [None])
    b = tf.placeholder(tf.float32, [None])
    out = tf.map_fn(lambda p: {"sum": p[0] + p[1], "prod": (p[0] * p[1],)}, (a, b),
                    dtype={"sum": tf.float32, "prod": (tf.float32,)})
    value = _run(out, {a: [1.0, 2.0], b: [3.0, 4.0]})
    assert value["sum"].tolist() == [4.0, 6.0] and value["prod"][0].tolist() == [3.0, 8.0]


@settings(max_examples=10, deadline=None)
@given(hnp.arrays(np.float32, (4,), elements={"min_value": -3, "max_value": 3}))
def test_scan_and_folds_match_numpy(values):
    with tf.Graph().as_default():
        x = tf.constant(values)
        cumsum = tf.scan(lambda acc, v: acc + v, x)
        reverse = tf.scan(lambda acc, v: acc + v, x, reverse=True)
        running_max = tf.scan(lambda acc, v: tf.maximum(acc, v), x, initializer=-10.0)
        total = tf.foldl(lambda acc, v: acc + v, x)
        right = tf.foldr(lambda acc, v: acc * 0.5 + v, x, initializer=0.0)
        got = _run([cumsum, reverse, running_max, total, right])
    np.testing.assert_allclose(got[0], np.cumsum(values), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], np.cumsum(values[::-1])[::-1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[2], np.maximum.accumulate(np.maximum(values, -10.0)))
    np.testing.assert_allclose(got[3], values.sum(), rtol=1e-5, atol=1e-5)
    expected = 0.0
    for v in values[::-1]:
        expected = expected * 0.5 + v
    np.testing.assert_allclose(got[4], expected, rtol=1e-5, atol=1e-5)


def test_scan_and_fold_nested():
    fib = tf.scan(lambda ab, _: (ab[1], ab[0] + ab[1]), tf.range(6),
                  initializer=(tf.constant(0), tf.constant(1)))
    assert isinstance(fib, tuple)
    assert _run(fib[0]).tolist() == [1, 1, 2, 3, 5, 8]
    pair = tf.foldl(lambda acc, v: (acc[0] + v[0], acc[1] * v[1]),
                    (tf.constant([1, 2, 3]), tf.constant([2.0, 3.0, 4.0])))
    assert _run(pair) == (6, 24.0)
    digits = tf.foldr(lambda acc, v: acc * 10 + v, tf.constant([1, 2, 3]))
    assert _run(digits) == 321


def test_errors():
    with pytest.raises(TypeError, match="callable"):
        tf.map_fn(3, tf.constant([1.0]))
    with pytest.raises(ValueError, match="at least 1-D"):
        tf.map_fn(lambda x: x, tf.constant(1.0))
    with pytest.raises(ValueError, match="structure"):
        tf.map_fn(lambda x: (x, x), tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match="first dimension"):
        tf.map_fn(lambda p: p[0], (tf.constant([1.0, 2.0]), tf.constant([1.0])))
    with pytest.raises(ValueError, match="structure"):
        tf.scan(lambda a, x: (a, a), tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="callable"):
        tf.foldl(None, tf.constant([1.0]))


def test_gradients_of_map_fn_scan_and_folds():
    x = tf.placeholder(tf.float64, [4])
    values = np.array([0.5, -1.0, 2.0, 1.5])
    cases = [
        (tf.reduce_sum(tf.map_fn(lambda t: t * t * t, x)), 3 * values ** 2),
        (tf.reduce_sum(tf.scan(lambda a, t: a * t, x)),
         np.array([1 + values[1] + values[1] * values[2] + values[1:].prod(),
                   values[0] + values[0] * values[2] + values[0] * values[2] * values[3],
                   values[:2].prod() + values[:2].prod() * values[3], values[:3].prod()])),
        (tf.foldl(lambda a, t: a * 2.0 + t * t, x, initializer=tf.constant(0.0, tf.float64)),
         np.array([8, 4, 2, 1]) * 2 * values),
        (tf.foldr(lambda a, t: a * t, x), np.array([values.prod() / v for v in values])),
    ]
    grads = tf.gradients([c[0] for c in cases][0], x)
    assert grads[0] is not None
    with tf.Session() as sess:
        for y, expected in cases:
            np.testing.assert_allclose(sess.run(tf.gradients(y, x)[0], {x: values}), expected,
                                       rtol=1e-10)
