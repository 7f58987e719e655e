"""Checkpoint ops, tf.train.Saver and the checkpoint utilities, with real files and values."""

import os
import time

import numpy as np
import pytest
from google.protobuf import text_format

import tensorflux as tf
from tensorflux.lib.formats import bundle
from tensorflux.ops.io import checkpoint as io_ops
from tensorflux.protos import checkpoint_state_pb2

COVERED_OPS = {"SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename",
               "ShardedFilespec"}
GRADIENT_CASES = []  # checkpoint ops are not differentiable

W = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


# -- the ops ---------------------------------------------------------------------------------

def test_save_v2_and_restore_v2_ops(graph, tmp_path):
    prefix = str(tmp_path / "ops")
    save = io_ops.save_v2(prefix, ["a", "s", "i"], ["", "", ""],
                          [tf.constant(W), tf.constant([b"x", b"yz"]), tf.constant(np.int64(7))])
    assert save.type == "SaveV2" and save.outputs == []
    restored = io_ops.restore_v2(prefix, ["i", "a", "a"], ["", "", "2 3 1,1:0,2"],
                                 [tf.int64, tf.float32, tf.float32])
    assert [t.dtype for t in restored] == [tf.int64, tf.float32, tf.float32]
    assert restored[2].shape.as_list() == [1, 2] and restored[1].shape.ndims is None
    with tf.Session() as sess:
        sess.run(save)
        i, a, part = sess.run(restored)
    assert i == 7 and np.array_equal(a, W) and np.array_equal(part, W[1:2, 0:2])
    reader = bundle.BundleReader(prefix)
    assert reader.keys() == ["a", "i", "s"]
    assert reader.get_tensor("s").tolist() == [b"x", b"yz"]


def test_save_v2_assembles_slices(graph, tmp_path):
    prefix = str(tmp_path / "slices")
    save = io_ops.save_v2(prefix, ["w", "w"], ["2 3 0,1:-", "2 3 1,1:-"],
                          [tf.constant(W[:1]), tf.constant(W[1:])])
    partial = io_ops.save_v2(prefix + "_bad", ["w"], ["2 3 0,1:-"], [tf.constant(W[:1])])
    malformed = io_ops.save_v2(prefix + "_bad", ["w"], ["2 3 0,5:-"], [tf.constant(W[:1])])
    with tf.Session() as sess:
        sess.run(save)
        assert np.array_equal(bundle.BundleReader(prefix).get_tensor("w"), W)
        with pytest.raises(tf.errors.InvalidArgumentError, match="cover 3 of its 6"):
            sess.run(partial)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Malformed shape_and_slices"):
            sess.run(malformed)


def test_restore_v2_errors_name_the_tensor(graph, tmp_path):
    prefix = str(tmp_path / "e")
    bundle.write_bundle(prefix, {"w": W})
    missing = io_ops.restore_v2(prefix, ["nope"], [""], [tf.float32])[0]
    wrong_type = io_ops.restore_v2(prefix, ["w"], [""], [tf.int32])[0]
    wrong_full = io_ops.restore_v2(prefix, ["w"], ["3 2 0,1:-"], [tf.float32])[0]
    no_file = io_ops.restore_v2(str(tmp_path / "absent"), ["w"], [""], [tf.float32])[0]
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
            sess.run(missing)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="tensor_name = w; expected dtype int32 does not equal original "
                                 "dtype float32"):
            sess.run(wrong_type)
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not match the shape"):
            sess.run(wrong_full)
        with pytest.raises(tf.errors.NotFoundError, match="absent"):
            sess.run(no_file)


def test_merge_v2_checkpoints(graph, tmp_path):
    parts = [str(tmp_path / "tmp" / f"part-{i}") for i in range(2)]
    bundle.write_bundle(parts[0], {"a": W})
    bundle.write_bundle(parts[1], {"b": np.int32(3)})
    merge = io_ops.merge_v2_checkpoints(parts, str(tmp_path / "merged"))
    dup = io_ops.merge_v2_checkpoints([str(tmp_path / "merged")] * 2, str(tmp_path / "x"))
    with tf.Session() as sess:
        sess.run(merge)
        reader = bundle.BundleReader(str(tmp_path / "merged"))
        assert reader.keys() == ["a", "b"] and reader.get_tensor("b") == 3
        assert not os.path.exists(tmp_path / "tmp")  # emptied directory removed
        with pytest.raises(tf.errors.InvalidArgumentError, match="more than one shard"):
            sess.run(dup)


def test_sharded_filename_ops(graph):
    name = io_ops.sharded_filename("ckpt", 1, 3)
    spec = io_ops.sharded_filespec("ckpt", 3)
    assert name.shape.as_list() == [] and name.dtype == tf.string
    with tf.Session() as sess:
        assert sess.run([name, spec]) == [b"ckpt-00001-of-00003", b"ckpt-?????-of-00003"]


