"""Resource variables: the VarHandleOp family against NumPy, snapshot and control-flow read
semantics, errors, optimizers (resource == reference, step by step), Saver, meta graphs,
GraphDef import, moving averages and a 1 ps + 1 worker cluster."""

import os
import sys

import numpy as np
import pytest
from op_helpers import graph  # noqa: F401 - autouse fixture

import tensorflux as tf
from tensorflux.ops.state import resource_training_ops as rt_ops
from tensorflux.ops.state import resource_variable_ops as rv_ops

SCATTERS = {
    "ResourceScatterUpdate": None, "ResourceScatterAdd": np.add.at,
    "ResourceScatterSub": np.subtract.at, "ResourceScatterMul": np.multiply.at,
    "ResourceScatterDiv": np.divide.at, "ResourceScatterMin": np.minimum.at,
    "ResourceScatterMax": np.maximum.at,
}
SCATTERS_ND = {"ResourceScatterNdUpdate": None, "ResourceScatterNdAdd": np.add.at,
               "ResourceScatterNdSub": np.subtract.at}

COVERED_OPS = {
    "VarHandleOp", "ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp",
    "AssignSubVariableOp", "VarIsInitializedOp", "DestroyResourceOp", "VariableShape",
    "ResourceGather", "ResourceGatherNd", *SCATTERS, *SCATTERS_ND,
    *(op.name for op in rt_ops.RESOURCE_TWINS.values()),
}

BASE = np.arange(12.0).reshape(4, 3) - 5.0


def _var(value, name="v", dtype=None):
    return tf.Variable(value, use_resource=True, name=name, dtype=dtype)


def _read_case(tf):
    v = tf.Variable(np.zeros((2, 3)), use_resource=True, name="g")
    return tf.sin(v.value()) * v.read_value(), [v], [BASE[:2] / 7.0]


def _gather_case(tf):
    v = tf.Variable(np.zeros((4, 3)), use_resource=True, name="g")
    return tf.square(v.sparse_read([3, 0, 3])), [v], [BASE / 5.0]


def _gather_nd_case(tf):
    v = tf.Variable(np.zeros((4, 3)), use_resource=True, name="g")
    return v.gather_nd([[1, 2], [3, 0], [1, 2]]) * 3.0, [v], [BASE / 3.0]


GRADIENT_CASES = [("ReadVariableOp", _read_case), ("ResourceGather", _gather_case),
                  ("ResourceGatherNd", _gather_nd_case)]


# -- ops against NumPy ------------------------------------------------------------------------

def test_handle_read_assign_shape_and_initialized():
    h = rv_ops.var_handle_op(tf.float32, [2, 2], shared_name="h", name="h")
    before = rv_ops.var_is_initialized_op(h)
    assign = rv_ops.assign_variable_op(h, np.ones((2, 2), np.float32))
    with tf.control_dependencies([assign]):
        add = rv_ops.assign_add_variable_op(h, np.full((2, 2), 2.0, np.float32))
    with tf.control_dependencies([add]):
        sub = rv_ops.assign_sub_variable_op(h, np.eye(2, dtype=np.float32))
    with tf.control_dependencies([sub]):
        value = rv_ops.read_variable_op(h, tf.float32)
        shape = rv_ops.variable_shape(h, out_type=tf.int64)
        after = rv_ops.var_is_initialized_op(h)
    assert value.get_shape().as_list() == [2, 2]
    with tf.Session() as sess:
        assert not sess.run(before)
        got, got_shape, ok = sess.run([value, shape, after])
        np.testing.assert_array_equal(got, 3.0 - np.eye(2))
        assert got.dtype == np.float32 and ok
        np.testing.assert_array_equal(got_shape, [2, 2])
        assert got_shape.dtype == np.int64
        sess.run(rv_ops.destroy_resource_op(h))
        with pytest.raises(tf.errors.FailedPreconditionError, match="h"):
            sess.run(rv_ops.read_variable_op(h, tf.float32))
        with pytest.raises(tf.errors.NotFoundError):
            sess.run(rv_ops.destroy_resource_op(h, ignore_lookup_error=False))


