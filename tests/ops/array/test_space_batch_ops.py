"""SpaceToBatchND / BatchToSpaceND and SpaceToBatch / BatchToSpace."""

import collections
import itertools

import numpy as np
import pytest
from array_checks import _fetch, check
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import gradient_case as _case
from op_helpers import graph  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.array.space_batch import BatchToSpace, SpaceToBatch

Row = collections.namedtuple("Row", "op build expected")


def _space_to_batch_ref(x, block, pads):
    """output[o * batch + n, g..., r...] = padded[n, g * b + o, ..., r...] (o row-major)."""
    m = len(block)
    padded = np.pad(x, [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - m - 1))
    batch = x.shape[0]
    grid = [s // b for s, b in zip(padded.shape[1:m + 1], block)]
    out = np.zeros([batch * int(np.prod(block))] + grid + list(x.shape[m + 1:]), x.dtype)
    for k, offsets in enumerate(itertools.product(*[range(b) for b in block])):
        index = (slice(None),) + tuple(slice(o, None, b) for o, b in zip(offsets, block))
        out[k * batch:(k + 1) * batch] = padded[index]
    return out


def _batch_to_space_ref(y, block, crops):
    m = len(block)
    batch = y.shape[0] // int(np.prod(block))
    full = np.zeros([batch] + [s * b for s, b in zip(y.shape[1:m + 1], block)]
                    + list(y.shape[m + 1:]), y.dtype)
    for k, offsets in enumerate(itertools.product(*[range(b) for b in block])):
        index = (slice(None),) + tuple(slice(o, None, b) for o, b in zip(offsets, block))
        full[index] = y[k * batch:(k + 1) * batch]
    crop = (slice(None),) + tuple(slice(lo, s - hi) for (lo, hi), s in
                                  zip(crops, full.shape[1:m + 1]))
    return full[crop]


IMG = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3)
SEQ = np.arange(2 * 5 * 3, dtype=np.int64).reshape(2, 5, 3)
IMG4 = IMG.reshape(4, 2, 6, 3)
P1 = [[0, 0], [0, 2]]

