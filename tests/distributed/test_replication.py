"""Replicated training on a cluster gives the one-process result: between-graph replication
(one client graph per worker, variables shared on the ps through replica_device_setter) with
servers in this process and with `tensorflux server` subprocesses, and in-graph replication
(one client, a tower per worker task, averaged gradients applied on the ps)."""

import json
import subprocess
import sys

import numpy as np
import pytest
from cluster_helpers import make_cluster

import tensorflux as tf

ROWS, DIM, BATCH, STEPS = 12, 3, 8, 8
_RNG = np.random.RandomState(7)
EMB0 = _RNG.randn(ROWS, DIM).astype(np.float32)
W0 = _RNG.randn(DIM, 1).astype(np.float32)
IDS = _RNG.randint(0, ROWS, (STEPS, BATCH)).astype(np.int64)
TARGETS = _RNG.randn(STEPS, BATCH, 1).astype(np.float32)

def _variables():
    """A sharded embedding (2 shards), a dense weight and a bias, with fixed initial values."""
    emb = tf.get_variable("emb", initializer=tf.constant(EMB0),
                          partitioner=tf.fixed_size_partitioner(2))
    w = tf.get_variable("w", initializer=tf.constant(W0))
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    return emb, w, b


def _loss(emb, w, b, ids, targets):
    rows = tf.nn.embedding_lookup(emb, ids, partition_strategy="div")
    return tf.reduce_mean(tf.square(tf.matmul(rows, w) + b - targets))


def _model(device_fn=None):
    """(ids, targets, loss, train op, global step) with variables placed by `device_fn`."""
    with tf.device(device_fn):
        emb, w, b = _variables()
        step = tf.train.get_or_create_global_step()
        ids = tf.placeholder(tf.int64, [None])
        targets = tf.placeholder(tf.float32, [None, 1])
        loss = _loss(emb, w, b, ids, targets)
        train = tf.train.AdagradOptimizer(0.2).minimize(loss, global_step=step)
    return ids, targets, loss, train, step


def _all_data():
    return IDS.reshape(-1), TARGETS.reshape(-1, 1)


def _one_process_loss(steps):
    """The final loss after `steps` updates, batch k at step k, in one local session."""
    with tf.Graph().as_default():
        ids, targets, loss, train, _ = _model()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for k in range(steps):
                sess.run(train, {ids: IDS[k], targets: TARGETS[k]})
            all_ids, all_targets = _all_data()
            return sess.run(loss, {ids: all_ids, targets: all_targets})


def _between_graph(spec, targets_by_worker, config=None):
    """Trains STEPS steps alternating the workers' sessions; returns (loss, global step, emb
    as read by each worker)."""
    replicas = []
    for task, target in enumerate(targets_by_worker):
        graph = tf.Graph()
        with graph.as_default():
            setter = tf.train.replica_device_setter(
                cluster=spec, worker_device=f"/job:worker/task:{task}")
            model = _model(setter)
            init = tf.global_variables_initializer()
            emb = tf.get_default_graph().get_tensor_by_name("emb/part_0:0")
        replicas.append((tf.Session(target, graph=graph, config=config), model, init, emb))
    try:
        chief = replicas[0]
        chief[0].run(chief[2])
        for k in range(STEPS):
            sess, (ids, targets, _, train, _), _, _ = replicas[k % len(replicas)]
            sess.run(train, {ids: IDS[k], targets: TARGETS[k]})
        shards = [sess.run(emb) for sess, _, _, emb in replicas]
        sess, (ids, targets, loss, _, step), _, _ = replicas[-1]
        all_ids, all_targets = _all_data()
        return sess.run(loss, {ids: all_ids, targets: all_targets}), sess.run(step), shards
    finally:
        for sess, *_ in replicas:
            sess.close()


@pytest.fixture(params=["in-process", "grpc"])
def cluster(request):
    spec = make_cluster()
    config = tf.ConfigProto()
    config.rpc_options.use_rpc_for_inprocess_master = request.param == "grpc"
    servers = [tf.train.Server(spec, job, task, config=config)
               for job in ("ps", "worker") for task in spec.task_indices(job)]
    yield spec, servers, config
    for server in servers:
        server.stop()