def test_gathers_against_numpy():
    v = _var(BASE)
    indices = np.array([[3, 1], [0, 3]])
    rows = rv_ops.resource_gather(v.handle, indices, tf.float64)
    nd = rv_ops.resource_gather_nd(v.handle, [[0, 1], [3, 2]], tf.float64)
    assert rows.get_shape().as_list() == [2, 2, 3]
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(rows), BASE[indices])
        np.testing.assert_array_equal(sess.run(nd), [BASE[0, 1], BASE[3, 2]])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"not in \[0, 4\)"):
            sess.run(v.sparse_read([1, 4]))


@pytest.mark.parametrize("op_type", sorted(SCATTERS))
def test_scatter_ops_against_numpy(op_type):
    from tensorflux.framework.op_def import get_op_def

    indices = np.array([2, 0, 2])
    updates = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0], [2.0, 2.0, 0.25]])
    v = _var(BASE)
    op = get_op_def(op_type)(v.handle, indices, updates)
    with tf.control_dependencies([op]):
        value = v.read_value()
    expected = BASE.copy()
    if SCATTERS[op_type] is None:
        expected[indices] = updates
    else:
        SCATTERS[op_type](expected, indices, updates)
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(value), expected)


@pytest.mark.parametrize("op_type", sorted(SCATTERS_ND))
def test_scatter_nd_ops_against_numpy(op_type):
    from tensorflux.framework.op_def import get_op_def

    indices = np.array([[1, 2], [3, 0], [1, 2]])
    updates = np.array([10.0, -3.0, 4.0])
    v = _var(BASE)
    op = get_op_def(op_type)(v.handle, indices, updates)
    with tf.control_dependencies([op]):
        value = v.read_value()
    expected = BASE.copy()
    if SCATTERS_ND[op_type] is None:
        expected[tuple(indices.T)] = updates
    else:
        SCATTERS_ND[op_type](expected, tuple(indices.T), updates)
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(value), expected)


def test_errors_name_the_variable():
    v = _var([1.0, 2.0], name="weights")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="weights"):
            sess.run(v.value())
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="weights"):
            sess.run(rv_ops.ReadVariableOp(v.handle, dtype=tf.int32))
        with pytest.raises(tf.errors.InvalidArgumentError, match="weights"):
            sess.run(v.assign(tf.placeholder_with_default([1.0, 2.0, 3.0], [None])))
        with pytest.raises(tf.errors.InvalidArgumentError, match="weights"):
            sess.run(v.assign_add(tf.placeholder_with_default([1.0], [None])))
    with pytest.raises(ValueError, match="weights"):
        v.assign([1.0, 2.0, 3.0])


# -- read semantics ---------------------------------------------------------------------------

def test_reads_are_snapshots():
    v = _var([1.0, 2.0])
    before = v.value()
    with tf.control_dependencies([before]):
        inc = v.assign_add([10.0, 10.0], read_value=False)
    with tf.control_dependencies([inc]):
        after = v.read_value()
    with tf.Session() as sess:
        sess.run(v.initializer)
        got_before, got_after = sess.run([before, after])
        np.testing.assert_array_equal(got_before, [1.0, 2.0])
        np.testing.assert_array_equal(got_after, [11.0, 12.0])
        fetched = sess.run(v)
        fetched += 100.0  # a fetched value never aliases the variable
        np.testing.assert_array_equal(sess.run(v), [11.0, 12.0])


def test_while_loop_reads_see_the_previous_iteration_assignment():
    v = _var(1.0)

    def body(i, total):
        assign = v.assign_add(1.0, read_value=False)
        with tf.control_dependencies([assign]):
            return i + 1, total + v.read_value()

    _, total = tf.while_loop(lambda i, t: i < 4, body, [0, tf.constant(0.0)])
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(total) == 2.0 + 3.0 + 4.0 + 5.0
        assert sess.run(v) == 5.0


def test_cond_branches_read_and_update_the_resource():
    v = _var(3.0)
    flag = tf.placeholder(tf.bool, [])
    out = tf.cond(flag, lambda: v.assign_add(2.0), lambda: v.read_value() * 10.0)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(out, {flag: False}) == 30.0
        assert sess.run(out, {flag: True}) == 5.0
        assert sess.run(out, {flag: False}) == 50.0