# -- Saver -----------------------------------------------------------------------------------

def _build_model():
    w = tf.get_variable("w", initializer=tf.constant(W))
    with tf.variable_scope("dense"):
        k = tf.get_variable("kernel", [3, 2])
    step = tf.train.get_or_create_global_step()
    return w, k, step


def test_saver_graph_names_and_saver_def(graph):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    names = [op.name for op in graph.get_operations() if op.name.startswith("save/")]
    assert names == ["save/filename/input", "save/filename", "save/Const",
                     "save/SaveV2/tensor_names", "save/SaveV2/shape_and_slices", "save/SaveV2",
                     "save/control_dependency", "save/RestoreV2/tensor_names",
                     "save/RestoreV2/shape_and_slices", "save/RestoreV2", "save/Assign",
                     "save/restore_all"]
    sd = saver.as_saver_def()
    assert (sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name) == (
        "save/Const:0", "save/control_dependency:0", "save/restore_all")
    assert sd.max_to_keep == 5 and sd.version == sd.V2
    assert tf.train.Saver().as_saver_def().restore_op_name == "save_1/restore_all"


def test_save_and_restore_into_a_new_graph(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        w, k, step = _build_model()
        bump = tf.group(tf.assign_add(w, tf.ones_like(w)), tf.assign_add(step, 1))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(bump)
            path = saver.save(sess, prefix, global_step=step)
            expected = sess.run([w, k])
    assert path == prefix + "-1"
    reader = tf.train.NewCheckpointReader(path)
    assert reader.get_variable_to_shape_map() == {"w": [2, 3], "dense/kernel": [3, 2],
                                                  "global_step": []}
    assert reader.get_variable_to_dtype_map()["global_step"] == tf.int64
    assert reader.has_tensor("w") and not reader.has_tensor("v")
    assert reader.debug_string() == (b"dense/kernel (DT_FLOAT) [3,2]\nglobal_step (DT_INT64) "
                                     b"[]\nw (DT_FLOAT) [2,3]\n")
    with tf.Graph().as_default():
        w2, k2, step2 = _build_model()
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
            got = sess.run([w2, k2, step2])
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    assert got[2] == 1 and np.array_equal(got[0], W + 1)


def test_dict_var_list_and_restore_under_other_names(graph, tmp_path):
    a = tf.Variable(W, name="a")
    b = tf.Variable([1, 2, 3], name="b")
    saver = tf.train.Saver({"x": a, "y": b})
    other = tf.Variable(np.zeros((2, 3), np.float32), name="other")
    reader_saver = tf.train.Saver({"x": other})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "d"))
        reader_saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(other), W)
    assert tf.train.list_variables(str(tmp_path)) == [("x", [2, 3]), ("y", [3])]
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path), "y:0"), [1, 2, 3])


def test_restore_errors(tmp_path):
    prefix = str(tmp_path / "m")
    with tf.Graph().as_default():
        tf.get_variable("w", initializer=tf.constant(W))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(sess, prefix)
    with tf.Graph().as_default():
        tf.get_variable("w", shape=[2, 3])
        tf.get_variable("not_in_checkpoint", shape=[1])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.NotFoundError,
                               match="Key not_in_checkpoint not found in checkpoint"):
                tf.train.Saver().restore(sess, path)
    with tf.Graph().as_default():
        tf.get_variable("w", shape=[3, 2])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"lhs shape= \[3,2\] rhs shape= \[2,3\] \(variable 'w'\)"):
                tf.train.Saver().restore(sess, path)
    with tf.Graph().as_default():
        tf.get_variable("w", shape=[2, 3], dtype=tf.float64)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="tensor_name = w"):
                saver.restore(sess, path)
            with pytest.raises(ValueError, match="not a valid checkpoint"):
                saver.restore(sess, prefix + "-404")
            with pytest.raises(ValueError, match="None"):
                saver.restore(sess, None)


def test_saving_an_uninitialized_variable_names_it(graph, tmp_path):
    tf.Variable(1.0, name="lonely")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value lonely"):
            saver.save(sess, str(tmp_path / "m"))


def test_corruption_is_data_loss(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(W, name="w")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "m"))
    data = bundle.data_filename(path)
    blob = bytearray(open(data, "rb").read())
    blob[5] ^= 0x40
    open(data, "wb").write(bytes(blob))
    with pytest.raises(tf.errors.DataLossError, match="Checksum mismatch for tensor 'w'"):
        tf.train.NewCheckpointReader(path).get_tensor("w")
    with tf.Graph().as_default():
        tf.Variable(np.zeros((2, 3), np.float32), name="w")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.DataLossError):
                saver.restore(sess, path)
    index = bundle.index_filename(path)
    blob = bytearray(open(index, "rb").read())
    blob[20] ^= 0x01
    open(index, "wb").write(bytes(blob))
    with pytest.raises(tf.errors.DataLossError):
        tf.train.NewCheckpointReader(path)


