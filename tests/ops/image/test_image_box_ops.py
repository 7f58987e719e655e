"""DrawBoundingBoxes(V2) against values recorded from TensorFlow 2.21 and a loop reference, and
SampleDistortedBoundingBoxV2's constraints, seeding and fallbacks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.image import boxes as image_box_ops

COVERED_OPS = {"DrawBoundingBoxes", "DrawBoundingBoxesV2", "SampleDistortedBoundingBox",
               "SampleDistortedBoundingBoxV2"}
GRADIENT_CASES = []

BOXES = np.array([[[0.2, 0.1, 0.8, 0.7], [-0.3, 0.5, 0.5, 1.4], [0.5, 0.5, 0.4, 0.9],
                   [0.0, 0.0, 1.0, 1.0]]], np.float32)


def reference_draw(images, boxes, colors):
    out = images.copy()
    _, h, w, depth = images.shape
    for b in range(boxes.shape[0]):
        for n, box in enumerate(boxes[b]):
            r0, c0, r1, c1 = (int(v) for v in (np.float32(box) * np.float32([h - 1, w - 1,
                                                                             h - 1, w - 1])))
            if r0 > r1 or c0 > c1 or r0 >= h or r1 < 0 or c0 >= w or c1 < 0:
                continue
            color = colors[n % len(colors)][:depth]
            rows = slice(max(r0, 0), min(r1, h - 1) + 1)
            cols = slice(max(c0, 0), min(c1, w - 1) + 1)
            if r0 >= 0:
                out[b, r0, cols] = color
            if r1 < h:
                out[b, r1, cols] = color
            if c0 >= 0:
                out[b, rows, c0] = color
            if c1 < w:
                out[b, rows, c1] = color
    return out


# Recorded from TensorFlow 2.21: draw_bounding_boxes(zeros([1, 6, 7, 3]), BOXES), channel 0
# and 2 (default colors yellow, blue, red, green; later boxes win).
TF_RED = [[0, 0, 0, 0, 0, 0, 0], [0, 1, 1, 0, 1, 0, 0], [0, 0, 0, 1, 1, 1, 0],
          [0, 0, 0, 0, 1, 0, 0], [0, 1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 0, 0, 0]]
TF_BLUE = np.zeros((6, 7))
TF_BLUE[1, 3] = 1
# DrawBoundingBoxesV2(zeros([1, 5, 5, 4]), BOXES[:, :2], colors=[[.1, .2, .3, .4]]), channel 3
TF_ALPHA = [[0.4, 0.4, 0.4, 0, 0], [0.4, 0, 0.4, 0, 0], [0.4, 0, 0.4, 0.4, 0.4],
            [0.4, 0.4, 0.4, 0, 0], [0, 0, 0, 0, 0]]


def test_draw_matches_tensorflow():
    out = tf.image.draw_bounding_boxes(np.zeros((1, 6, 7, 3), np.float32), BOXES)
    assert out.op.type == "DrawBoundingBoxes" and out.shape.as_list() == [1, 6, 7, 3]
    value = run(out)
    assert value.dtype == np.float32
    np.testing.assert_array_equal(value[0, :, :, 0], TF_RED)
    np.testing.assert_array_equal(value[0, :, :, 2], TF_BLUE)
    v2 = tf.image.draw_bounding_boxes(np.zeros((1, 5, 5, 4), np.float32), BOXES[:, :2],
                                      colors=np.array([[0.1, 0.2, 0.3, 0.4]], np.float32))
    assert v2.op.type == "DrawBoundingBoxesV2"
    np.testing.assert_allclose(run(v2)[0, :, :, 3], TF_ALPHA)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([1, 3, 4]), st.integers(0, 6))
def test_draw_matches_reference(seed, depth, num):
    rng = np.random.RandomState(seed)
    images = rng.uniform(0, 1, (2, 7, 9, depth)).astype(np.float32)
    boxes = rng.uniform(-0.3, 1.3, (2, num, 4)).astype(np.float32)
    colors = rng.uniform(0, 1, (3, 4)).astype(np.float32)
    with tf.Graph().as_default():
        plain, colored = run([tf.image.draw_bounding_boxes(images, boxes),
                              tf.image.draw_bounding_boxes(images, boxes, colors=colors)])
    default = np.ones((1, 4)) if depth == 1 else image_box_ops._DEFAULT_COLORS
    np.testing.assert_array_equal(plain, reference_draw(images, boxes, default))
    np.testing.assert_array_equal(colored, reference_draw(images, boxes, colors))


def test_draw_half_and_errors():
    half = run(tf.image.draw_bounding_boxes(np.zeros((1, 6, 7, 3), np.float16), BOXES))
    assert half.dtype == np.float16
    np.testing.assert_array_equal(half[0, :, :, 0], TF_RED)
    with pytest.raises(ValueError, match="Channel depth"):
        tf.image.draw_bounding_boxes(np.zeros((1, 5, 5, 2), np.float32), BOXES)
    with pytest.raises(errors.InvalidArgumentError, match="batch"):
        run(tf.image.draw_bounding_boxes(np.zeros((2, 5, 5, 3), np.float32), BOXES))
    with pytest.raises(errors.InvalidArgumentError, match="equal or more channels"):
        run(tf.image.draw_bounding_boxes(np.zeros((1, 5, 5, 3), np.float32), BOXES,
                                         colors=np.zeros((1, 2), np.float32)))


# -- SampleDistortedBoundingBoxV2 -----------------------------------------------------------------

def test_sample_satisfies_constraints():
    height, width = 120, 90
    box = np.array([[[0.1, 0.2, 0.5, 0.6]]], np.float32)
    begin, size, bboxes = tf.image.sample_distorted_bounding_box(
        [height, width, 3], box, seed=7, min_object_covered=0.4,
        aspect_ratio_range=[0.5, 2.0], area_range=[0.1, 0.9])
    assert begin.shape.as_list() == [3] and bboxes.shape.as_list() == [1, 1, 4]
    assert begin.dtype == tf.int32
    pixels = (box[0, 0] * [height, width, height, width]).astype(int)
    seen = set()
    with tf.Session() as sess:
        for _ in range(30):
            b, s, bb = sess.run([begin, size, bboxes])
            y, x, h, w = b[0], b[1], s[0], s[1]
            assert b[2] == 0 and s[2] == -1
            assert 0 <= y and y + h <= height and 0 <= x and x + w <= width
            np.testing.assert_allclose(bb[0, 0], [y / height, x / width, (y + h) / height,
                                                  (x + w) / width], rtol=1e-6)
            if (y, x, h, w) == (0, 0, height, width):
                continue  # fallback: no candidate accepted
            assert 0.1 * height * width <= h * w <= 0.9 * height * width
            assert 0.5 - 0.05 <= w / h <= 2.0 + 0.05
            inter = (max(min(y + h, pixels[2]) - max(y, pixels[0]), 0)
                     * max(min(x + w, pixels[3]) - max(x, pixels[1]), 0))
            assert inter >= 0.4 * (pixels[2] - pixels[0]) * (pixels[3] - pixels[1])
            seen.add((y, x, h, w))
    assert len(seen) > 10  # the node's generator advances step by step


def test_sample_is_seeded():
    def draw():
        with tf.Graph().as_default():
            begin, size, _ = tf.image.sample_distorted_bounding_box(
                tf.constant([50, 60, 3], tf.int64), np.zeros((1, 0, 4), np.float32), seed=3,
                use_image_if_no_bounding_boxes=True)
            with tf.Session() as sess:
                return [tuple(sess.run(begin)) + tuple(sess.run(size)) for _ in range(5)]

    first = draw()
    assert first == draw()
    assert len(set(first)) > 1


def test_sample_fallback_and_errors():
    # an impossible coverage requirement returns the whole image
    begin, size, bboxes = run(tf.image.sample_distorted_bounding_box(
        [40, 30, 3], [[[0.0, 0.0, 1.0, 1.0]]], seed=1, min_object_covered=1.0,
        area_range=[0.05, 0.5], max_attempts=5))
    np.testing.assert_array_equal(begin, [0, 0, 0])
    np.testing.assert_array_equal(size, [40, 30, -1])
    np.testing.assert_allclose(bboxes, [[[0, 0, 1, 1]]])
    with pytest.raises(errors.InvalidArgumentError, match="No bounding boxes"):
        run(tf.image.sample_distorted_bounding_box([40, 30, 3], np.zeros((1, 0, 4), np.float32)))
    with pytest.raises(errors.InvalidArgumentError, match=r"\[0.0, 1.0\]"):
        run(tf.image.sample_distorted_bounding_box([40, 30, 3], [[[0.0, 0.0, 1.5, 1.0]]]))
    with pytest.raises(ValueError, match="area_range"):
        tf.image.sample_distorted_bounding_box([40, 30, 3], [[[0.0, 0.0, 1.0, 1.0]]],
                                               area_range=[0.0, 2.0])


def test_sample_v1_op_takes_coverage_as_attr():
    out = image_box_ops.SampleDistortedBoundingBox(
        tf.constant([60, 50, 3], tf.int64), [[[0.2, 0.2, 0.4, 0.4]]], seed=1, seed2=2,
        min_object_covered=1.0, area_range=[0.3, 1.0])
    assert [t.shape.as_list() for t in out] == [[3], [3], [1, 1, 4]]
    with tf.Session() as sess:
        for _ in range(10):
            begin, size, _ = sess.run(out)
            assert begin.dtype == np.int64
            y, x, h, w = begin[0], begin[1], size[0], size[1]
            # full coverage of the box rows 12..24, cols 10..20 (or the whole-image fallback)
            assert y <= 12 and y + h >= 24 and x <= 10 and x + w >= 20
            assert h * w >= 0.3 * 60 * 50
