"""clip_by_global_norm with an infinite or NaN norm; finite norms against NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_global_norm_not_finite_gives_nan(bad):
    a = tf.constant([1.0, bad])
    b = tf.constant([[3.0]])
    (ca, cb, none), norm = tf.clip_by_global_norm([a, b, None], 1.0)
    assert none is None
    va, vb, vn = run([ca, cb, norm])
    assert np.isnan(va).all() and np.isnan(vb).all()
    assert va.shape == (2,) and vb.shape == (1, 1)
    assert not np.isfinite(vn)


def test_use_norm_inf():
    (c,), norm = tf.clip_by_global_norm([tf.constant([1.0, 2.0], tf.float64)], 1.0,
                                       use_norm=tf.constant(np.inf, tf.float64))
    assert np.isnan(run(c)).all()


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(-10, 10), min_size=1, max_size=6), st.floats(0.1, 20))
def test_global_norm_finite_matches_numpy(values, clip):
    with tf.Graph().as_default():
        v = np.array(values, np.float64)
        (c,), norm = tf.clip_by_global_norm([tf.constant(v)], clip)
        got, got_norm = run([c, norm])
    ref_norm = np.sqrt(np.sum(v * v))
    np.testing.assert_allclose(got_norm, ref_norm, rtol=1e-12)
    np.testing.assert_allclose(got, v * clip / max(ref_norm, clip), rtol=1e-12, atol=1e-300)


def test_clip_by_norm_bad_clip_shape_raises():
    t = tf.constant(np.ones((2, 3)))
    with pytest.raises(ValueError):
        tf.clip_by_norm(t, tf.constant(np.ones((4, 1, 1))))
    with pytest.raises(ValueError):
        tf.clip_by_norm(t, tf.constant(np.ones(2)))


def test_clip_by_norm_float64_python_clip_exact():
    v = np.array([3.0, 4.0])
    got = run(tf.clip_by_norm(tf.constant(v), 0.1))
    np.testing.assert_allclose(got, v * 0.1 / 5.0, rtol=1e-15)