ROWS = [
    Row("SpaceToBatchND", lambda: tf.space_to_batch_nd(IMG, [2, 2], P1),
        _space_to_batch_ref(IMG, [2, 2], P1)),
    Row("SpaceToBatchND", lambda: tf.space_to_batch_nd(SEQ, np.int64([3]), [[1, 0]]),
        _space_to_batch_ref(SEQ, [3], [[1, 0]])),
    Row("SpaceToBatchND", lambda: tf.space_to_batch(IMG, P1, 2),
        _space_to_batch_ref(IMG, [2, 2], P1)),
    Row("BatchToSpaceND", lambda: tf.batch_to_space_nd(IMG, [2, 1], [[1, 2], [0, 1]]),
        _batch_to_space_ref(IMG, [2, 1], [[1, 2], [0, 1]])),
    Row("BatchToSpaceND", lambda: tf.batch_to_space(
        _space_to_batch_ref(IMG, [2, 2], P1), P1, block_size=2), IMG),
    Row("SpaceToBatch", lambda: SpaceToBatch(IMG, P1, block_size=2),
        _space_to_batch_ref(IMG, [2, 2], P1)),
    Row("BatchToSpace", lambda: BatchToSpace(IMG4, [[0, 1], [2, 0]], block_size=2),
        _batch_to_space_ref(IMG4, [2, 2], [[0, 1], [2, 0]])),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    check(row.build(), row.expected)


def test_static_shapes_and_namespaces():
    p = tf.placeholder(tf.float32, [None, 4, None, 2])
    assert tf.space_to_batch_nd(p, [2, 2], [[0, 0], [0, 0]]).shape.as_list() == [None, 2, None, 2]
    q = tf.placeholder(tf.float32, [8, 3, None, 5])
    assert tf.batch_to_space_nd(q, [2, 2], [[1, 0], [0, 0]]).shape.as_list() == [2, 5, None, 5]
    dynamic = tf.space_to_batch_nd(p, tf.placeholder(tf.int32, [2]), [[0, 0], [0, 0]])
    assert dynamic.shape.as_list() == [None, None, None, 2]  # TF: trailing dims stay known
    assert tf.space_to_batch(p, [[0, 0], [0, 0]], 2).op.type == "SpaceToBatchND"
    assert tf.nn.space_to_batch is tf.space_to_batch
    assert tf.nn.depth_to_space is tf.depth_to_space
    assert tf.nn.space_to_depth is tf.space_to_depth


def test_square_block_forms_are_rank_4_for_unknown_inputs():
    x, pads = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
    s2b = tf.space_to_batch(x, pads, block_size=2)
    b2s = tf.batch_to_space(x, pads, block_size=2)
    assert s2b.shape.ndims == 4 and b2s.shape.ndims == 4
    value = np.arange(32.0).reshape(2, 4, 2, 2)
    zero = np.zeros([2, 2], np.int32)
    batched = _fetch(s2b, {x: value, pads: zero})
    np.testing.assert_array_equal(batched, _space_to_batch_ref(value, [2, 2], zero))
    np.testing.assert_array_equal(_fetch(b2s, {x: batched, pads: zero}), value)
    with pytest.raises(ValueError):
        tf.space_to_batch(tf.placeholder(tf.float32, [None, 4]), pads, block_size=2)


def test_errors():
    with pytest.raises(ValueError, match="evenly divisible by 2 but is 5"):
        tf.space_to_batch_nd(IMG, [2, 2], [[0, 1], [0, 0]])
    with pytest.raises(ValueError, match="evenly divisible by 3 but is 2"):
        tf.batch_to_space_nd(IMG, [3, 1], [[0, 0], [0, 0]])
    with pytest.raises(ValueError, match="non-negative"):
        tf.space_to_batch_nd(IMG, [2, 2], [[0, -1], [0, 0]])
    with pytest.raises(ValueError, match="shape \\[2, 2\\]"):
        tf.space_to_batch_nd(IMG, [2, 2], [[0, 0]])
    with pytest.raises(ValueError, match="larger than spatial dimension"):
        tf.batch_to_space_nd(IMG, [1, 1], [[3, 3], [0, 0]])
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.space_to_batch(IMG, P1, block_size=2, block_shape=2)
    block = tf.placeholder_with_default(np.int32([2, 2]), [2])
    with pytest.raises(errors.InvalidArgumentError, match="not divisible"):
        _fetch(tf.space_to_batch_nd(IMG, block, [[0, 1], [0, 0]]))
    with pytest.raises(errors.InvalidArgumentError, match="block_shape must be positive"):
        _fetch(tf.batch_to_space_nd(IMG, block * 0, [[0, 0], [0, 0]]))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=2), st.data())
def test_round_trip_matches_reference(block, data):
    spatial = [data.draw(st.integers(0, 5)) for _ in block]
    pads = []
    for size, b in zip(spatial, block):
        lo = data.draw(st.integers(0, 2))
        pads.append([lo, (-(size + lo)) % b])
    x = np.random.RandomState(0).randint(0, 99, size=[2] + spatial + [2]).astype(np.float64)
    expected = _space_to_batch_ref(x, block, pads)
    with tf.Graph().as_default():
        y = tf.space_to_batch_nd(x, block, pads)
        check([y, tf.batch_to_space_nd(y, block, pads)], [expected, x])


# -- gradients -----------------------------------------------------------------------------------

GRADIENT_CASES = [
    ("SpaceToBatchND", _case(lambda tf, x: tf.space_to_batch_nd(x, [2], [[1, 1]]), [2, 2, 2])),
    ("BatchToSpaceND", _case(lambda tf, x: tf.batch_to_space_nd(x, [2, 1], [[0, 1], [0, 0]]),
                             [2, 2, 2, 1])),
    ("SpaceToBatch", _case(lambda tf, x: SpaceToBatch(x, [[0, 0], [1, 1]], block_size=2),
                           [1, 2, 2, 1])),
    ("BatchToSpace", _case(lambda tf, x: BatchToSpace(x, [[0, 1], [1, 0]], block_size=2),
                           [4, 1, 1, 2])),
]
