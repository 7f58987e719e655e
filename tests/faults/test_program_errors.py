"""A program's own mistakes are reported as TF1 reports them: a fetch from another graph names
the fetch argument (TF's wording), and an exception raised by a `Dataset.from_generator`
generator becomes the OpError TF's py_func gives it (UnknownError, or InvalidArgumentError for
a ValueError, ...), keeping the generator's message and traceback."""

import pytest

import tensorflux as tf


def test_a_fetch_from_another_graph_names_the_fetch_argument():
    with tf.Graph().as_default():
        other = tf.constant(1.0, name="in_the_other_graph")
        other_op = tf.no_op(name="op_of_the_other_graph")
    with tf.Graph().as_default():
        mine = tf.constant(2.0)
        with tf.Session() as sess:
            with pytest.raises(ValueError) as info:
                sess.run([mine, other])
            message = str(info.value)
            assert message.startswith(f"Fetch argument {other!r} cannot be interpreted as a "
                                      "Tensor. (")
            assert "in_the_other_graph:0" in message and "is not an element of this graph" \
                in message
            with pytest.raises(ValueError, match="cannot be interpreted as a Operation"):
                sess.run(other_op)
            assert sess.run(mine) == 2.0


@pytest.mark.parametrize("exception, status", [
    (RuntimeError("generator broke"), tf.errors.UnknownError),
    (ValueError("bad record 7"), tf.errors.InvalidArgumentError),
    (MemoryError("no room"), tf.errors.ResourceExhaustedError),
])
def test_a_generator_exception_keeps_its_message_with_tf_status(exception, status):
    def generator():
        yield 1
        yield 2
        raise exception

    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_generator(generator, tf.int64)
        element = dataset.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert [sess.run(element), sess.run(element)] == [1, 2]
            with pytest.raises(status) as info:
                sess.run(element)
    message = str(info.value)
    assert message.startswith(f"{type(exception).__name__}: {exception}"), message
    assert "in generator" in message  # the generator's own frame, from the traceback
    assert "IteratorGetNext" in message
