"""Non-max suppression ops (V1-V5, WithOverlaps) against a plain-Python greedy reference and
values recorded from TensorFlow 2.21 (ties, threshold equality, corner order, soft-NMS)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.image import nms

COVERED_OPS = {"NonMaxSuppression", "NonMaxSuppressionV2", "NonMaxSuppressionV3",
               "NonMaxSuppressionV4", "NonMaxSuppressionV5", "NonMaxSuppressionWithOverlaps",
               "CombinedNonMaxSuppression"}
GRADIENT_CASES = []

BOXES = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
                  [0, 10.1, 1, 11.1], [0, 100, 1, 101]], np.float32)
SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], np.float32)


def _iou(a, b):
    a = np.concatenate([np.minimum(a[:2], a[2:]), np.maximum(a[:2], a[2:])])
    b = np.concatenate([np.minimum(b[:2], b[2:]), np.maximum(b[:2], b[2:])])
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    if area_a <= 0 or area_b <= 0:
        return 0.0
    h = max(min(a[2], b[2]) - max(a[0], b[0]), 0)
    w = max(min(a[3], b[3]) - max(a[1], b[1]), 0)
    return h * w / (area_a + area_b - h * w)


def reference_nms(boxes, scores, max_out, iou_threshold, score_threshold=-np.inf):
    order = sorted((i for i in range(len(scores)) if scores[i] > score_threshold),
                   key=lambda i: (-scores[i], i))
    selected = []
    for i in order:
        if len(selected) == max_out:
            break
        if all(_iou(boxes[i], boxes[j]) <= iou_threshold for j in selected):
            selected.append(i)
    return np.array(selected, np.int32)


# -- the op table: (op type, build, expected) -----------------------------------------------------

# Expected values recorded from TensorFlow 2.21 (tf.image.* / tf.raw_ops.*).
TABLE = [
    ("NonMaxSuppression", lambda: nms.NonMaxSuppression(BOXES, SCORES, 3, iou_threshold=0.5),
     [3, 0, 5]),
    ("NonMaxSuppressionV2", lambda: nms.NonMaxSuppressionV2(BOXES, SCORES, 10, 0.5),
     [3, 0, 5]),
    ("NonMaxSuppressionV3", lambda: tf.image.non_max_suppression(BOXES, SCORES, 3, 0.5),
     [3, 0, 5]),
    ("NonMaxSuppressionV3",
     lambda: tf.image.non_max_suppression(BOXES, SCORES, 10, 0.5, score_threshold=0.4), [3, 0]),
    # a score equal to the threshold is not a candidate
    ("NonMaxSuppressionV3",
     lambda: tf.image.non_max_suppression(BOXES, SCORES, 10, 0.5, score_threshold=0.5), [3, 0]),
    # ties: lower index first
    ("NonMaxSuppressionV3", lambda: tf.image.non_max_suppression(
        np.array([[0, 0, 1, 1], [0, 2, 1, 3], [0, 4, 1, 5], [0, 0, 1, 1]], np.float32),
        np.array([0.5, 0.5, 0.7, 0.5], np.float32), 10, 0.5), [2, 0, 1]),
    # IoU exactly at the threshold does not suppress
    ("NonMaxSuppressionV3", lambda: tf.image.non_max_suppression(
        np.array([[0, 0, 1, 2], [0, 0, 1, 1]], np.float32), np.array([0.9, 0.8], np.float32),
        10, 0.5), [0, 1]),
    # corners in either order
    ("NonMaxSuppressionV3", lambda: tf.image.non_max_suppression(
        np.array([[1, 1, 0, 0], [0, 0.1, 1, 1.1]], np.float32), np.array([0.9, 0.8], np.float32),
        10, 0.5), [0]),
    # NaN scores are never candidates
    ("NonMaxSuppressionV3", lambda: tf.image.non_max_suppression(
        BOXES, np.array([np.nan, 0.2, 0.1, 0.3, 0.9, 0.1], np.float32), 10, 0.5), [4, 1, 5]),
    ("NonMaxSuppressionV4", lambda: tf.image.non_max_suppression_padded(
        BOXES, SCORES, 5, 0.5, 0.4, pad_to_max_output_size=True), ([3, 0, 0, 0, 0], 2)),
    ("NonMaxSuppressionV4", lambda: tf.image.non_max_suppression_padded(
        BOXES, SCORES, 5, 0.5, 0.4), ([3, 0], 2)),
    ("NonMaxSuppressionV5", lambda: tf.image.non_max_suppression_with_scores(
        BOXES, SCORES, 10, 0.5, 0.0), ([3, 0, 5], [0.95, 0.9, 0.3])),
    ("NonMaxSuppressionV5", lambda: tf.image.non_max_suppression_with_scores(
        BOXES, SCORES, 10, 0.5, 0.0, soft_nms_sigma=0.5),
     ([3, 0, 1, 5, 4, 2], [0.95, 0.9, 0.38400355, 0.3, 0.2560026, 0.19697244])),
    ("NonMaxSuppressionWithOverlaps", lambda: tf.image.non_max_suppression_overlaps(
        np.array([[1, 0.7, 0.2], [0.7, 1, 0.0], [0.2, 0.0, 1]], np.float32),
        np.array([0.8, 0.9, 0.1], np.float32), 3, 0.5, 0.0), [1, 2]),
]


@pytest.mark.parametrize("op_type,build,expected", TABLE,
                         ids=[f"{row[0]}-{i}" for i, row in enumerate(TABLE)])
def test_table(op_type, build, expected):
    out = build()
    tensors = list(out) if isinstance(out, tuple) else [out]
    assert tensors[0].op.type == op_type
    values = run(tensors)
    expected = list(expected) if isinstance(expected, tuple) else [expected]
    for tensor, value, want in zip(tensors, values, expected):
        assert tensor.shape.is_compatible_with(np.shape(value))
        want = np.asarray(want)
        if want.dtype.kind == "f":
            assert value.dtype == np.float32
            np.testing.assert_allclose(value, want, rtol=1e-6)
        else:
            assert value.dtype == np.int32
            np.testing.assert_array_equal(value, want)


def test_static_shapes():
    boxes = tf.placeholder(tf.float32, [None, 4])
    scores = tf.placeholder(tf.float32, [None])
    assert tf.image.non_max_suppression(boxes, scores, 7).shape.as_list() == [None]
    padded, valid = tf.image.non_max_suppression_padded(boxes, scores, 7,
                                                        pad_to_max_output_size=True)
    assert padded.shape.as_list() == [7] and valid.shape.as_list() == []
    with pytest.raises(ValueError, match="4 coordinates"):
        tf.image.non_max_suppression(tf.placeholder(tf.float32, [None, 3]), scores, 7)
    with pytest.raises(ValueError, match="number of boxes"):
        tf.image.non_max_suppression(tf.zeros([3, 4]), tf.zeros([2]), 7)


def test_float16_and_feeds():
    boxes = tf.placeholder(tf.float16, [None, 4])
    scores = tf.placeholder(tf.float16, [None])
    out = tf.image.non_max_suppression_with_scores(boxes, scores, 4, 0.5)
    assert out[1].dtype == tf.float16
    idx, kept = run(out, {boxes: BOXES.astype(np.float16), scores: SCORES.astype(np.float16)})
    np.testing.assert_array_equal(idx, [3, 0, 5])
    assert kept.dtype == np.float16


def test_errors():
    with pytest.raises(errors.InvalidArgumentError, match="iou_threshold must be in"):
        run(tf.image.non_max_suppression(BOXES, SCORES, 3, 1.5))
    with pytest.raises(errors.InvalidArgumentError, match="max_output_size must be non-neg"):
        run(tf.image.non_max_suppression(BOXES, SCORES, -1))
    with pytest.raises(errors.InvalidArgumentError, match="soft_nms_sigma"):
        run(tf.image.non_max_suppression_with_scores(BOXES, SCORES, 3, soft_nms_sigma=-1.0))
    boxes = tf.placeholder_with_default(BOXES, [None, 4])
    with pytest.raises(errors.InvalidArgumentError, match="scores has incompatible shape"):
        run(tf.image.non_max_suppression(boxes, tf.placeholder_with_default(SCORES[:2], [None]),
                                         3))
    with pytest.raises(errors.InvalidArgumentError, match="overlaps must be square"):
        run(tf.image.non_max_suppression_overlaps(
            tf.placeholder_with_default(np.zeros((2, 3), np.float32), [None, None]),
            np.zeros(2, np.float32), 1))


def test_zero_boxes_and_zero_output():
    empty = np.zeros((0, 4), np.float32)
    assert run(tf.image.non_max_suppression(empty, np.zeros(0, np.float32), 3)).shape == (0,)
    assert run(tf.image.non_max_suppression(BOXES, SCORES, 0)).shape == (0,)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 25), st.integers(0, 8), st.floats(0, 1), st.floats(-0.5, 0.9),
       st.integers(0, 10_000))
def test_matches_reference(n, max_out, iou_threshold, score_threshold, seed):
    rng = np.random.RandomState(seed)
    corner = rng.uniform(0, 4, (n, 2))
    boxes = np.concatenate([corner, corner + rng.uniform(0, 2, (n, 2))], 1).astype(np.float32)
    # swap some corners and repeat some scores to exercise order and ties
    flip = rng.rand(n) < 0.3
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    scores = rng.choice([0.1, 0.5, 0.7, 0.9], n).astype(np.float32) if seed % 2 else (
        rng.uniform(0, 1, n).astype(np.float32))
    with tf.Graph().as_default():
        got = run(tf.image.non_max_suppression(boxes, scores, max_out, iou_threshold,
                                               score_threshold))
    want = reference_nms(boxes.astype(np.float64), scores, max_out, np.float32(iou_threshold),
                         np.float32(score_threshold))
    np.testing.assert_array_equal(got, want)


def test_soft_nms_reference():
    rng = np.random.RandomState(2)
    corner = rng.uniform(0, 3, (12, 2))
    boxes = np.concatenate([corner, corner + 1.5], 1).astype(np.float32)
    scores = rng.uniform(0.2, 1, 12).astype(np.float32)
    sigma, floor = 0.3, 0.25
    idx, kept = run(tf.image.non_max_suppression_with_scores(boxes, scores, 20, 0.5, floor,
                                                             soft_nms_sigma=sigma))
    # reference: repeatedly take the best current score, decay the others
    current, alive, want_idx, want_scores = scores.astype(np.float64), set(range(12)), [], []
    while alive:
        best = min(alive, key=lambda i: (-current[i], i))
        want_idx.append(best)
        want_scores.append(current[best])
        alive.discard(best)
        for j in list(alive):
            current[j] *= np.exp(-0.5 / sigma * _iou(boxes[best], boxes[j]) ** 2)
            if current[j] <= floor:
                alive.discard(j)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_allclose(kept, want_scores, rtol=1e-5)


def test_overlaps_uses_candidate_rows():
    # asymmetric overlaps: overlaps[candidate, selected] decides
    overlaps = np.array([[1.0, 0.9], [0.1, 1.0]], np.float32)
    got = run(tf.image.non_max_suppression_overlaps(overlaps, np.array([0.5, 0.9], np.float32),
                                                    2, 0.5))
    np.testing.assert_array_equal(got, [1])


# -- CombinedNonMaxSuppression ----------------------------------------------------------------

SHARED = np.concatenate([BOXES, [[0, 0, 1, 2], [0, 0, 1, 1]]])[None, :, None] * np.float32(0.1)
CLASS_SCORES = np.array([[0.9, 0.1], [0.75, 0.8], [0.6, 0.3], [0.95, 0.2], [0.5, 0.5],
                         [0.3, 0.9], [0.2, 0.4], [0.1, 0.35]], np.float32)[None]


def test_combined_matches_tensorflow():
    # Recorded from TensorFlow 2.21 (batch 2: the second image shifted, box scores reversed).
    boxes = np.concatenate([SHARED, SHARED + 0.5])
    scores = np.concatenate([CLASS_SCORES, CLASS_SCORES[:, ::-1]])
    out = tf.image.combined_non_max_suppression(boxes, scores, 3, 5, 0.5, 0.3)
    assert out[0].op.type == "CombinedNonMaxSuppression"
    assert [t.shape.as_list() for t in out] == [[2, 5, 4], [2, 5], [2, 5], [2]]
    got_boxes, got_scores, got_classes, valid = run(out)
    np.testing.assert_allclose(got_scores, [[0.95, 0.9, 0.9, 0.8, 0.5],
                                            [0.95, 0.9, 0.9, 0.8, 0.6]])
    # equal scores keep class order
    np.testing.assert_array_equal(got_classes, [[0, 0, 1, 1, 1], [0, 0, 1, 1, 0]])
    np.testing.assert_array_equal(valid, [5, 5])
    # clip_boxes (default) clips the outputs to [0, 1]
    np.testing.assert_allclose(got_boxes[0], [[0, 1, 0.1, 1], [0, 0, 0.1, 0.1], [0, 1, 0.1, 1],
                                              [0, 0.01, 0.1, 0.11], [0, 1, 0.1, 1]], atol=1e-7)


def test_combined_per_class_boxes_and_padding():
    # Recorded from TensorFlow 2.21: q = num_classes boxes, no clipping.
    rng = np.random.RandomState(0)
    boxes = rng.uniform(0, 1, (1, 4, 2, 4)).astype(np.float32)
    scores = rng.uniform(0, 1, (1, 4, 2)).astype(np.float32)
    got = run(tf.image.combined_non_max_suppression(boxes, scores, 2, 3, 0.3, 0.1,
                                                    clip_boxes=False))
    np.testing.assert_allclose(got[0][0], [boxes[0, 3, 0], boxes[0, 3, 1], boxes[0, 1, 1]])
    np.testing.assert_allclose(got[1], [[0.94374806, 0.6818203, 0.6176355]], rtol=1e-6)
    np.testing.assert_array_equal(got[2], [[0, 1, 1]])
    # suppression uses the unclipped boxes; pad_per_class shrinks the padding
    boxes = np.array([[[[0, 1.2, 1, 2.2]], [[0, 1.5, 1, 2.5]]]], np.float32)
    out = tf.image.combined_non_max_suppression(boxes, [[[0.9], [0.8]]], 1, 4, 0.5,
                                                pad_per_class=True)
    assert out[0].shape.as_list() == [1, 1, 4]
    got = run(out)
    np.testing.assert_allclose(got[0], [[[0, 1, 1, 1]]])
    np.testing.assert_array_equal(got[3], [1])


def test_combined_shapes_and_errors():
    boxes = tf.placeholder(tf.float32, [None, None, 1, 4])
    scores = tf.placeholder(tf.float32, [None, None, 3])
    out = tf.image.combined_non_max_suppression(boxes, scores, 2, 7, pad_per_class=True)
    assert out[0].shape.as_list() == [None, 6, 4] and out[3].shape.as_list() == [None]
    with pytest.raises(ValueError, match="max_total_size must be > 0"):
        tf.image.combined_non_max_suppression(boxes, scores, 2, 0)
    with pytest.raises(ValueError, match="1 or the number of classes"):
        tf.image.combined_non_max_suppression(tf.zeros([1, 2, 2, 4]), tf.zeros([1, 2, 3]), 2, 3)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 3), st.integers(1, 4), st.integers(1, 6))
def test_combined_matches_per_class_reference(seed, classes, per_class, total):
    rng = np.random.RandomState(seed)
    corner = rng.uniform(0, 1, (2, 10, 2))
    boxes = np.concatenate([corner, corner + rng.uniform(0, 0.5, (2, 10, 2))], -1)
    boxes = boxes.astype(np.float32)[:, :, None]
    scores = rng.uniform(0, 1, (2, 10, classes)).astype(np.float32)
    with tf.Graph().as_default():
        got_boxes, got_scores, got_classes, valid = run(tf.image.combined_non_max_suppression(
            boxes, scores, per_class, total, 0.4, 0.2, clip_boxes=False))
    for b in range(2):
        picks = [(scores[b, i, c], c, i) for c in range(classes)
                 for i in reference_nms(boxes[b, :, 0], scores[b, :, c], per_class, 0.4, 0.2)]
        picks = sorted(picks, key=lambda p: -p[0])[:total]
        assert valid[b] == len(picks)
        np.testing.assert_allclose(got_scores[b, :len(picks)], [p[0] for p in picks])
        np.testing.assert_allclose(got_boxes[b, :len(picks)], [boxes[b, p[2], 0] for p in picks])
        np.testing.assert_array_equal(got_scores[b, len(picks):], 0)


def test_shape_errors_are_worded_as_tf_shape_functions():
    box, score = [[0.0, 0.0, 1.0, 1.0]], [0.9]
    cases = [([0.0, 0.0, 1.0, 1.0], score, 3, 0.5, "Shape must be rank 2 but is rank 1"),
             ([[0.0, 0.0, 1.0]], score, 3, 0.5, "Dimension must be 4 but is 3"),
             (box, [0.9, 0.75], 3, 0.5, "Dimensions must be equal, but are 1 and 2"),
             (box, [[0.9]], 3, 0.5, "Shape must be rank 1 but is rank 2"),
             (box, score, [3], 0.5, "Shape must be rank 0 but is rank 1"),
             (box, score, 3, [[0.5]], "Shape must be rank 0 but is rank 2")]
    for boxes, scores, size, iou, words in cases:
        with pytest.raises(ValueError, match=words):
            tf.image.non_max_suppression(tf.constant(boxes), tf.constant(scores), size, iou)
