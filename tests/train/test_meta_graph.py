"""Meta graphs: export, import into a fresh graph, and keep training."""

import os

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.protos import meta_graph_pb2


def _build():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(tf.zeros([2, 1]), name="w")
    b = tf.Variable(0.0, name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), name="loss")
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.2).minimize(loss, global_step=step,
                                                            name="train")
    tf.add_to_collection("train_op", train)
    tf.add_to_collection("numbers", 3)
    tf.add_to_collection("numbers", 4)
    return x, y, loss, train


DATA_X = np.random.RandomState(0).rand(16, 2).astype(np.float32)
DATA_Y = DATA_X @ np.array([[1.0], [-2.0]], np.float32) + 0.5


def test_export_import_and_continue_training(tmp_path):
    prefix = os.path.join(str(tmp_path), "model.ckpt")
    with tf.Graph().as_default():
        x, y, loss, train = _build()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(20):
                sess.run(train, {x: DATA_X, y: DATA_Y})
            loss_before = sess.run(loss, {x: DATA_X, y: DATA_Y})
            path = saver.save(sess, prefix, global_step=20)
    assert os.path.exists(path + ".meta")
    with tf.Graph().as_default() as graph:
        restorer = tf.train.import_meta_graph(path + ".meta")
        assert [v.op.name for v in tf.trainable_variables()] == ["w", "b"]
        assert {v.op.name for v in tf.global_variables()} >= {"w", "b", "global_step"}
        assert tf.get_collection("numbers") == [3, 4]
        train = tf.get_collection("train_op")[0]
        x = graph.get_tensor_by_name("x:0")
        y = graph.get_tensor_by_name("y:0")
        loss = graph.get_tensor_by_name("loss:0")
        with tf.Session() as sess:
            restorer.restore(sess, path)
            assert np.isclose(sess.run(loss, {x: DATA_X, y: DATA_Y}), loss_before)
            for _ in range(20):
                sess.run(train, {x: DATA_X, y: DATA_Y})
            assert sess.run(loss, {x: DATA_X, y: DATA_Y}) < loss_before
            assert sess.run(tf.train.get_global_step()) == 40


def test_text_format_and_scoped_import(tmp_path):
    filename = os.path.join(str(tmp_path), "graph.meta.txt")
    with tf.Graph().as_default():
        _build()
        meta = tf.train.export_meta_graph(filename=filename, as_text=True)
        assert isinstance(meta, meta_graph_pb2.MetaGraphDef)
        assert "MatMul" in {op.name for op in meta.meta_info_def.stripped_op_list.op}
        assert meta.collection_def["trainable_variables"].bytes_list.value
    with tf.Graph().as_default() as graph:
        tf.train.import_meta_graph(filename, import_scope="copy")
        assert graph.get_tensor_by_name("copy/loss:0") is not None
        assert [v.op.name for v in tf.trainable_variables()] == ["copy/w", "copy/b"]


def test_missing_file_is_an_error(tmp_path):
    with tf.Graph().as_default():
        with pytest.raises(OSError):
            tf.train.import_meta_graph(os.path.join(str(tmp_path), "nope.meta"))


def test_variable_in_a_user_collection_comes_back_as_the_variable():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        tf.add_to_collection("my_vars", v)
        meta = tf.train.export_meta_graph()
    assert list(meta.collection_def["my_vars"].node_list.value) == ["v:0"]
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        (var,) = tf.get_collection("my_vars")
        assert var is tf.global_variables()[0]
        with tf.Session() as sess:
            sess.run(var.initializer)
            sess.run(var.assign_add([1.0, 1.0]))
            np.testing.assert_allclose(sess.run(var), [2.0, 3.0])


def test_queue_runners_round_trip_and_feed_a_reimported_pipeline():
    with tf.Graph().as_default():
        with tf.name_scope("input"):
            queue = tf.FIFOQueue(4, tf.int32, shapes=[[]], name="numbers")
            counter = tf.Variable(0, name="counter")
            enqueue = queue.enqueue(tf.assign_add(counter, 1))
            qr = tf.train.QueueRunner(queue, [enqueue])
            tf.train.add_queue_runner(qr)
            tf.add_to_collection("dequeue", queue.dequeue(name="next"))
        meta = tf.train.export_meta_graph()
    (data,) = meta.collection_def[tf.GraphKeys.QUEUE_RUNNERS].bytes_list.value
    proto = qr.to_proto()
    assert data == proto.SerializeToString()
    assert proto.queue_name == "input/numbers"
    assert list(proto.enqueue_op_name) == [enqueue.name]
    assert list(proto.queue_closed_exception_types) == [tf.errors.OUT_OF_RANGE]
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta, import_scope="again")
        (runner,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert runner.name == "again/input/numbers"
        assert [op.name for op in runner.enqueue_ops] == ["again/" + enqueue.name]
        assert runner.queue_closed_exception_types == (tf.errors.OutOfRangeError,)
        (dequeue,) = tf.get_collection("dequeue")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            values = [sess.run(dequeue) for _ in range(5)]
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
    assert values == [1, 2, 3, 4, 5]


def test_queue_runner_def_and_queue_are_exclusive():
    with tf.Graph().as_default():
        queue = tf.FIFOQueue(2, tf.float32)
        qr = tf.train.QueueRunner(queue, [queue.enqueue(1.0)])
        with pytest.raises(ValueError, match="mutually exclusive"):
            tf.train.QueueRunner(queue, queue_runner_def=qr.to_proto())
