"""Tensors crossing tasks over real gRPC (servers of one process forced onto RPC, on
127.0.0.1): large tensors arrive intact, strings and every dtype cross, dead tensors
propagate, fetches split over tasks come back in order, and the lossy bfloat16 option applies
across tasks. The byte-frame codec is checked on its own too."""


import numpy as np
import pytest
from cluster_helpers import free_port
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.distributed.rpc import tensor_codec
from tensorflux.framework import errors
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.protos import tensor_pb2, worker_pb2

PS = "/job:ps/task:0"
WORKER = "/job:worker/task:0"

def rpc_config(bfloat16=False):
    config = tf.ConfigProto(operation_timeout_in_ms=5000)
    config.rpc_options.use_rpc_for_inprocess_master = True
    config.graph_options.enable_bfloat16_sendrecv = bfloat16
    return config


@pytest.fixture(scope="module")
def cluster():
    spec = tf.train.ClusterSpec({"ps": [f"localhost:{free_port()}"],
                                 "worker": [f"localhost:{free_port()}"]})
    servers = [tf.train.Server(spec, job, 0, config=rpc_config()) for job in ("ps", "worker")]
    yield servers[1].target
    for server in servers:
        server.stop()


def session(target, bfloat16=False):
    return tf.Session(target, config=rpc_config(bfloat16))


def test_large_tensors_cross_tasks_intact(cluster):
    value = np.random.RandomState(0).standard_normal(30 * 2**20 // 4).astype(np.float32)
    value[-1] = 7.0  # the last chunk is not a full one: 30 MiB + 0 bytes, then check the end
    with tf.Graph().as_default():
        with tf.device(WORKER):
            fed = tf.placeholder(tf.float32, [None])
        with tf.device(PS):
            v = tf.Variable(fed, validate_shape=False, name="big")  # worker -> PS
            doubled = v * 2.0
        with tf.device(WORKER):
            back = tf.identity(doubled)  # PS -> worker over RecvTensor
        with session(cluster) as sess:
            sess.run(v.initializer, {fed: value})
            np.testing.assert_array_equal(sess.run(back), value * 2.0)
            direct = sess.run(v)  # a large fetch straight from the PS
            np.testing.assert_array_equal(direct, value)
            assert direct.flags.writeable


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32, np.uint8, np.bool_,
                                   np.complex64, np.float16, np.int16])
