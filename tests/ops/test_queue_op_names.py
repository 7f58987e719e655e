"""Queue ops are named `<queue base name>_<Op>` inside the current name scope, as in TF."""

import tensorflux as tf


def test_queue_op_names_do_not_repeat_the_enclosing_scope():
    with tf.Graph().as_default():
        with tf.name_scope("Train"), tf.name_scope("TrainInput"):
            producer = tf.train.range_input_producer(5, shuffle=False)
            assert producer.name == "Train/TrainInput/input_producer"
            assert producer.dequeue().name == "Train/TrainInput/input_producer_Dequeue:0"
            queue = tf.FIFOQueue(3, tf.float32)
            assert queue.enqueue(1.0).name == "Train/TrainInput/fifo_queue_enqueue"
            assert queue.size().name == "Train/TrainInput/fifo_queue_Size:0"
            assert queue.dequeue_many(2).name == "Train/TrainInput/fifo_queue_DequeueMany:0"
            assert queue.close().name == "Train/TrainInput/fifo_queue_Close"
        with tf.name_scope("Elsewhere"):
            assert queue.dequeue().name == "Elsewhere/fifo_queue_Dequeue:0"
