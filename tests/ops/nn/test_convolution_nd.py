"""tf.nn.convolution over 1, 2 and 3 spatial dimensions (strides and dilations) against a
direct NumPy cross-correlation."""

import itertools

import numpy as np
import pytest

import tensorflux as tf


def _reference(x, w, strides, dilations, padding):
    """Channels-last N-D cross-correlation, TF's SAME/VALID padding."""
    spatial = x.shape[1:-1]
    ksize = w.shape[:-2]
    eff = [(k - 1) * d + 1 for k, d in zip(ksize, dilations)]
    if padding == "VALID":
        out = [(n - e) // s + 1 for n, e, s in zip(spatial, eff, strides)]
        before = [0] * len(spatial)
    else:
        out = [-(-n // s) for n, s in zip(spatial, strides)]
        before = [max((o - 1) * s + e - n, 0) // 2
                  for o, s, e, n in zip(out, strides, eff, spatial)]
    y = np.zeros((x.shape[0], *out, w.shape[-1]), np.float64)
    for pos in itertools.product(*[range(o) for o in out]):
        for tap in itertools.product(*[range(k) for k in ksize]):
            idx = [p * s + t * d - b for p, s, t, d, b in zip(pos, strides, tap, dilations,
                                                                 before)]
            if all(0 <= i < n for i, n in zip(idx, spatial)):
                y[(slice(None), *pos)] += x[(slice(None), *idx)] @ w[tap]
    return y


@pytest.mark.parametrize("spatial, ksize, strides, dilations", [
    ([11], [3], [1], [2]),
    ([10], [2], [2], [1]),
    ([5, 6], [3, 2], [1, 1], [2, 1]),
    ([5, 6, 7], [2, 3, 2], [1, 1, 1], [2, 1, 3]),
    ([6, 5, 4], [3, 1, 2], [2, 1, 2], [1, 1, 1]),
])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_matches_direct_correlation(spatial, ksize, strides, dilations, padding):
    rng = np.random.RandomState(len(spatial) * 10 + sum(ksize))
    x = rng.randn(2, *spatial, 3)
    w = rng.randn(*ksize, 3, 4)
    if any(s > 1 for s in strides) and any(d > 1 for d in dilations):
        pytest.skip("TF rejects strides and dilations above 1 together")
    y = tf.nn.convolution(x, w, padding, strides=strides, dilation_rate=dilations)
    with tf.Session() as sess:
        got = sess.run(y)
    np.testing.assert_allclose(got, _reference(x, w, strides, dilations, padding), rtol=1e-9,
                               atol=1e-9)


def test_channels_first_1d_and_bad_ranks():
    rng = np.random.RandomState(1)
    x = rng.randn(2, 3, 9)  # NCW
    w = rng.randn(3, 3, 2)
    y = tf.nn.convolution(x, w, "VALID", dilation_rate=[2], data_format="NCW")
    with tf.Session() as sess:
        got = sess.run(y)
    expect = _reference(x.transpose(0, 2, 1), w, [1], [2], "VALID").transpose(0, 2, 1)
    np.testing.assert_allclose(got, expect, rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="must be one of 1, 2 or 3"):
        tf.nn.convolution(np.zeros([2, 3]), np.zeros([3, 3]), "VALID")
    with pytest.raises(ValueError, match="dilation_rate must hold 3"):
        tf.nn.convolution(np.zeros([1, 4, 4, 4, 1]), np.zeros([2, 2, 2, 1, 1]), "VALID",
                          dilation_rate=[2, 2])
