"""Root-level protos, OpError/NoGradient/UnconnectedGradients, tf.dtypes and the small checks
of the root namespace."""

import glob
import time

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.protos import attr_value_pb2, event_pb2, meta_graph_pb2, summary_pb2

COVERED_OPS = {"Timestamp"}


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_root_protos_are_the_package_protos():
    assert tf.Summary is summary_pb2.Summary
    assert tf.HistogramProto is summary_pb2.HistogramProto
    assert tf.SummaryMetadata is summary_pb2.SummaryMetadata
    assert tf.Event is event_pb2.Event and tf.SessionLog is event_pb2.SessionLog
    assert tf.LogMessage is event_pb2.LogMessage
    assert tf.MetaGraphDef is meta_graph_pb2.MetaGraphDef
    assert tf.TensorInfo is meta_graph_pb2.TensorInfo
    assert tf.NameAttrList is attr_value_pb2.NameAttrList
    assert tf.SessionLog.START == 1 and tf.SessionLog.CHECKPOINT == 3
    server = tf.train.ServerDef(
        cluster=tf.train.ClusterDef(job=[tf.train.JobDef(name="w", tasks={0: "h:1"})]),
        job_name="w", protocol="grpc")
    parsed = tf.train.ServerDef.FromString(server.SerializeToString())
    assert parsed.cluster.job[0].tasks[0] == "h:1"


def test_manual_summary_written_by_file_writer(tmp_path):
    summary = tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=0.25),
                                tf.Summary.Value(tag="h", histo=tf.HistogramProto(num=2))])
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_summary(summary, global_step=7)
    writer.add_session_log(tf.SessionLog(status=tf.SessionLog.START), 7)
    writer.close()
    (path,) = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    values = [(e.step, v.tag, v.simple_value) for e in tf.train.summary_iterator(path)
              for v in e.summary.value]
    assert (7, "loss", 0.25) in values and (7, "h", 0.0) in values
    logs = [e.session_log.status for e in tf.train.summary_iterator(path)
            if e.HasField("session_log")]
    assert logs == [tf.SessionLog.START]


def test_dtypes_namespace():
    assert tf.dtypes.float32 is tf.float32 and tf.dtypes.bool is tf.bool
    assert tf.dtypes.as_dtype(np.int64) is tf.int64
    assert tf.dtypes.DType is tf.DType and tf.dtypes.QUANTIZED_DTYPES
    x = tf.constant([1.7, -300.0])
    out = [tf.dtypes.cast(x, tf.int32), tf.dtypes.saturate_cast(x, tf.uint8),
           tf.dtypes.complex(x, x)]
    with tf.Session() as sess:
        a, b, c = sess.run(out)
    np.testing.assert_array_equal(a, [1, -300])
    np.testing.assert_array_equal(b, [1, 0])
    np.testing.assert_allclose(c, [1.7 + 1.7j, -300 - 300j], rtol=1e-6)


def test_op_error_no_gradient_unconnected():
    assert tf.OpError is errors.OpError
    assert issubclass(tf.errors.InvalidArgumentError, tf.OpError)
    tf.NoGradient("RootExtrasTestNoGradOp")
    from tensorflux.framework.op_def import GRADIENTS

    assert "RootExtrasTestNoGradOp" in GRADIENTS
    x = tf.placeholder(tf.float32, [2])
    y = tf.constant(3.0)
    assert tf.gradients(y, x) == [None]
    (zero,) = tf.gradients(y, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(zero), [0.0, 0.0])
    assert tf.UnconnectedGradients("none") is tf.UnconnectedGradients.NONE
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients"):
        tf.gradients(y, x, unconnected_gradients="zeros")


def test_assert_rank_in():
    x = tf.placeholder(tf.float32, [None, 3])
    assert tf.assert_rank_in(x, [1, 2]).type == "NoOp"
    with pytest.raises(ValueError, match=r"must have rank in \(1, 3\)"):
        tf.assert_rank_in(x, [1, 3])
    with pytest.raises(TypeError, match="int32"):
        tf.assert_rank_in(x, [tf.constant(2, tf.int64)])
    p = tf.placeholder(tf.float32)
    check = tf.assert_rank_in(p, [0, 2], message="need 0 or 2")
    with tf.Session() as sess:
        sess.run(check, {p: np.zeros((2, 2))})
        sess.run(check, {p: 1.0})
        with pytest.raises(errors.InvalidArgumentError, match="need 0 or 2"):
            sess.run(check, {p: np.zeros(3)})


