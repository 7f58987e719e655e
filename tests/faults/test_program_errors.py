"""A program's own mistakes are reported as TF1 reports them: a fetch from another graph names
the fetch argument (TF's wording), and an exception raised by a `Dataset.from_generator`
generator becomes the OpError TF's py_func gives it (UnknownError, or InvalidArgumentError for
a ValueError, ...), keeping the generator's message and traceback."""

import pytest

import tensorflux as tf
from tensorflux.runtime import step


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


def test_saving_where_no_directory_can_be_made_is_tf_value_error(tmp_path):
    plain = tmp_path / "plain_file"
    plain.write_text("")
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            target = str(plain / "run" / "model.ckpt")
            with pytest.raises(ValueError, match="Parent directory of .*run/model.ckpt doesn't "
                                                 "exist, can't save."):
                saver.save(sess, target)
            assert saver.save(sess, str(tmp_path / "ok" / "model.ckpt")).endswith("model.ckpt")
    with pytest.raises(tf.errors.FailedPreconditionError, match="plain_file/logs"):
        tf.summary.FileWriter(str(plain / "logs"))  # was a bare NotADirectoryError


@pytest.mark.parametrize("exception, status", [
    (FileNotFoundError(2, "No such file or directory", "/data/x"), tf.errors.NotFoundError),
    (PermissionError(13, "Permission denied", "/data/x"), tf.errors.PermissionDeniedError),
    (NotADirectoryError(20, "Not a directory", "/data/x"), tf.errors.FailedPreconditionError),
    (OSError(5, "Input/output error"), tf.errors.UnknownError),
])
def test_a_kernel_file_system_error_gets_tf_status_class(exception, status):
    wrapped = step.node_error(None, exception)
    assert type(wrapped) is status
    assert str(exception) in wrapped.message