# -- the ResourceVariable class ---------------------------------------------------------------

def test_variable_api():
    v = _var(np.array([1.0, 2.0, 3.0], np.float32), name="w")
    assert isinstance(v, tf.Variable) and isinstance(v, tf.ResourceVariable)
    assert v.name == "w:0" and v.op.type == "VarHandleOp" and v.dtype == tf.float32
    assert repr(v) == "<tf.Variable 'w:0' shape=(3,) dtype=float32>"
    assert v.initializer.name == "w/Assign" and v.initializer.type == "AssignVariableOp"
    op = v.assign([4.0, 5.0, 6.0], read_value=False)
    assert isinstance(op, tf.Operation)
    doubled = v * 2.0
    init_value = v.initialized_value()
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(init_value), [1.0, 2.0, 3.0])
        sess.run(v.initializer)
        sess.run(op)
        np.testing.assert_array_equal(sess.run(doubled), [8.0, 10.0, 12.0])
        np.testing.assert_array_equal(
            sess.run(v.scatter_sub(tf.IndexedSlices(tf.constant([1.0, 1.0]), [0, 0]))),
            [2.0, 5.0, 6.0])
        np.testing.assert_array_equal(sess.run(v.scatter_nd_add([[2]], [0.5])),
                                      [2.0, 5.0, 6.5])
        np.testing.assert_array_equal(sess.run(v.sparse_read([2, 0])), [6.5, 2.0])
        fed = np.array([7.0, 8.0, 9.0], np.float32)
        v.load(fed, sess)
        fed += 100.0  # the variable keeps its own copy of a fed value
        np.testing.assert_array_equal(v.eval(sess), [7.0, 8.0, 9.0])
        assert sess.run(v[1]) == 8.0


def test_get_variable_scope_and_global_switch_create_resource_variables():
    a = tf.get_variable("a", [2], use_resource=True)
    with tf.variable_scope("s", use_resource=True):
        b = tf.get_variable("b", [2])
    c = tf.get_variable("c", [2])
    tf.enable_resource_variables()
    try:
        assert tf.resource_variables_enabled()
        d = tf.Variable(1.0, name="d")
        e = tf.Variable(1.0, name="e", use_resource=False)
    finally:
        tf.disable_resource_variables()
    assert not tf.resource_variables_enabled()
    kinds = [rv_ops.is_resource_variable(x) for x in (a, b, c, d, e)]
    assert kinds == [True, True, False, True, False]
    with tf.variable_scope("s", reuse=True, use_resource=True):
        assert tf.get_variable("b", [2]) is b


def test_to_proto_and_meta_graph_round_trip(tmp_path):
    v = _var([1.0, 2.0], name="v")
    proto = v.to_proto()
    assert proto.is_resource and proto.variable_name == "v:0"
    assert proto.snapshot_name == "v/Read/ReadVariableOp:0"
    assert proto.initializer_name == "v/Assign"
    again = tf.Variable(variable_def=proto)
    assert rv_ops.is_resource_variable(again) and again.handle is v.handle
    path = str(tmp_path / "m.meta")
    tf.train.export_meta_graph(path)
    with tf.Graph().as_default():
        tf.train.import_meta_graph(path)
        (w,) = tf.global_variables()
        assert rv_ops.is_resource_variable(w) and w.name == "v:0"
        with tf.Session() as sess:
            sess.run(w.initializer)
            np.testing.assert_array_equal(sess.run(w.assign_add([1.0, 1.0])), [2.0, 3.0])


# -- optimizers -------------------------------------------------------------------------------