def test_assert_same_float_dtype_and_proper_iterable():
    a = tf.constant(1.0, tf.float64)
    assert tf.assert_same_float_dtype([a, None]) is tf.float64
    assert tf.assert_same_float_dtype() is tf.float32
    assert tf.assert_same_float_dtype(None, tf.float16) is tf.float16
    with pytest.raises(ValueError, match="same type"):
        tf.assert_same_float_dtype([a, tf.constant(1.0)])
    with pytest.raises(ValueError, match="floating point"):
        tf.assert_same_float_dtype([tf.constant(1)])
    tf.assert_proper_iterable([1, 2])
    tf.assert_proper_iterable(x for x in ())
    for bad in (a, np.zeros(2), "ab", b"ab", 3):
        with pytest.raises(TypeError):
            tf.assert_proper_iterable(bad)


def test_verify_tensor_all_finite():
    p = tf.placeholder(tf.float32, [2])
    out = tf.verify_tensor_all_finite(p, "bad values")
    assert out.shape.as_list() == [2] and out.op.name.startswith("VerifyFinite")
    out2 = tf.verify_tensor_all_finite(x=p, message="m2")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {p: [1.0, 2.0]}), [1.0, 2.0])
        with pytest.raises(errors.InvalidArgumentError, match="bad values : Tensor had NaN"):
            sess.run(out, {p: [np.nan, 1.0]})
        with pytest.raises(errors.InvalidArgumentError, match="m2 : Tensor had Inf"):
            sess.run(out2, {p: [np.inf, 1.0]})


def test_convert_to_tensor_or_indexed_slices():
    slices = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]), tf.constant([2, 1]))
    assert tf.convert_to_tensor_or_indexed_slices(slices) is slices
    with pytest.raises(ValueError, match="dtype"):
        tf.convert_to_tensor_or_indexed_slices(slices, dtype=tf.int32)
    t = tf.convert_to_tensor_or_indexed_slices([1, 2], dtype=tf.int64)
    assert isinstance(t, tf.Tensor) and t.dtype is tf.int64


def test_timestamp():
    ts = tf.timestamp()
    assert ts.dtype is tf.float64 and ts.shape.as_list() == [] and ts.op.type == "Timestamp"
    before = time.time()
    with tf.Session() as sess:
        first = sess.run(ts)
        second = sess.run(ts)
    assert before <= first <= second <= time.time()
    assert isinstance(first, np.float64)
    assert tf.gradients(ts * 2.0, ts)[0] is not None


def test_conv2d_backprop_v2_match_numpy():
    rng = np.random.RandomState(0)
    x, w, g = rng.randn(2, 5, 6, 3), rng.randn(3, 2, 3, 4), rng.randn(2, 3, 5, 4)
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 2), axis=(1, 2))
    expected_dw = np.einsum("nhwcij,nhwo->ijco", windows, g)
    expected_dx = np.zeros_like(x)
    for i in range(3):
        for j in range(2):
            expected_dx[:, i:i + 3, j:j + 5, :] += np.einsum("nhwo,co->nhwc", g, w[i, j])
    dw = tf.conv2d_backprop_filter_v2(x, w, g, [1, 1, 1, 1], "VALID")
    dx = tf.conv2d_backprop_input_v2(x, w, g, [1, 1, 1, 1], "VALID")
    assert dw.shape.as_list() == [3, 2, 3, 4] and dx.shape.as_list() == [2, 5, 6, 3]
    assert dw.op.name == "Conv2DBackpropFilterV2" and dx.op.name == "Conv2DBackpropInputV2"
    pad = tf.conv2d_backprop_input_v2(x, w, rng.randn(2, 6, 8, 4), [1, 1, 1, 1], "EXPLICIT",
                                      explicit_paddings=[0, 0, 1, 2, 1, 2, 0, 0])
    with tf.Session() as sess:
        got_dw, got_dx, got_pad = sess.run([dw, dx, pad])
    np.testing.assert_allclose(got_dw, expected_dw, rtol=1e-10)
    np.testing.assert_allclose(got_dx, expected_dx, rtol=1e-10)
    assert got_pad.shape == x.shape
    with pytest.raises(ValueError, match="explicit_paddings"):
        tf.conv2d_backprop_input_v2(x, w, g, [1, 1, 1, 1], "VALID", explicit_paddings=[1] * 8)
