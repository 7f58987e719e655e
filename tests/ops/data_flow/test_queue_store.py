"""Queue element storage and the enqueue fast path: strided elements are stored as they read,
and an enqueue that needs no waiter behaves as one that waits."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import dtypes, errors
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.data_flow.queue_resource import QueueResource, RandomShuffleQueueResource
from tensorflux.ops.data_flow.queue_store import DenseStore
from tensorflux.runtime.cancellation import CancellationManager


class _Ctx:
    def __init__(self):
        self.cancellation = CancellationManager()
        self.session = None


def _views(rng):
    """Strided views of every kind a preprocessing graph hands to a queue."""
    planar = rng.standard_normal((3, 8, 6)).astype(np.float32)
    yield planar.transpose(1, 2, 0)  # HWC of CHW memory (decode + transpose + cast)
    yield planar.transpose(1, 2, 0)[1:7, 5:1:-1]  # cropped and flipped
    yield planar.transpose(1, 2, 0)[::-1, :, ::2][:, :4, :]
    yield np.asfortranarray(rng.standard_normal((8, 4, 2)).astype(np.float32))[::2, :, :]


def test_push_one_stores_strided_views_exactly():
    rng = np.random.default_rng(0)
    for view in _views(rng):
        store = DenseStore([np.float32, np.int32], [view.shape, (1,)])
        labels = []
        for i in range(11):  # past a growth of the ring
            store.push_one((view + i, np.array([i], np.int32)))
            labels.append(i)
        images, got = store.take_front(11)
        for i in range(11):
            np.testing.assert_array_equal(images[i], view + i)
        assert got.reshape(-1).tolist() == labels


def test_push_one_wraps_around_the_ring():
    store = DenseStore([np.float32], [(2, 3)])
    base = np.arange(6, dtype=np.float32).reshape(3, 2).T  # strided
    for i in range(8):
        store.push_one((base + i,))
    store.take_front(5)
    for i in range(8, 13):
        store.push_one((base + i,))  # lands at the front of the buffer
    (out,) = store.take_front(8)
    np.testing.assert_array_equal(out, np.stack([base + i for i in range(5, 13)]))


def _queue(capacity=4):
    return QueueResource("q", "q", [dtypes.float32, dtypes.int32],
                         [TensorShape([2]), TensorShape([])], capacity)


def _recorder(log):
    def done(outputs=None, error=None):
        log.append(error if error is not None else outputs)
    return done


def test_enqueue_completes_a_waiting_dequeue_in_order():
    q, ctx, log = _queue(), _Ctx(), []
    q.dequeue(ctx, 2, True, False, _recorder(log))
    assert log == []
    for i in range(3):
        q.enqueue(ctx, [np.full(2, i, np.float32), np.int32(i)], False, _recorder(log))
    values, labels = log[2]
    np.testing.assert_array_equal(values, [[0, 0], [1, 1]])
    np.testing.assert_array_equal(labels, [0, 1])
    assert q.size() == 1


def test_enqueue_into_a_full_queue_waits_then_completes():
    q, ctx, log = _queue(capacity=1), _Ctx(), []
    q.enqueue(ctx, [np.zeros(2, np.float32), np.int32(0)], False, _recorder(log))
    q.enqueue(ctx, [np.ones(2, np.float32), np.int32(1)], False, _recorder(log))
    assert log == [()]  # the second enqueue waits for room
    q.dequeue(ctx, 1, False, False, _recorder(log))
    dequeued = [entry for entry in log[1:] if entry != ()]
    assert len(log) == 3 and len(dequeued) == 1 and dequeued[0][1] == 0
    assert q.size() == 1


def test_enqueue_converts_and_checks_what_is_not_exact():
    q, ctx, log = _queue(), _Ctx(), []
    q.enqueue(ctx, [np.ones(2, np.float32), np.int32(5)], False, _recorder(log))  # a scalar
    with pytest.raises(errors.InvalidArgumentError, match="Type mismatch"):
        q.enqueue(ctx, [np.zeros(2, np.float64), np.int32(0)], False, _recorder(log))
    with pytest.raises(errors.InvalidArgumentError, match="Shape mismatch"):
        q.enqueue(ctx, [np.zeros(3, np.float32), np.int32(0)], False, _recorder(log))
    q.close(cancel_pending_enqueues=False)
    q.enqueue(ctx, [np.zeros(2, np.float32), np.int32(0)], False, _recorder(log))
    assert isinstance(log[-1], errors.CancelledError)
    assert q.size() == 1


def test_shuffle_queue_keeps_min_after_dequeue_with_direct_stores():
    q = RandomShuffleQueueResource("s", "s", [dtypes.int32], [TensorShape([])], 10, 4, 1, 2)
    ctx, log = _Ctx(), []
    for i in range(10):
        q.enqueue(ctx, [np.int32(i)], False, _recorder(log))
    q.dequeue(ctx, 6, True, False, _recorder(log))
    taken = sorted(log[-1].tolist())
    assert len(taken) == 6 and q.size() == 4
    q.dequeue(ctx, 1, False, False, _recorder(log))  # would leave 3 < 4: waits
    assert len(log) == 11
    q.enqueue(ctx, [np.int32(10)], False, _recorder(log))
    assert len(log) == 13 and q.size() == 4


def test_preprocessed_images_reach_the_batch_unchanged():
    images = np.random.default_rng(1).integers(0, 255, (5, 3, 4, 4)).astype(np.uint8)
    with tf.Graph().as_default():
        _run_pipeline(images)


def _run_pipeline(images):
    value = tf.placeholder(tf.uint8, [3, 4, 4])
    image = tf.image.flip_left_right(tf.cast(tf.transpose(value, [1, 2, 0]), tf.float32))
    queue = tf.FIFOQueue(10, [tf.float32], shapes=[[4, 4, 3]])
    enqueue = queue.enqueue([image])
    batch = queue.dequeue_many(5)
    with tf.Session(graph=image.graph) as sess:
        for img in images:
            sess.run(enqueue, {value: img})
        out = sess.run(batch)
    np.testing.assert_array_equal(
        out, images.transpose(0, 2, 3, 1)[:, :, ::-1, :].astype(np.float32))