OPTIMIZERS = {
    "gd": lambda: tf.train.GradientDescentOptimizer(0.1),
    "proximal_gd": lambda: tf.train.ProximalGradientDescentOptimizer(0.1, 0.01, 0.02),
    "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adagrad": lambda: tf.train.AdagradOptimizer(0.1),
    "proximal_adagrad": lambda: tf.train.ProximalAdagradOptimizer(0.1, 0.1, 0.01, 0.02),
    "adam": lambda: tf.train.AdamOptimizer(0.1),
    "rmsprop": lambda: tf.train.RMSPropOptimizer(0.05, momentum=0.5),
    "centered_rmsprop": lambda: tf.train.RMSPropOptimizer(0.05, momentum=0.5, centered=True),
    "adadelta": lambda: tf.train.AdadeltaOptimizer(1.0),
    "ftrl": lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01),
    "ftrl_shrinkage": lambda: tf.train.FtrlOptimizer(
        0.1, l2_shrinkage_regularization_strength=0.1),
    "adagrad_da": lambda: tf.train.AdagradDAOptimizer(
        0.1, tf.train.get_or_create_global_step(), l1_regularization_strength=0.01),
}


def _train_trajectory(make_optimizer, use_resource: bool, steps=3):
    rng = np.random.RandomState(1)
    w0 = rng.uniform(-1, 1, (5, 2))
    b0 = rng.uniform(-1, 1, (2,))
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=w0, use_resource=use_resource)
        b = tf.get_variable("b", initializer=b0, use_resource=use_resource)
        ids = tf.constant([0, 3, 3, 1])
        rows = w.sparse_read(ids) if use_resource else tf.gather(w, ids)  # sparse gradient
        dense = tf.matmul(tf.constant(rng.uniform(-1, 1, (3, 5))), w.value())  # dense one
        loss = tf.reduce_sum(tf.square(rows + b)) + tf.reduce_sum(tf.sin(dense))
        train = make_optimizer().minimize(loss)
        result = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train)
                result.append(sess.run([w, b]))
        ops = {op.type for op in train.graph.get_operations()}
        # slots and the optimizer's own variables follow the kind of the trained variables
        kinds = {rv_ops.is_resource_variable(v) for v in tf.global_variables()
                 if v.op.name != "global_step"}
    assert kinds == {use_resource}
    return result, ops


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_on_resource_equals_reference_step_by_step(name):
    resource, ops = _train_trajectory(OPTIMIZERS[name], True)
    reference, ref_ops = _train_trajectory(OPTIMIZERS[name], False)
    for (rw, rb), (fw, fb) in zip(resource, reference):
        np.testing.assert_allclose(rw, fw, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rb, fb, rtol=1e-12, atol=1e-12)
    assert not np.allclose(resource[-1][0], resource[0][0])
    assert any(op.startswith("Resource") for op in ops)
    assert not any(op.startswith("Resource") for op in ref_ops)


def test_gradient_of_reads_is_indexed_slices_for_gathers():
    v = _var(BASE)
    loss = tf.reduce_sum(v.sparse_read([1, 1, 2]) * 2.0) + tf.reduce_sum(v.value())
    (grad,) = tf.gradients(tf.reduce_sum(v.sparse_read([1, 1, 2])), [v])
    assert isinstance(grad, tf.IndexedSlices)
    (total,) = tf.gradients(loss, [v])
    with tf.Session() as sess:
        sess.run(v.initializer)
        expected = np.ones_like(BASE)
        expected[1] += 4.0
        expected[2] += 2.0
        np.testing.assert_array_equal(sess.run(total), expected)


# -- saving, GraphDef import, moving averages --------------------------------------------------

@pytest.mark.parametrize("save_resource", [True, False])
def test_saver_round_trip_between_reference_and_resource(tmp_path, save_resource):
    path = str(tmp_path / "ckpt")
    value = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    with tf.Graph().as_default():
        v = tf.Variable(value, name="layer/w", use_resource=save_resource)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            saver.save(sess, path)
    with tf.Graph().as_default():
        w = tf.Variable(tf.zeros([2, 3]), name="layer/w", use_resource=not save_resource)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), value)
    with tf.Graph().as_default():
        tf.Variable(tf.zeros([3, 3]), name="layer/w", use_resource=True)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="layer/w"):
                saver.restore(sess, path)


