"""tf.train.Checkpoint in graph mode: keys, object graph, save/restore values, statuses."""

import os

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.lib.formats import bundle
from tensorflux.protos import trackable_object_graph_pb2
from tensorflux.train.tracking.base import AutoTrackable

W0 = np.array([1.0, 2.0], dtype=np.float32)


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _adam_program(w_name="w", b_name="b", resource=False):
    w = tf.get_variable(w_name, initializer=W0, use_resource=resource)
    b = tf.Variable(3.0, name=b_name)
    opt = tf.train.AdamOptimizer(0.1)
    train = opt.minimize(tf.reduce_sum(w * w) + b)
    return w, b, opt, train


def _object_graph(path):
    proto = trackable_object_graph_pb2.TrackableObjectGraph()
    proto.ParseFromString(tf.train.load_variable(path, "_CHECKPOINTABLE_OBJECT_GRAPH"))
    return proto


def _trained_checkpoint(tmp_path, steps=2):
    """Saves w, b and Adam after `steps` steps; returns (path, values by name)."""
    with tf.Graph().as_default():
        w, b, opt, train = _adam_program()
        ckpt = tf.train.Checkpoint(v=w, b=b, optimizer=opt)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train)
            path = ckpt.save(str(tmp_path / "ckpt"), session=sess)
            values = dict(zip(["w", "b", "m", "v", "b1", "b2"], sess.run(
                [w, b, opt.get_slot(w, "m"), opt.get_slot(w, "v"),
                 *opt._get_beta_accumulators()])))
    return path, values


def test_keys_and_object_graph_are_tensorflows(tmp_path):
    path, _ = _trained_checkpoint(tmp_path)
    assert path == str(tmp_path / "ckpt-1")
    shapes = dict(tf.train.list_variables(path))
    slot = ".OPTIMIZER_SLOT/optimizer"
    assert shapes == {
        "_CHECKPOINTABLE_OBJECT_GRAPH": [],
        "b/.ATTRIBUTES/VARIABLE_VALUE": [],
        f"b/{slot}/m/.ATTRIBUTES/VARIABLE_VALUE": [],
        f"b/{slot}/v/.ATTRIBUTES/VARIABLE_VALUE": [],
        "optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE": [],
        "optimizer/beta2_power/.ATTRIBUTES/VARIABLE_VALUE": [],
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE": [],
        "v/.ATTRIBUTES/VARIABLE_VALUE": [2],
        f"v/{slot}/m/.ATTRIBUTES/VARIABLE_VALUE": [2],
        f"v/{slot}/v/.ATTRIBUTES/VARIABLE_VALUE": [2],
    }
    proto = _object_graph(path)
    root = proto.nodes[0]
    assert [c.local_name for c in root.children] == ["b", "optimizer", "v", "save_counter"]
    ids = {c.local_name: c.node_id for c in root.children}
    optimizer = proto.nodes[ids["optimizer"]]
    assert [c.local_name for c in optimizer.children] == ["beta1_power", "beta2_power"]
    refs = [(r.original_variable_node_id, r.slot_name) for r in optimizer.slot_variables]
    assert refs == [(ids["b"], "m"), (ids["v"], "m"), (ids["b"], "v"), (ids["v"], "v")]
    w_node = proto.nodes[ids["v"]]
    assert w_node.attributes[0].full_name == "w"
    assert w_node.attributes[0].checkpoint_key == "v/.ATTRIBUTES/VARIABLE_VALUE"
    slot_node = proto.nodes[optimizer.slot_variables[1].slot_variable_node_id]
    assert slot_node.attributes[0].full_name == "w/Adam"
    assert all(n.has_checkpoint_values.value for n in proto.nodes)
    assert tf.train.load_variable(path, "save_counter/.ATTRIBUTES/VARIABLE_VALUE") == 1


