"""TensorArray (TensorArrayV3 family) and stack ops: values against NumPy, TensorFlow's element
rules and errors, step-scoped storage, gradients (inside loops too)."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.data_flow import stack as stack_ops

COVERED_OPS = {"TensorArrayV3", "TensorArrayWriteV3", "TensorArrayReadV3", "TensorArrayGatherV3",
               "TensorArrayScatterV3", "TensorArrayConcatV3", "TensorArraySplitV3",
               "TensorArraySizeV3", "TensorArrayCloseV3", "TensorArrayGradV3", "StackV2",
               "StackPushV2", "StackPopV2", "StackCloseV2"}

A = np.arange(6, dtype=np.float32).reshape(3, 2)


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_write_read_stack():
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, A[0]).write(2, A[2])
    stacked = ta.stack()
    assert stacked.shape.as_list() == [3, 2]
    np.testing.assert_array_equal(_run(stacked), [A[0], [0, 0], A[2]])  # unwritten -> zeros
    read = tf.TensorArray(tf.float32, size=2).write(1, A[1]).read(1)
    assert read.shape.as_list() == [2]
    np.testing.assert_array_equal(_run(read), A[1])


def test_unstack_gather_scatter_concat_split_size():
    ta = tf.TensorArray(tf.float32, size=3).unstack(A)
    np.testing.assert_array_equal(_run(ta.gather([2, 0])), A[[2, 0]])
    scattered = tf.TensorArray(tf.float32, size=4).scatter([3, 1], A[:2])
    np.testing.assert_array_equal(_run(scattered.gather([1, 3])), A[[1, 0]])
    pieces = tf.TensorArray(tf.float32, size=2, infer_shape=False).split(
        np.arange(5, dtype=np.float32), [2, 3])
    value = _run(pieces.concat())
    np.testing.assert_array_equal(value, np.arange(5))
    concat_op = [op for op in tf.get_default_graph().get_operations()
                 if op.type == "TensorArrayConcatV3"][0]
    assert _run(concat_op.outputs[1]).tolist() == [2, 3]
    assert _run(pieces.read(1)).tolist() == [2.0, 3.0, 4.0]
    grown = tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(4, 1.0)
    assert _run(grown.size()) == 5
    np.testing.assert_array_equal(_run(grown.stack()), [0, 0, 0, 0, 1])
    assert _run(tf.TensorArray(tf.float32, size=7).size()) == 7


def test_element_rules_and_errors():
    ta = tf.TensorArray(tf.float32, size=2)
    with pytest.raises(errors.InvalidArgumentError, match="already been written"):
        _run(ta.write(0, 1.0).write(0, 2.0).read(0))
    with pytest.raises(errors.InvalidArgumentError, match="not resizeable"):
        _run(ta.write(2, 1.0).read(0))
    with pytest.raises(ValueError, match="Inconsistent shapes"):
        ta.write(0, [1.0, 2.0]).write(1, [1.0, 2.0, 3.0])
    written = tf.TensorArray(tf.float32, size=2).write(0, [1.0, 2.0])
    first = written.read(0)
    with tf.control_dependencies([first]):
        second = written.read(0)
    with pytest.raises(errors.InvalidArgumentError, match="cleared"):
        _run([first, second])
    keep = tf.TensorArray(tf.float32, size=1, clear_after_read=False).write(0, 3.0)
    assert _run([keep.read(0), keep.read(0)]) == [3.0, 3.0]
    with pytest.raises(errors.UnimplementedError, match="fully defined"):
        _run(tf.TensorArray(tf.float32, size=0).stack())
    empty = tf.TensorArray(tf.float32, size=0, element_shape=[2]).stack()
    assert _run(empty).shape == (0, 2)
    with pytest.raises(errors.InvalidArgumentError, match="not yet been written"):
        _run(tf.TensorArray(tf.float32, size=2, infer_shape=False).read(1))
    with pytest.raises(errors.InvalidArgumentError, match="sum of lengths"):
        _run(tf.TensorArray(tf.float32, size=2).split([1.0, 2.0], [1, 2]).concat())
    with pytest.raises(ValueError, match="Size must be provided"):
        tf.TensorArray(tf.float32)


def test_close_and_step_scoped_storage():
    ta = tf.TensorArray(tf.float32, size=1).write(0, 5.0)
    value = ta.read(0)
    with tf.control_dependencies([value]):
        closed = ta.close()
    with tf.Session() as sess:
        assert sess.run([value, closed])[0] == 5.0
        # Each step has its own arrays, and they are gone when the step ends.
        assert sess.run(value) == 5.0
        device = sess._backend.devices[0]
        assert not any(c.startswith("__per_step_") for c in device.resource_mgr.containers())
    with tf.control_dependencies([closed]):
        after = ta.read(0)
    with pytest.raises(errors.NotFoundError, match="does not exist"):
        _run(after)


def test_tensor_array_in_loop_with_nested_scan_of_rows():
    x = tf.placeholder(tf.float32, [None, 2])
    n = tf.shape(x)[0]
    inputs = tf.TensorArray(tf.float32, size=n).unstack(x)
    outputs = tf.TensorArray(tf.float32, size=n)

    def body(i, out, acc):
        acc = acc + inputs.read(i)
        return i + 1, out.write(i, acc), acc

    _, outputs, _ = tf.while_loop(lambda i, o, a: i < n, body, [0, outputs, tf.zeros([2])])
    values = np.random.RandomState(1).randn(5, 2).astype(np.float32)
    np.testing.assert_allclose(_run(outputs.stack(), {x: values}), np.cumsum(values, 0),
                               rtol=1e-6)


def test_stack_push_pop_order_and_errors():
    handle = stack_ops.stack(tf.float32)
    first = stack_ops.stack_push(handle, tf.constant(1.0))
    with tf.control_dependencies([first]):
        second = stack_ops.stack_push(handle, tf.constant(2.0))
    with tf.control_dependencies([second]):
        top = stack_ops.stack_pop(handle, tf.float32)
    with tf.control_dependencies([top]):
        bottom = stack_ops.stack_pop(handle, tf.float32)
    with tf.control_dependencies([bottom]):
        empty = stack_ops.stack_pop(handle, tf.float32)
        closed = stack_ops.stack_close(handle)
    assert second.shape.as_list() == [] and top.dtype == tf.float32
    assert _run([top, bottom, closed])[:2] == [2.0, 1.0]
    with pytest.raises(errors.InvalidArgumentError, match="empty"):
        _run(empty)
    bounded = stack_ops.stack(tf.int32, max_size=1)
    one = stack_ops.stack_push(bounded, tf.constant(1))
    with tf.control_dependencies([one]):
        two = stack_ops.stack_push(bounded, tf.constant(2))
    with pytest.raises(errors.InvalidArgumentError, match="max_size"):
        _run(two)


def test_gradient_array_aggregates_and_is_per_gradient_call():
    x = tf.placeholder(tf.float32, [3, 2])
    ta = tf.TensorArray(tf.float32, size=3).unstack(x)
    y = tf.reduce_sum(ta.gather([0, 0, 2]) * 2.0)
    gx = tf.gradients(y, x)[0]
    np.testing.assert_array_equal(_run(gx, {x: A}), [[4, 4], [0, 0], [2, 2]])
    again = tf.gradients(y * 3.0, x)[0]
    grad_ops = [op for op in tf.get_default_graph().get_operations()
                if op.type == "TensorArrayGradV3"]
    assert {op.get_attr("source") for op in grad_ops} == {b"gradients", b"gradients_1"}
    np.testing.assert_array_equal(_run([gx, again], {x: A})[1], [[12, 12], [0, 0], [6, 6]])


# -- gradient cases ---------------------------------------------------------------------------

def _read_case(tf):
    x = tf.placeholder(tf.float64, [3, 2])
    ta = tf.TensorArray(tf.float64, size=3).unstack(x)
    return ta.read(1) * ta.read(2), [x], [np.arange(6.0).reshape(3, 2) + 0.5]


def _write_case(tf):
    a = tf.placeholder(tf.float64, [2])
    b = tf.placeholder(tf.float64, [2])
    ta = tf.TensorArray(tf.float64, size=2).write(0, a * b).write(1, tf.sin(b))
    return ta.stack(), [a, b], [np.array([0.5, 1.5]), np.array([-0.3, 0.8])]


def _gather_case(tf):
    x = tf.placeholder(tf.float64, [4])
    ta = tf.TensorArray(tf.float64, size=4, clear_after_read=False).unstack(x)
    return ta.gather([3, 1, 3]), [x], [np.array([1.0, 2.0, 3.0, 4.0])]


def _scatter_case(tf):
    x = tf.placeholder(tf.float64, [2, 3])
    ta = tf.TensorArray(tf.float64, size=3).scatter([2, 0], x * x)
    return ta.read(0) + ta.read(2), [x], [np.arange(6.0).reshape(2, 3) - 2.0]


def _split_concat_case(tf):
    x = tf.placeholder(tf.float64, [5])
    ta = tf.TensorArray(tf.float64, size=2, infer_shape=False).split(x, [2, 3])
    return ta.concat() * tf.range(1.0, 6.0, dtype=tf.float64), [x], [np.arange(5.0)]


def _loop_case(tf):
    x = tf.placeholder(tf.float64, [4, 2])
    inputs = tf.TensorArray(tf.float64, size=4).unstack(x)
    out = tf.TensorArray(tf.float64, size=4)

    def body(i, arr, state):
        state = tf.tanh(state * inputs.read(i) + 0.5)
        return i + 1, arr.write(i, state), state

    _, out, _ = tf.while_loop(lambda i, a, s: i < 4, body,
                              [0, out, tf.ones([2], tf.float64)])
    return out.stack(), [x], [np.linspace(-1, 1, 8).reshape(4, 2)]


GRADIENT_CASES = [
    ("TensorArrayReadV3", _read_case),
    ("TensorArrayWriteV3", _write_case),
    ("TensorArrayGatherV3", _gather_case),
    ("TensorArrayScatterV3", _scatter_case),
    ("TensorArrayConcatV3", _split_concat_case),
    ("TensorArraySplitV3", _split_concat_case),
    ("TensorArrayWriteV3", _loop_case),
]


def test_tensor_array_tf_wording_names_and_input_kinds(graph):
    # Split lengths may be int32 (TF casts them); fixed-width NumPy bytes fill string arrays.
    ta = tf.TensorArray(tf.float64, size=3, infer_shape=False)
    parts = ta.split(np.array([1.0, 2.0, 3.0, 4.0]), tf.constant([1, 0, 3], tf.int32))
    strings = tf.TensorArray(tf.string, size=2).unstack(np.array([b"ab", b"c"]))
    named = tf.TensorArray(tf.float32, size=2, tensor_array_name="acc", infer_shape=False)
    twice = named.write(0, 1.0).write(0, 2.0)
    grad = named.grad("g")
    mismatch = grad.write(1, 1.0).write(1, [1.0])
    ragged = tf.TensorArray(tf.float32, size=2, infer_shape=False)
    ragged = ragged.write(0, [[1.0, 2.0]]).write(1, [[1.0], [2.0]])
    with tf.Session() as sess:
        got = sess.run([parts.read(0), parts.read(1), parts.read(2)])
        assert [g.tolist() for g in got] == [[1.0], [], [2.0, 3.0, 4.0]]
        assert sess.run(strings.stack()).tolist() == [b"ab", b"c"]
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"TensorArray acc_\d+: Could not write to TensorArray index 0"):
            sess.run(twice.flow)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"existing shape is \[\] but the new input shape is \[1\]"):
            sess.run(mismatch.flow)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"inconsistent shapes.*shape: \[2\] but index 1 has "
                                 r"\(excepting dimension 0\) shape: \[1\]"):
            sess.run(ragged.concat())