def test_tensorflow_graph_def_with_resource_variable_ops_imports_and_runs():
    from tensorflux.protos import graph_pb2, types_pb2

    gd = graph_pb2.GraphDef()
    handle = gd.node.add(name="v", op="VarHandleOp")
    handle.attr["dtype"].type = types_pb2.DT_FLOAT
    handle.attr["shared_name"].s = b"v"
    handle.attr["container"].s = b""
    for dim in (2,):
        handle.attr["shape"].shape.dim.add(size=dim)
    init = gd.node.add(name="v/Initializer/initial_value", op="Const")
    init.attr["dtype"].type = types_pb2.DT_FLOAT
    init.attr["value"].tensor.dtype = types_pb2.DT_FLOAT
    init.attr["value"].tensor.tensor_shape.dim.add(size=2)
    init.attr["value"].tensor.tensor_content = np.array([1.5, -2.0], np.float32).tobytes()
    assign = gd.node.add(name="v/Assign", op="AssignVariableOp",
                         input=["v", "v/Initializer/initial_value"])
    assign.attr["dtype"].type = types_pb2.DT_FLOAT
    read = gd.node.add(name="v/Read/ReadVariableOp", op="ReadVariableOp", input=["v"])
    read.attr["dtype"].type = types_pb2.DT_FLOAT
    add = gd.node.add(name="AssignAddVariableOp", op="AssignAddVariableOp",
                      input=["v", "v/Initializer/initial_value"])
    add.attr["dtype"].type = types_pb2.DT_FLOAT
    tf.import_graph_def(gd, name="")
    g = tf.get_default_graph()
    with tf.Session() as sess:
        sess.run(g.get_operation_by_name("v/Assign"))
        sess.run(g.get_operation_by_name("AssignAddVariableOp"))
        np.testing.assert_array_equal(sess.run("v/Read/ReadVariableOp:0"), [3.0, -4.0])


def test_exponential_moving_average_over_resource_variables():
    v = _var(np.array([1.0, 2.0]), name="v")
    ema = tf.train.ExponentialMovingAverage(0.5)
    update = ema.apply([v])
    average = ema.average(v)
    with tf.control_dependencies([update]):
        bump = v.assign_add([2.0, 2.0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(bump)
        sess.run(update)
        # first update: 0.5 * 1 + 0.5 * 1; second: 0.5 * 1 + 0.5 * 3
        np.testing.assert_allclose(sess.run(average), [2.0, 3.0])
    assert ema.average_name(v) == "v/ExponentialMovingAverage"


def test_partitioned_resource_variable_saves_as_one_tensor(tmp_path):
    value = np.ones((6, 2), np.float32)
    value[2:4] = [[2.0, 3.0], [4.0, 5.0]]
    part = tf.get_variable("emb", [6, 2], initializer=tf.ones_initializer(),
                           use_resource=True, partitioner=tf.fixed_size_partitioner(3))
    parts = list(part)
    assert len(parts) == 3 and all(rv_ops.is_resource_variable(p) for p in parts)
    path = str(tmp_path / "p")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(parts[1].assign(value[2:4]))
        np.testing.assert_array_equal(sess.run(tf.concat([p.value() for p in parts], 0)), value)
        tf.train.Saver().save(sess, path)
    assert tf.train.load_variable(path, "emb").tolist() == value.tolist()


# -- placement on a cluster -------------------------------------------------------------------

def test_one_ps_one_worker_cluster_places_the_handle_on_the_ps():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "distributed"))
    from cluster_helpers import make_cluster

    spec = make_cluster(ps=1, workers=1)
    servers = [tf.train.Server(spec, job, 0) for job in ("ps", "worker")]
    try:
        with tf.device(tf.train.replica_device_setter(cluster=spec)):
            w = tf.get_variable("w", initializer=np.ones((3, 1), np.float32),
                                use_resource=True)
            x = tf.constant(np.eye(3, dtype=np.float32))
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
            train = tf.train.GradientDescentOptimizer(0.25).minimize(loss)
        assert w.device == "/job:ps/task:0" and w.handle.op.device == "/job:ps/task:0"
        assert loss.device.startswith("/job:worker")
        with tf.Session(servers[1].target) as sess:
            sess.run(w.initializer)
            sess.run(train)
            np.testing.assert_allclose(sess.run(w), np.full((3, 1), 0.5))
        with tf.Session(servers[0].target) as sess:  # the value lives on the ps
            np.testing.assert_allclose(sess.run(w), np.full((3, 1), 0.5))
    finally:
        for server in servers:
            server.stop()