@pytest.mark.parametrize("resource", [False, True])
def test_restore_by_object_path_not_by_graph_name(tmp_path, resource):
    path, want = _trained_checkpoint(tmp_path)
    with tf.Graph().as_default():
        w, b, opt, train = _adam_program("renamed_w", "other/b", resource=resource)
        ckpt = tf.train.Checkpoint(optimizer=opt, v=w, b=b)
        status = ckpt.restore(path)
        status.assert_consumed().assert_existing_objects_matched().assert_nontrivial_match()
        with tf.Session() as sess:
            status.run_restore_ops(sess)
            got = sess.run([w, b, opt.get_slot(w, "m"), opt.get_slot(w, "v"),
                            *opt._get_beta_accumulators(), ckpt.save_counter])
    for value, name in zip(got, ["w", "b", "m", "v", "b1", "b2"]):
        np.testing.assert_array_equal(value, want[name])
    assert got[-1] == 1
    assert not np.array_equal(want["w"], W0)


def test_save_numbers_prefixes_and_writes_the_state_file(graph, tmp_path):
    v = tf.Variable(5.0, name="v")
    ckpt = tf.train.Checkpoint(v=v)
    with tf.Session() as sess:
        sess.run(v.initializer)
        first = ckpt.save(str(tmp_path / "run" / "ckpt"), session=sess)
        sess.run(v.assign(6.0))
        second = ckpt.save(str(tmp_path / "run" / "ckpt"), session=sess)
        assert sess.run(ckpt.save_counter) == 2
        written = ckpt.write(str(tmp_path / "exact"), session=sess)
        assert sess.run(ckpt.save_counter) == 2
    assert (first, second) == (str(tmp_path / "run" / "ckpt-1"), str(tmp_path / "run" / "ckpt-2"))
    assert written == str(tmp_path / "exact") and os.path.exists(written + ".index")
    assert tf.train.latest_checkpoint(str(tmp_path / "run")) == second
    state = (tmp_path / "run" / "checkpoint").read_text()
    assert 'model_checkpoint_path: "ckpt-2"' in state and "ckpt-1" not in state
    assert tf.train.load_variable(first, "v/.ATTRIBUTES/VARIABLE_VALUE") == 5.0
    assert tf.train.load_variable(second, "v/.ATTRIBUTES/VARIABLE_VALUE") == 6.0
    assert not (tmp_path / "checkpoint").exists()


def test_default_session_and_missing_session(graph, tmp_path):
    v = tf.Variable(2.0, name="v")
    ckpt = tf.train.Checkpoint(v=v)
    with pytest.raises(ValueError, match="session"):
        ckpt.save(str(tmp_path / "c"))
    with tf.Session() as sess:
        sess.run(v.initializer)
        with sess.as_default():
            path = ckpt.save(str(tmp_path / "c"))
    assert tf.train.load_variable(path, "v/.ATTRIBUTES/VARIABLE_VALUE") == 2.0


def test_deferred_restoration_of_slots_created_after_restore(tmp_path):
    path, want = _trained_checkpoint(tmp_path)
    with tf.Graph().as_default():
        w = tf.get_variable("w", shape=[2])
        b = tf.Variable(0.0, name="b")
        opt = tf.train.AdamOptimizer(0.1)
        ckpt = tf.train.Checkpoint(v=w, b=b, optimizer=opt)
        status = ckpt.restore(path)
        with pytest.raises(AssertionError, match="Unresolved object"):
            status.assert_consumed()  # the slots and beta powers do not exist yet
        status.assert_existing_objects_matched()
        train = opt.minimize(tf.reduce_sum(w * w) + b)  # creates slots after restore()
        status.assert_consumed()
        with tf.Session() as sess:
            status.initialize_or_restore(sess)
            np.testing.assert_array_equal(sess.run(opt.get_slot(w, "v")), want["v"])
            assert sess.run(opt._get_beta_accumulators()[0]) == want["b1"]
            sess.run(train)