def test_state_file_and_max_to_keep(graph, tmp_path):
    v = tf.Variable(0, name="v")
    inc = tf.assign_add(v, 1)
    saver = tf.train.Saver(max_to_keep=2)
    base = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(v.initializer)
        paths = []
        for step in range(4):
            sess.run(inc)
            paths.append(saver.save(sess, base, global_step=step))
    assert saver.last_checkpoints == paths[2:]
    text = open(tmp_path / "checkpoint").read()
    state = text_format.Parse(text, checkpoint_state_pb2.CheckpointState())
    assert state.model_checkpoint_path == paths[3]
    assert list(state.all_model_checkpoint_paths) == paths[2:]
    assert tf.train.latest_checkpoint(str(tmp_path)) == paths[3]
    assert not tf.train.checkpoint_exists(paths[1]) and tf.train.checkpoint_exists(paths[2])
    assert sorted(os.listdir(tmp_path)) == ["checkpoint"] + sorted(
        [f"model.ckpt-{s}.{ext}" for s in (2, 3)
         for ext in ("data-00000-of-00001", "index", "meta")])
    assert tf.train.NewCheckpointReader(paths[2]).get_tensor("v") == 3


def test_relative_paths_padding_and_latest_filename(graph, tmp_path):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver(save_relative_paths=True, pad_step_number=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"), global_step=3, latest_filename="latest")
        with pytest.raises(ValueError, match="path components"):
            saver.save(sess, str(tmp_path / "m"), latest_filename="a/b")
        with pytest.raises(ValueError, match="collides"):
            saver.save(sess, str(tmp_path / "latest"), latest_filename="latest")
    assert path.endswith("m-00000003")
    assert 'model_checkpoint_path: "m-00000003"' in open(tmp_path / "latest").read()
    state = tf.train.get_checkpoint_state(str(tmp_path), "latest")
    assert state.model_checkpoint_path == path
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert tf.train.latest_checkpoint(str(tmp_path), "latest") == path


def test_keep_checkpoint_every_n_hours(graph, tmp_path):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1e-7)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        paths = []
        for step in range(3):
            time.sleep(0.01)
            paths.append(saver.save(sess, str(tmp_path / "m"), global_step=step))
    assert saver.last_checkpoints == paths[-1:]
    assert all(tf.train.checkpoint_exists(p) for p in paths)  # each was old enough to keep


def test_last_checkpoints_bookkeeping(graph, tmp_path):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(2)]
    fresh = tf.train.Saver(max_to_keep=2)
    fresh.recover_last_checkpoints(paths + [str(tmp_path / "gone")])
    assert fresh.last_checkpoints == paths
    mtimes = tf.train.get_checkpoint_mtimes(paths + [str(tmp_path / "gone")])
    assert len(mtimes) == 2 and all(abs(t - time.time()) < 60 for t in mtimes)
    fresh.set_last_checkpoints(paths[:1])
    assert fresh.last_checkpoints == paths[:1]
    fresh.set_last_checkpoints_with_time([(paths[1], 5.0)])
    assert fresh.last_checkpoints == paths[1:]


def test_sharded_save_merges_one_bundle(tmp_path):
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            a = tf.Variable([1.0, 2.0], name="a")
        with tf.device("/cpu:1"):
            b = tf.Variable([[3]], name="b")
        saver = tf.train.Saver(sharded=True)
        assert saver.as_saver_def().sharded
        assert [op.type for op in g.get_operations()].count("SaveV2") == 2
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "m"), global_step=7)
            assert sorted(os.listdir(tmp_path)) == ["checkpoint", "m-7.data-00000-of-00001",
                                                    "m-7.index", "m-7.meta"]
            sess.run([a.assign([0.0, 0.0]), b.assign([[0]])])
            saver.restore(sess, path)
            assert sess.run(a).tolist() == [1.0, 2.0] and sess.run(b).tolist() == [[3]]


def test_partitioned_slices_are_saved_whole(graph, tmp_path):
    parts = []
    for i in range(2):
        part = tf.Variable(W[i:i + 1], name=f"w/part_{i}")
        part._set_save_slice_info(tf.Variable.SaveSliceInfo("w", [2, 3], [i, 0], [1, 3]))
        parts.append(part)
    saver = tf.train.Saver(parts)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "p"))
        sess.run([p.assign(np.zeros((1, 3), np.float32)) for p in parts])
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(parts[1]), W[1:])
    np.testing.assert_array_equal(tf.train.load_variable(path, "w"), W)