def test_between_graph_replication_matches_one_process(cluster):
    spec, servers, config = cluster
    loss, step, shards = _between_graph(spec, [s.target for s in servers[1:]], config)
    assert step == STEPS
    np.testing.assert_array_equal(shards[0], shards[1])  # one copy, on the ps
    assert not np.allclose(shards[0], EMB0[:ROWS // 2])
    np.testing.assert_allclose(loss, _one_process_loss(STEPS), rtol=1e-5)
    assert not np.isclose(loss, _one_process_loss(0), rtol=1e-3)


def _average(tower_grads):
    """Per variable, the mean of the towers' gradients (IndexedSlices stay sparse)."""
    averaged = []
    for pairs in zip(*tower_grads):
        grads = [g for g, _ in pairs]
        var = pairs[0][1]
        if isinstance(grads[0], tf.IndexedSlices):
            values = tf.concat([g.values for g in grads], 0) / len(grads)
            indices = tf.concat([g.indices for g in grads], 0)
            averaged.append((tf.IndexedSlices(values, indices, grads[0].dense_shape), var))
        else:
            averaged.append((tf.add_n(grads) / len(grads), var))
    return averaged


def test_in_graph_replication_matches_one_process(cluster):
    spec, servers, config = cluster
    half = BATCH // 2
    with tf.Graph().as_default():
        setter = tf.train.replica_device_setter(cluster=spec, worker_device="/job:worker/task:0")
        with tf.device(setter):
            emb, w, b = _variables()
            optimizer = tf.train.AdagradOptimizer(0.2)
        ids = tf.placeholder(tf.int64, [None])
        targets = tf.placeholder(tf.float32, [None, 1])
        tower_grads = []
        for task in range(2):
            with tf.device(f"/job:worker/task:{task}"), tf.name_scope(f"tower_{task}"):
                part = slice(task * half, (task + 1) * half)
                loss = _loss(emb, w, b, ids[part], targets[part])
                tower_grads.append(optimizer.compute_gradients(loss))
        with tf.device(setter):
            train = optimizer.apply_gradients(_average(tower_grads))
            full_loss = _loss(emb, w, b, ids, targets)
        with tf.Session(servers[1].target, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            meta = tf.RunMetadata()
            for k in range(STEPS):
                sess.run(train, {ids: IDS[k], targets: TARGETS[k]},
                         options=tf.RunOptions(output_partition_graphs=k == 0),
                         run_metadata=meta if k == 0 else None)
            all_ids, all_targets = _all_data()
            final = sess.run(full_loss, {ids: all_ids, targets: all_targets})
    devices = {n.name: n.device for g in meta.partition_graphs for n in g.node}
    assert devices["tower_0/MatMul"].startswith("/job:worker/replica:0/task:0/")
    assert devices["tower_1/MatMul"].startswith("/job:worker/replica:0/task:1/")
    assert devices["Adagrad/update_w/ApplyAdagrad"].startswith("/job:ps/replica:0/task:0/")
    # Averaging equal halves is the full-batch gradient: the one-process, one-tower result.
    np.testing.assert_allclose(final, _one_process_loss(STEPS), rtol=1e-5)


def _spawn(spec, job, task):
    return subprocess.Popen(
        [sys.executable, "-m", "tensorflux.cli", "server", "--cluster-json",
         json.dumps(spec.as_dict()), "--job", job, "--task", str(task)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_between_graph_replication_across_processes():
    spec = make_cluster()
    procs = [_spawn(spec, "ps", 0), _spawn(spec, "worker", 0), _spawn(spec, "worker", 1)]
    try:
        for proc in procs:
            line = proc.stdout.readline()
            assert "serving at" in line, line
        targets = [f"grpc://{spec.task_address('worker', i)}" for i in range(2)]
        loss, step, shards = _between_graph(spec, targets)
        assert step == STEPS
        np.testing.assert_array_equal(shards[0], shards[1])
        np.testing.assert_allclose(loss, _one_process_loss(STEPS), rtol=1e-5)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
            proc.stdout.close()