def test_assertions_name_unmatched_objects(tmp_path):
    path, want = _trained_checkpoint(tmp_path)
    with tf.Graph().as_default():
        w = tf.get_variable("w", shape=[2])
        extra = tf.Variable([7.0, 8.0], name="extra")
        status = tf.train.Checkpoint(v=w, extra=extra).restore(path)
        with pytest.raises(AssertionError, match="Unresolved object in checkpoint"):
            status.assert_consumed()
        with pytest.raises(AssertionError, match="'extra'"):
            status.assert_existing_objects_matched()
        status.assert_nontrivial_match()
        assert status.expect_partial() is status
        with tf.Session() as sess:
            status.initialize_or_restore(sess)
            np.testing.assert_array_equal(sess.run(w), want["w"])
            np.testing.assert_array_equal(sess.run(extra), [7.0, 8.0])
    with tf.Graph().as_default():
        status = tf.train.Checkpoint(other=tf.Variable(1.0)).restore(path)
        status.assert_nontrivial_match()  # as TF: the save counter matched
        with pytest.raises(AssertionError, match="Unresolved object"):
            status.assert_consumed()
        unrelated = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(2,))])
        with pytest.raises(AssertionError, match="Nothing except the root"):
            unrelated.load_weights(path)


def test_restore_none_initializes_only(graph):
    v = tf.Variable([4.0], name="v")
    status = tf.train.Checkpoint(v=v).restore(None)
    for check in (status.assert_consumed, status.assert_existing_objects_matched,
                  status.assert_nontrivial_match):
        with pytest.raises(AssertionError, match="save_path=None"):
            check()
    with tf.Session() as sess:
        status.initialize_or_restore(sess)
        np.testing.assert_array_equal(sess.run(v), [4.0])


def test_errors_missing_checkpoint_shape_and_dtype_mismatch(tmp_path):
    path, _ = _trained_checkpoint(tmp_path)
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.NotFoundError, match="nothing_here"):
            tf.train.Checkpoint(v=tf.Variable(1.0)).restore(str(tmp_path / "nothing_here"))
        status = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0, 3.0], name="w3")).restore(path)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"v/\.ATTRIBUTES/VARIABLE_VALUE"):
                status.run_restore_ops(sess)
        status = tf.train.Checkpoint(v=tf.Variable([1, 2], name="wi")).restore(path)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="dtype"):
                status.run_restore_ops(sess)
    with pytest.raises(ValueError, match="trackable"):
        tf.train.Checkpoint(x=3)


class _Block(AutoTrackable):
    def __init__(self):
        self.scale = tf.Variable(2.0, name="scale")
        self.parts = [tf.Variable(1.0, name="p0"), tf.Variable(2.0, name="p1")]


def test_nested_trackables_lists_and_escaped_names(graph, tmp_path):
    inner = tf.train.Checkpoint(block=_Block())
    odd = tf.train.Checkpoint(**{"a.b/c": tf.Variable(9.0, name="odd")})
    ckpt = tf.train.Checkpoint(inner=inner, odd=odd)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = ckpt.save(str(tmp_path / "n"), session=sess)
    keys = {k for k, _ in tf.train.list_variables(path)}
    assert {"inner/block/scale/.ATTRIBUTES/VARIABLE_VALUE",
            "inner/block/parts/0/.ATTRIBUTES/VARIABLE_VALUE",
            "inner/block/parts/1/.ATTRIBUTES/VARIABLE_VALUE",
            "odd/a..b.Sc/.ATTRIBUTES/VARIABLE_VALUE"} <= keys
    assert "inner/save_counter/.ATTRIBUTES/VARIABLE_VALUE" not in keys
    assert tf.train.load_variable(path, "inner/block/parts/1/.ATTRIBUTES/VARIABLE_VALUE") == 2.0
    with tf.Graph().as_default():
        block = _Block()
        restored = tf.train.Checkpoint(inner=tf.train.Checkpoint(block=block))
        status = restored.restore(path)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(block.parts[1].assign(-1.0))
            status.run_restore_ops(sess)
            assert sess.run(block.parts[1]) == 2.0


def test_name_based_checkpoint_restored_through_checkpoint(graph, tmp_path):
    v = tf.Variable([1.5, 2.5], name="weights")
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = tf.train.Saver().save(sess, str(tmp_path / "named"))
    with tf.Graph().as_default():
        v2 = tf.Variable([0.0, 0.0], name="weights")
        missing = tf.Variable(1.0, name="missing")
        status = tf.train.Checkpoint(a=v2, b=missing).restore(path)
        with pytest.raises(AssertionError, match="missing"):
            status.assert_consumed()
        with tf.Session() as sess:
            status.initialize_or_restore(sess)
            np.testing.assert_array_equal(sess.run(v2), [1.5, 2.5])
            assert sess.run(missing) == 1.0


