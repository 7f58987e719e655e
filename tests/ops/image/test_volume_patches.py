"""ExtractVolumePatches (tf.extract_volume_patches) against a loop reference."""

import numpy as np
import pytest
from op_helpers import gradient_case, graph, run  # noqa: F401 - autouse fixture

import tensorflux as tf

COVERED_OPS = {"ExtractVolumePatches"}

GRADIENT_CASES = [
    ("ExtractVolumePatches", gradient_case(
        lambda tf, x: tf.extract_volume_patches(x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "SAME"),
        (1, 3, 3, 2, 2))),
]


def _reference(x, k, s, padding):
    batch, *sizes, depth = x.shape
    outs, befores = [], []
    for size, kk, ss in zip(sizes, k, s):
        if padding == "VALID":
            outs.append((size - kk) // ss + 1)
            befores.append(0)
        else:
            out = -(-size // ss)
            outs.append(out)
            befores.append(max((out - 1) * ss + kk - size, 0) // 2)
    y = np.zeros([batch, *outs, k[0] * k[1] * k[2] * depth], x.dtype)
    for op in range(outs[0]):
        for orow in range(outs[1]):
            for oc in range(outs[2]):
                taps = []
                for dp in range(k[0]):
                    for dr in range(k[1]):
                        for dc in range(k[2]):
                            idx = (op * s[0] + dp - befores[0], orow * s[1] + dr - befores[1],
                                   oc * s[2] + dc - befores[2])
                            if all(0 <= i < n for i, n in zip(idx, sizes)):
                                taps.append(x[:, idx[0], idx[1], idx[2], :])
                            else:
                                taps.append(np.zeros((batch, depth), x.dtype))
                y[:, op, orow, oc, :] = np.concatenate(taps, axis=1)
    return y


@pytest.mark.parametrize("k,s,padding", [
    ([2, 2, 2], [1, 1, 1], "VALID"), ([2, 3, 2], [2, 2, 3], "SAME"),
    ([3, 1, 2], [1, 2, 2], "VALID"), ([1, 1, 1], [2, 1, 3], "SAME"),
])
def test_values_and_shapes(k, s, padding):
    x = np.random.RandomState(0).randint(-9, 9, (2, 4, 5, 6, 3)).astype(np.int32)
    y = tf.extract_volume_patches(x, [1, *k, 1], [1, *s, 1], padding)
    got = run(y)
    want = _reference(x, k, s, padding)
    assert y.get_shape().as_list() == list(want.shape)
    np.testing.assert_array_equal(got, want)


def test_gradient_adds_back_overlapping_taps():
    x = tf.placeholder(tf.float64, [1, 3, 3, 3, 1])
    y = tf.extract_volume_patches(x, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID")
    grad = run(tf.gradients(tf.reduce_sum(y), x)[0], {x: np.ones([1, 3, 3, 3, 1])})
    # Each voxel is counted once per window that covers it: 1, 2 or ... 8 along the axes.
    count = np.array([1, 2, 1])
    want = count[:, None, None] * count[None, :, None] * count[None, None, :]
    np.testing.assert_array_equal(grad[0, ..., 0], want)


def test_errors():
    with pytest.raises(ValueError):
        tf.extract_volume_patches(np.zeros([1, 2, 2, 2]), [1, 1, 1, 1, 1], [1, 1, 1, 1, 1],
                                  "VALID")
    with pytest.raises(ValueError):
        tf.extract_volume_patches(np.zeros([1, 2, 2, 2, 1]), [2, 1, 1, 1, 1], [1, 1, 1, 1, 1],
                                  "VALID")
    with pytest.raises((ValueError, TypeError)):
        tf.extract_volume_patches(np.zeros([1, 2, 2, 2, 1]), [1, 1, 1, 1, 1], [1, 1, 1, 1, 1],
                                  "FULL")