def test_reshape_restore_and_saver_def_reuse(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(W, name="w")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(sess, str(tmp_path / "r"))
    with tf.Graph().as_default():
        flat = tf.Variable(np.zeros(6, np.float32), name="w")
        saver = tf.train.Saver(reshape=True)
        again = tf.train.Saver(saver_def=saver.as_saver_def())
        with tf.Session() as sess:
            again.restore(sess, path)
            np.testing.assert_array_equal(sess.run(flat), W.ravel())


def test_empty_and_deferred_savers(graph, tmp_path):
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver()
    empty = tf.train.Saver(allow_empty=True)
    deferred = tf.train.Saver(defer_build=True)
    v = tf.Variable(2.0, name="v")
    with tf.Session() as sess:
        assert empty.save(sess, str(tmp_path / "e")) is None
        with pytest.raises(RuntimeError, match="build"):
            deferred.save(sess, str(tmp_path / "d"))
        deferred.build()
        sess.run(v.initializer)
        assert deferred.save(sess, str(tmp_path / "d")) == str(tmp_path / "d")
    with pytest.raises(ValueError, match="cannot be deferred"):
        tf.train.Saver([v], defer_build=True)
    with pytest.raises(TypeError, match="Session"):
        deferred.save(object(), str(tmp_path / "x"))


def test_checkpoint_state_helpers(tmp_path):
    d = str(tmp_path)
    assert tf.train.get_checkpoint_state(d) is None and tf.train.latest_checkpoint(d) is None
    tf.train.update_checkpoint_state(d, os.path.join(d, "c-2"), [os.path.join(d, "c-1")])
    state = tf.train.get_checkpoint_state(d)
    assert list(state.all_model_checkpoint_paths) == [os.path.join(d, "c-1"),
                                                      os.path.join(d, "c-2")]
    assert tf.train.latest_checkpoint(d) is None  # the files do not exist
    proto = tf.train.generate_checkpoint_state_proto("rel", "rel/c-3", ["rel/c-1"])
    assert proto.model_checkpoint_path == "c-3"
    assert list(proto.all_model_checkpoint_paths) == ["c-1", "c-3"]
    open(os.path.join(d, "checkpoint"), "w").write("not a proto {{{")
    assert tf.train.get_checkpoint_state(d) is None
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tf.train.NewCheckpointReader(os.path.join(d, "none"))
    empty = tmp_path / "emptydir"
    empty.mkdir()
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.list_variables(str(empty))


def test_init_from_checkpoint(tmp_path):
    with tf.Graph().as_default():
        with tf.variable_scope("old"):
            w = tf.get_variable("w", [2, 2])
            b = tf.get_variable("b", [2])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(sess, str(tmp_path / "src"))
            values = sess.run([w, b])
    with tf.Graph().as_default():
        with tf.variable_scope("new"):
            w2 = tf.get_variable("w", [2, 2])
            b2 = tf.get_variable("b", [2])
        single = tf.get_variable("single", [2])
        tf.train.init_from_checkpoint(path, {"old/": "new/", "old/b": single})
        with pytest.raises(ValueError, match="is not found in"):
            tf.train.init_from_checkpoint(path, {"old/missing": single})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run([w2, b2, single])
    np.testing.assert_array_equal(got[0], values[0])
    np.testing.assert_array_equal(got[1], values[1])
    np.testing.assert_array_equal(got[2], values[1])


def test_meta_graph_written_by_save_restores_into_an_empty_graph(tmp_path):
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=W)
        tf.reduce_sum(w, name="total")
        with tf.Session() as sess:
            sess.run(w.initializer)
            path = tf.train.Saver().save(sess, str(tmp_path / "m"), global_step=2)
    assert os.path.exists(path + ".meta")
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, path)
            assert sess.run("total:0") == W.sum()


def test_save_refuses_a_monitored_session_as_tf_does(tmp_path):
    # TF 1.x: MonitoredSession is no SessionInterface, so Saver.save raises TypeError, open or
    # closed (programs that save after the `with` block meet this, not a closed-session error).
    with tf.Graph().as_default():
        v = tf.Variable(3.0, name="v")
        saver = tf.train.Saver()
        with tf.train.MonitoredSession() as mon_sess:
            with pytest.raises(TypeError, match="'sess' must be a Session"):
                saver.save(mon_sess, str(tmp_path / "open"))
            np.testing.assert_allclose(mon_sess.run(v), 3.0)
        with pytest.raises(TypeError, match="'sess' must be a Session"):
            saver.save(mon_sess, str(tmp_path / "closed"))
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "raw"))
        assert tf.train.NewCheckpointReader(path).get_tensor("v") == 3.0