def test_every_dtype_crosses_tasks(cluster, dtype):
    rng = np.random.RandomState(1)
    size = (tensor_codec.CHUNK_BYTES // np.dtype(dtype).itemsize) * 2 + 3  # several chunks
    if dtype == np.complex64:
        value = (rng.standard_normal(size) + 1j * rng.standard_normal(size)).astype(dtype)
    else:
        value = (rng.standard_normal(size) * 100).astype(dtype)
    shaped = value.reshape(size, 1)[::1].T  # a (1, size) view
    with tf.Graph().as_default():
        with tf.device(PS):
            const = tf.constant(shaped)
            empty = tf.zeros([0, 3], dtype=dtype)
            scalar = tf.constant(value[0])
        with tf.device(WORKER):
            outs = [tf.identity(t) for t in (const, empty, scalar)]
        with session(cluster) as sess:
            big, none, one = sess.run(outs)
    np.testing.assert_array_equal(big, shaped)
    assert big.dtype == dtype and none.shape == (0, 3) and none.dtype == dtype
    assert one == value[0] and np.asarray(one).shape == ()


def test_string_tensors_cross_tasks(cluster):
    words = np.array([b"", b"a", "\u00fcn\u00efcode".encode(), b"\x00bin\xff" * 100],
                     dtype=object)
    many = np.array([f"row {i}".encode() for i in range(20000)], dtype=object)
    with tf.Graph().as_default():
        with tf.device(PS):
            a = tf.constant(words)
            b = tf.constant(many)
        with tf.device(WORKER):
            joined = tf.strings.join([a, a], separator="|")
            many_back = tf.identity(b)
        with tf.device(PS):
            lengths = tf.strings.length(joined)  # and back to the PS
        with session(cluster) as sess:
            got, got_many, got_lengths = sess.run([joined, many_back, lengths])
    assert list(got) == [w + b"|" + w for w in words]
    assert list(got_many) == list(many)
    np.testing.assert_array_equal(got_lengths, [2 * len(w) + 1 for w in words])


def test_dead_tensors_propagate_across_tasks(cluster):
    with tf.Graph().as_default():
        with tf.device(WORKER):
            x = tf.placeholder(tf.float32, [3])
            pred = tf.placeholder(tf.bool, [])

        def taken_on_two_tasks(scale, shift):
            def branch():
                with tf.device(PS):
                    y = x * scale
                with tf.device(WORKER):
                    return y + shift
            return branch

        out = tf.cond(pred, taken_on_two_tasks(2.0, 1.0), taken_on_two_tasks(-1.0, 10.0))
        with tf.device(PS):
            after = out * 3.0  # the merged value crosses back to the PS
        data = np.array([1.0, 2.0, 3.0], np.float32)
        with session(cluster) as sess:
            for flag, expected in ((True, data * 2 + 1), (False, 10 - data)):
                got, got_after = sess.run([out, after], {x: data, pred: flag})
                np.testing.assert_allclose(got, expected)
                np.testing.assert_allclose(got_after, expected * 3)


def test_fetching_a_remote_untaken_branch_is_an_error(cluster):
    with tf.Graph().as_default():
        with tf.device(WORKER):
            pred = tf.placeholder(tf.bool, [])
            x = tf.constant(1.0)
        with tf.device(PS):
            false_side, true_side = control_flow_ops.switch(x, pred)
            untaken = tf.identity(true_side, name="untaken")
        with session(cluster) as sess:
            assert sess.run(tf.identity(false_side), {pred: False}) == 1.0
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(untaken, {pred: False})
    assert "does not have value" in str(info.value)


def test_fetches_split_over_tasks_come_back_in_order(cluster):
    with tf.Graph().as_default():
        with tf.device(PS):
            a = tf.constant([1.0, 2.0])
            c = tf.constant(3, tf.int64)
        with tf.device(WORKER):
            b = tf.constant([[4.0]])
            d = tf.constant(b"five")
        with session(cluster) as sess:
            got = sess.run([b, a, d, c, a])
    np.testing.assert_array_equal(got[0], [[4.0]])
    np.testing.assert_array_equal(got[1], [1.0, 2.0])
    assert got[2] == b"five" and got[3] == 3
    np.testing.assert_array_equal(got[4], [1.0, 2.0])


def test_fetched_values_do_not_alias_variables():
    server = tf.train.Server.create_local_server()  # the in-process path: no serialization
    try:
        with tf.Graph().as_default():
            v = tf.Variable(np.zeros(4, np.float32))
            read = tf.identity(v)
            bump = v.assign_add(np.ones(4, np.float32))
            with tf.Session(server.target) as sess:
                sess.run(v.initializer)
                before, read_before = sess.run([v, read])
                sess.run(bump)
                np.testing.assert_array_equal(before, np.zeros(4))
                np.testing.assert_array_equal(read_before, np.zeros(4))
                np.testing.assert_array_equal(sess.run(read), np.ones(4))
    finally:
        server.stop()


def test_bfloat16_sendrecv_applies_across_tasks(cluster):
    value = np.random.RandomState(2).standard_normal(200000).astype(np.float32)
    exact = np.random.RandomState(3).standard_normal(1000)
    with tf.Graph().as_default():
        with tf.device(PS):
            a = tf.constant(value)
            b = tf.constant(exact)  # float64 is never compressed
        with tf.device(WORKER):
            outs = [tf.identity(a), tf.identity(b)]
        with session(cluster, bfloat16=True) as sess:
            lossy, float64 = sess.run(outs)
        with session(cluster) as sess:
            plain = sess.run(outs[0])
    np.testing.assert_array_equal(plain, value)
    np.testing.assert_array_equal(float64, exact)
    assert lossy.dtype == np.float32
    relative = np.abs(lossy - value) / np.abs(value)
    assert relative.max() <= 2.0**-7
    assert 2.0**-10 < relative.mean() < 2.0**-7  # truncation to 8 significant bits: ~2^-8.5


# -- the codec -------------------------------------------------------------------------------


def roundtrip(value, is_dead=False):
    frames = list(tensor_codec.tensor_frames(value, is_dead, 0xABC))
    for frame in frames:  # any protobuf reader parses every frame
        worker_pb2.RecvTensorResponse.FromString(frame)
    return tensor_codec.assemble_frames(frames), frames


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=0, max_size=4),
       st.sampled_from([np.float32, np.float64, np.int8, np.int64, np.bool_, np.complex128]),
       st.booleans())