def _loop_and_cond_gradients(use_resource: bool):
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=np.array([[0.3, -0.2], [0.1, 0.4]]),
                            use_resource=use_resource)
        x = tf.constant(np.arange(6.0).reshape(3, 2) / 6)

        def body(i, h):
            return i + 1, tf.tanh(tf.matmul(h, w) + tf.reshape(x[i], [1, 2]))

        _, h = tf.while_loop(lambda i, h: i < 3, body, [0, tf.ones([1, 2], tf.float64)])
        flag = tf.placeholder(tf.bool, [])
        y = tf.cond(flag, lambda: tf.reduce_sum(w * w), lambda: tf.constant(0.5, tf.float64))
        (loop_grad,) = tf.gradients(tf.reduce_sum(h), [w])
        (cond_grad,) = tf.gradients(y, [w])
        with tf.Session() as sess:
            sess.run(w.initializer)
            return (sess.run(loop_grad), sess.run(cond_grad, {flag: True}),
                    sess.run(cond_grad, {flag: False}))


def test_gradients_through_loops_and_conds_match_reference_variables():
    resource = _loop_and_cond_gradients(True)
    reference = _loop_and_cond_gradients(False)
    for got, expected in zip(resource, reference):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert np.abs(resource[0]).sum() > 0
    np.testing.assert_allclose(resource[1], 2 * np.array([[0.3, -0.2], [0.1, 0.4]]))
    np.testing.assert_array_equal(resource[2], np.zeros((2, 2)))


def test_init_from_checkpoint_into_resource_variables(tmp_path):
    path = str(tmp_path / "ckpt")
    value = np.array([[1.0, -1.0], [2.5, 4.0]], np.float32)
    with tf.Graph().as_default():
        v = tf.get_variable("old/w", initializer=value)
        with tf.Session() as sess:
            sess.run(v.initializer)
            tf.train.Saver().save(sess, path)
    with tf.Graph().as_default():
        with tf.variable_scope("new", use_resource=True):
            w = tf.get_variable("w", [2, 2], initializer=tf.zeros_initializer())
        tf.train.init_from_checkpoint(path, {"old/": "new/"})
        assert rv_ops.is_resource_variable(w)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(w), value)


def test_report_uninitialized_and_monitored_session_with_resource_variables(tmp_path):
    a = _var([1.0], name="a")
    b = _var([2.0], name="b")
    step = tf.train.get_or_create_global_step()
    inc = tf.assign_add(step, 1)
    total = a + b
    with tf.Session() as sess:
        assert sorted(sess.run(tf.report_uninitialized_variables([a, b]))) == [b"a", b"b"]
        sess.run(a.initializer)
        assert sess.run(tf.report_uninitialized_variables([a, b])).tolist() == [b"b"]
        assert sess.run(tf.is_variable_initialized(a))
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path)) as sess:
        assert sess.run(total).tolist() == [3.0]
        sess.run(inc)
    assert type(a).__name__ == "ResourceVariable"


def test_tf_level_state_functions_dispatch_to_resource_variables():
    v = _var(np.zeros((3, 2)), name="s")
    with tf.control_dependencies([v.initializer]):
        a = tf.scatter_add(v, [0, 2, 0], np.ones((3, 2)))
    with tf.control_dependencies([a]):
        b = tf.scatter_nd_update(v, [[1, 1]], [7.0])
    with tf.control_dependencies([b]):
        c = tf.assign_sub(v, np.full((3, 2), 0.5))
    with tf.control_dependencies([c]):
        d = tf.gather(v, [1, 0])
    assert d.op.type == "ResourceGather"
    expected = np.array([[2.0, 2.0], [0.0, 7.0], [1.0, 1.0]]) - 0.5
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(d), expected[[1, 0]])
        np.testing.assert_array_equal(sess.run(v), expected)