def test_saver_restores_an_object_based_checkpoint(tmp_path):
    path, want = _trained_checkpoint(tmp_path)
    with tf.Graph().as_default():
        w, b, opt, _ = _adam_program()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, path)
            got = sess.run([w, b, opt.get_slot(w, "v")])
            saver.restore(sess, path)  # the remapping saver is built once
    np.testing.assert_array_equal(got[0], want["w"])
    assert got[1] == want["b"]
    np.testing.assert_array_equal(got[2], want["v"])
    with tf.Graph().as_default():
        tf.Variable(1.0, name="not_in_it")
        with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError, match="not_in_it"):
            tf.train.Saver().restore(sess, path)


def test_tf_layers_and_rnn_cells_are_tracked_by_weight_name(graph, tmp_path):
    dense = tf.layers.Dense(3)
    dense(tf.zeros([2, 4]))
    cell = tf.nn.rnn_cell.LSTMCell(4)
    tf.nn.dynamic_rnn(cell, tf.zeros([2, 3, 5]), dtype=tf.float32)
    ckpt = tf.train.Checkpoint(layer=dense, cell=cell)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = ckpt.save(str(tmp_path / "c"), session=sess)
        kernel = sess.run(cell.weights[0])
    assert dict(tf.train.list_variables(path)) == {
        "_CHECKPOINTABLE_OBJECT_GRAPH": [], "save_counter/.ATTRIBUTES/VARIABLE_VALUE": [],
        "layer/kernel/.ATTRIBUTES/VARIABLE_VALUE": [4, 3],
        "layer/bias/.ATTRIBUTES/VARIABLE_VALUE": [3],
        "cell/kernel/.ATTRIBUTES/VARIABLE_VALUE": [9, 16],
        "cell/bias/.ATTRIBUTES/VARIABLE_VALUE": [16]}
    np.testing.assert_array_equal(
        tf.train.load_variable(path, "cell/kernel/.ATTRIBUTES/VARIABLE_VALUE"), kernel)


def test_restore_called_outside_the_variables_graph(tmp_path):
    path, want = _trained_checkpoint(tmp_path)
    g = tf.Graph()
    with g.as_default():
        w = tf.get_variable("w", shape=[2])
    ckpt = tf.train.Checkpoint(v=w)
    status = ckpt.restore(path)  # the default graph is not g
    with tf.Session(graph=g) as sess:
        status.initialize_or_restore(sess)
        np.testing.assert_array_equal(sess.run(w), want["w"])


def test_saver_from_an_imported_meta_graph_restores_an_object_checkpoint(tmp_path):
    path, want = _trained_checkpoint(tmp_path)
    with tf.Graph().as_default():
        w, b, opt, _ = _adam_program()
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(meta)
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(g.get_tensor_by_name("w:0")), want["w"])


def test_a_malformed_object_graph_is_data_loss(graph, tmp_path):
    proto = trackable_object_graph_pb2.TrackableObjectGraph()
    proto.nodes.add().children.add(node_id=7, local_name="v")
    bundle.write_bundle(str(tmp_path / "bad"), {
        "_CHECKPOINTABLE_OBJECT_GRAPH": np.array(proto.SerializeToString(), dtype=object),
        "v/.ATTRIBUTES/VARIABLE_VALUE": np.float32(1.0)})
    status = tf.train.Checkpoint(v=tf.Variable(0.0)).restore(str(tmp_path / "bad"))
    with pytest.raises(tf.errors.DataLossError, match="node 7"):
        status.assert_consumed()


def test_saving_a_variable_of_another_graph_is_refused(tmp_path):
    other = tf.Graph()
    with other.as_default():
        stray = tf.Variable(1.0, name="stray")
    with tf.Graph().as_default():
        ckpt = tf.train.Checkpoint(v=tf.Variable(2.0, name="v"), stray=stray)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(ValueError, match="stray"):
                ckpt.save(str(tmp_path / "c"), session=sess)