def test_frames_roundtrip(shape, dtype, transposed):
    value = (np.random.RandomState(len(shape)).standard_normal(shape) * 50).astype(dtype)
    if transposed and value.ndim > 1:
        value = value.T
    (got, dead, incarnation), _ = roundtrip(value)
    assert not dead and incarnation == 0xABC
    assert got.dtype == value.dtype and got.shape == value.shape
    np.testing.assert_array_equal(got, value)


def test_frames_chunk_large_tensors_and_catch_truncation():
    value = np.arange(tensor_codec.CHUNK_BYTES // 2 + 5, dtype=np.int32)  # 2 chunks + a bit
    (got, _, _), frames = roundtrip(value)
    np.testing.assert_array_equal(got, value)
    assert got.flags.owndata and got.flags.writeable  # the session need not copy it again
    assert len(frames) == 4  # header, 2 full chunks, the rest
    assert all(len(f) <= tensor_codec.CHUNK_BYTES + 8 for f in frames)
    with pytest.raises(errors.DataLossError):
        tensor_codec.assemble_frames(frames[:-1])
    with pytest.raises(errors.UnavailableError):
        tensor_codec.assemble_frames([])
    (dead_value, dead, _), frames = roundtrip(None, is_dead=True)
    assert dead and dead_value is None and len(frames) == 1


def test_tensor_proto_encoding_matches_make_tensor_proto():
    for value in (np.float32(2.5), np.arange(6, dtype=np.int64).reshape(2, 3),
                  np.array([b"x", b"yz"], dtype=object), np.zeros((0, 2), np.float16)):
        proto = tensor_pb2.TensorProto()
        tensor_codec.encode_tensor(value, proto)
        assert proto == tf.make_tensor_proto(value)
        got = tensor_codec.decode_tensor(proto)
        np.testing.assert_array_equal(got, value)
        assert got.dtype == np.asarray(value).dtype


def test_receive_buffers_are_reused_only_when_nobody_holds_them():
    pool = tensor_codec.ReceiveBuffers(min_bytes=0, max_bytes=1 << 20, per_key=2)
    first = pool.empty((100,), np.float32)
    second = pool.empty((100,), np.float32)
    assert first is not second  # `first` is still held
    first[:] = 1.0
    first_id = id(first)
    del first
    third = pool.empty((100,), np.float32)
    assert id(third) == first_id and third.flags.owndata  # reused, and owns its data
    view = third[:10]
    del third
    fourth = pool.empty((100,), np.float32)
    assert id(fourth) != first_id and view.base is not None  # the view holds `third`
    assert pool.empty((7, 3), np.int64).shape == (7, 3)
    big = pool.empty((1 << 18,), np.float64)  # 2 MiB: over the limit, idle arrays go
    assert big.nbytes == 2 << 20
