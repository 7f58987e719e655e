"""Sharded embedding lookups: values and IndexedSlices gradients equal the unsharded ones, and
on a 2-ps cluster each Gather runs on the ps task holding its shard, so only the requested rows
cross the network (in both directions when training)."""


import numpy as np
import pytest
from cluster_helpers import free_port
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.distributed import worker as worker_mod
from tensorflux.distributed.rpc import tensor_codec


def _shards(table, n, strategy):
    """The shards TF's `mod` / `div` strategies expect for the rows of `table`."""
    if strategy == "mod":
        return [table[s::n] for s in range(n)]
    return np.array_split(table, n)


def _shard_rows(num_rows, n, strategy):
    """The table rows held by each shard, in shard order."""
    return _shards(np.arange(num_rows), n, strategy)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 25), st.integers(1, 5), st.integers(1, 4),
       st.sampled_from(["mod", "div"]), st.data())
def test_sharded_lookup_equals_unsharded(rows, n, dim, strategy, data):
    n = min(n, rows)
    ids_shape = data.draw(st.sampled_from([[7], [2, 3], [1], [0]]))
    rng = np.random.RandomState(rows * 10 + n)
    table = rng.randn(rows, dim).astype(np.float32)
    ids = rng.randint(0, rows, size=ids_shape).astype(np.int64)
    with tf.Graph().as_default():
        shards = [tf.constant(s) for s in _shards(table, n, strategy)]
        ids_ph = tf.placeholder(tf.int64)
        sharded = tf.nn.embedding_lookup(shards, ids, partition_strategy=strategy)
        fed = tf.nn.embedding_lookup(shards, ids_ph, partition_strategy=strategy)
        whole = tf.nn.embedding_lookup(table, ids)
        assert sharded.shape.as_list() == ids_shape + [dim]
        with tf.Session() as sess:
            got, got_fed, expected = sess.run([sharded, fed, whole], {ids_ph: ids})
    np.testing.assert_array_equal(expected, table[ids])
    np.testing.assert_array_equal(got, table[ids])
    np.testing.assert_array_equal(got_fed, table[ids])


def test_lookup_on_partitioned_variable_and_max_norm():
    table = np.random.RandomState(0).randn(11, 4).astype(np.float32) * 3
    ids = np.array([[0, 10], [5, 5], [7, 2]])
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", initializer=tf.constant(table),
                              partitioner=tf.fixed_size_partitioner(3))
        div = tf.nn.embedding_lookup(emb, ids, partition_strategy="div")
        clipped = tf.nn.embedding_lookup(emb, ids, partition_strategy="div", max_norm=1.5)
        single = tf.nn.embedding_lookup(tf.Variable(table), ids, max_norm=1.5)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, got_clipped, got_single = sess.run([div, clipped, single])
    np.testing.assert_array_equal(got, table[ids])
    norms = np.linalg.norm(table[ids], axis=-1, keepdims=True)
    reference = table[ids] * np.minimum(1.0, 1.5 / norms)
    np.testing.assert_allclose(got_clipped, reference, rtol=1e-5)
    np.testing.assert_allclose(got_single, reference, rtol=1e-5)
    with pytest.raises(ValueError, match="Unrecognized partition strategy"):
        tf.nn.embedding_lookup([table, table], ids, partition_strategy="hash")


def test_gathers_are_colocated_with_their_shards():
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            emb = tf.get_variable("emb", [10, 3], partitioner=tf.fixed_size_partitioner(2))
            single = tf.get_variable("single", [4, 3])
            ids = tf.placeholder(tf.int64, [None])
            loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, ids)) + \
                tf.reduce_sum(tf.nn.embedding_lookup(single, ids))
            grads = tf.gradients(loss, list(emb) + [single])
        ops = tf.get_default_graph().get_operations()
    gathers = [op for op in ops if op.type in ("Gather", "GatherV2")
               and op.name.startswith("embedding_lookup")]
    assert len(gathers) == 3
    for gather in gathers:
        shard = gather.inputs[0].op  # the shard's read snapshot
        assert gather.colocation_groups() == shard.colocation_groups()
        assert gather.device == shard.device and gather.device.startswith("/job:ps/task:")
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)
    for grad, var in zip(grads, list(emb) + [single]):
        # dense_shape is read where the shard lives: the table never leaves the ps.
        assert grad.dense_shape.op.colocation_groups() == var.op.colocation_groups()


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_sharded_gradients_are_indexed_slices_per_shard(strategy):
    rows, dim, n = 13, 3, 3
    rng = np.random.RandomState(2)
    table = rng.randn(rows, dim)
    ids = np.array([[1, 12, 1], [0, 7, 12]])
    weights = rng.randn(2, 3, dim)
    with tf.Graph().as_default():
        shards = [tf.Variable(s) for s in _shards(table, n, strategy)]
        rows_t = tf.nn.embedding_lookup(shards, ids, partition_strategy=strategy)
        grads = tf.gradients(tf.reduce_sum(rows_t * weights), shards)
        assert all(isinstance(g, tf.IndexedSlices) for g in grads)
        dense = [tf.convert_to_tensor(g) for g in grads]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(dense)
            indices = sess.run([g.indices for g in grads])
    full_grad = np.zeros_like(table)
    np.add.at(full_grad, ids.reshape(-1), weights.reshape(-1, dim))
    for shard_grad, shard_rows, shard_indices in zip(got, _shard_rows(rows, n, strategy),
                                                     indices):
        np.testing.assert_allclose(shard_grad, full_grad[shard_rows], rtol=1e-12)
        assert set(shard_rows[shard_indices]) <= set(ids.reshape(-1))


def _train_embedding(optimizer_fn, table, batches, n, strategy):
    """Final table and losses of a few sparse training steps (n=None: one unsharded table)."""
    with tf.Graph().as_default():
        if n is None:
            params = tf.Variable(table)
        else:
            params = [tf.Variable(s) for s in _shards(table, n, strategy)]
        ids = tf.placeholder(tf.int64, [None])
        target = tf.placeholder(tf.float64, [None, table.shape[1]])
        rows = tf.nn.embedding_lookup(params, ids, partition_strategy=strategy)
        loss = tf.reduce_sum(tf.square(rows - target))
        train = optimizer_fn().minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {ids: i, target: t})[0] for i, t in batches]
            final = sess.run(params)
    if n is None:
        return final, losses
    whole = np.empty_like(table)
    for shard_rows, value in zip(_shard_rows(len(table), n, strategy), final):
        whole[shard_rows] = value
    return whole, losses


@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("optimizer_fn", [
    lambda: tf.train.GradientDescentOptimizer(0.1),
    lambda: tf.train.AdagradOptimizer(0.3),
], ids=["sgd", "adagrad"])
def test_sharded_training_equals_unsharded(strategy, optimizer_fn):
    rng = np.random.RandomState(3)
    table = rng.randn(20, 4)
    batches = [(rng.randint(0, 20, 6), rng.randn(6, 4)) for _ in range(4)]
    batches.append((np.array([5, 5, 5, 19]), rng.randn(4, 4)))  # duplicate ids are summed
    sharded, sharded_losses = _train_embedding(optimizer_fn, table, batches, 3, strategy)
    whole, whole_losses = _train_embedding(optimizer_fn, table, batches, None, strategy)
    np.testing.assert_allclose(sharded, whole, rtol=1e-12)
    np.testing.assert_allclose(sharded_losses, whole_losses, rtol=1e-12)
    untouched = np.setdiff1d(np.arange(20), np.concatenate([i for i, _ in batches]))
    np.testing.assert_array_equal(sharded[untouched], table[untouched])


# -- on a cluster ----------------------------------------------------------------------------

@pytest.fixture(params=["in-process", "grpc"])
def ps_cluster(request):
    """2 ps tasks and 1 worker; records (serving task, receiving device, bytes) per transfer."""
    spec = tf.train.ClusterSpec({"ps": [f"localhost:{free_port()}" for _ in range(2)],
                                 "worker": [f"localhost:{free_port()}"]})
    config = tf.ConfigProto()
    config.rpc_options.use_rpc_for_inprocess_master = request.param == "grpc"
    servers = [tf.train.Server(spec, job, task, config=config)
               for job in ("ps", "worker") for task in spec.task_indices(job)]
    transfers = []
    for server in servers:
        serve = server.worker.recv_tensor

        def recording(req, respond, serve=serve, task=server.task_name):
            def done(error, value, is_dead, incarnation):
                size = 0 if value is None else np.asarray(value).nbytes
                transfers.append((task, req.rendezvous_key.split(";")[2], size))
                respond(error, value, is_dead, incarnation)

            serve(req, done)

        server.worker.recv_tensor = recording
    push_sends = worker_mod._push_sends

    def pushing(keys, rendezvous, response):  # sends returned with RunGraph (push_plan)
        push_sends(keys, rendezvous, response)
        for entry in response.recv:
            if entry.name.startswith("="):
                transfers.append((rendezvous.task, entry.name.split(";")[2],
                                  tensor_codec.decode_tensor(entry.tensor).nbytes))

    worker_mod._push_sends = pushing
    yield spec, servers, config, transfers
    worker_mod._push_sends = push_sends
    for server in servers:
        server.stop()


PS0, PS1 = "/job:ps/replica:0/task:0", "/job:ps/replica:0/task:1"
WORKER = "/job:worker/replica:0/task:0"


def _bytes(transfers, source, destination_prefix):
    return sum(size for task, dest, size in transfers
               if task == source and dest.startswith(destination_prefix))


def test_lookup_gathers_on_ps_and_moves_only_requested_rows(ps_cluster):
    spec, servers, config, transfers = ps_cluster
    rows, dim = 400_000, 16  # 25.6 MB in two shards
    ids_value = np.random.RandomState(4).randint(0, rows, 32)
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(cluster=spec,
                                                      worker_device="/job:worker/task:0")):
            emb = tf.get_variable("emb", [rows, dim], initializer=tf.random_uniform_initializer(),
                                  partitioner=tf.fixed_size_partitioner(2))
            ids = tf.placeholder(tf.int64, [None])
            looked_up = tf.nn.embedding_lookup(emb, ids, partition_strategy="div")
        with tf.Session(servers[2].target, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            transfers.clear()
            meta = tf.RunMetadata()
            got = sess.run(looked_up, {ids: ids_value},
                           options=tf.RunOptions(output_partition_graphs=True),
                           run_metadata=meta)
            moved = list(transfers)
            heads = []
            for part in emb:
                with tf.colocate_with(part):  # sliced on the ps: the tables stay there
                    heads.append(part[:3])
            parts = sess.run(heads)
            spot = sess.run(looked_up, {ids: [0, 1, 2, rows // 2, rows // 2 + 1, rows // 2 + 2]})
    gathers = {n.name: n.device for g in meta.partition_graphs for n in g.node
               if n.op in ("Gather", "GatherV2")}
    assert gathers == {"embedding_lookup/GatherV2": PS0 + "/device:CPU:0",
                       "embedding_lookup/GatherV2_1": PS1 + "/device:CPU:0"}
    per_shard = np.bincount(ids_value // (rows // 2), minlength=2)
    assert _bytes(moved, PS0, WORKER) == per_shard[0] * dim * 4
    assert _bytes(moved, PS1, WORKER) == per_shard[1] * dim * 4
    assert sum(size for _, _, size in moved) <= 32 * dim * 4 + 32 * 8 + 64
    assert got.shape == (32, dim) and np.all((got >= 0) & (got < 1))
    np.testing.assert_array_equal(spot, np.concatenate(parts))


def test_sparse_training_step_on_cluster_updates_rows_on_ps(ps_cluster):
    spec, servers, config, transfers = ps_cluster
    rows, dim, lr = 200_000, 8, 0.5
    ids_value = np.array([3, 3, 150_000, 99_999, 100_000, 7])
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(cluster=spec,
                                                      worker_device="/job:worker/task:0")):
            emb = tf.get_variable("emb", [rows, dim], initializer=tf.random_uniform_initializer(),
                                  partitioner=tf.fixed_size_partitioner(2))
            ids = tf.placeholder(tf.int64, [None])
            looked_up = tf.nn.embedding_lookup(emb, ids, partition_strategy="div")
            loss = tf.reduce_sum(looked_up * looked_up)
            train = tf.train.AdagradOptimizer(lr).minimize(loss)
        unique = np.unique(ids_value)
        with tf.Session(servers[2].target, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(tf.nn.embedding_lookup(emb, unique, partition_strategy="div"))
            transfers.clear()
            sess.run(train, {ids: ids_value})
            moved = list(transfers)
            after = sess.run(tf.nn.embedding_lookup(emb, unique, partition_strategy="div"))
            neighbours = np.array([0, 1, 2, 4, 6, 8, 99_998, 100_001, 150_001])
            untouched = sess.run(tf.nn.embedding_lookup(emb, neighbours,
                                                        partition_strategy="div"))
            assert np.all((untouched >= 0) & (untouched < 1))  # never updated: still U[0, 1)
    counts = np.array([np.sum(ids_value == u) for u in unique])[:, None]
    grad = 2 * counts * before
    accumulator = 0.1 + grad ** 2
    np.testing.assert_allclose(after, before - lr * grad / np.sqrt(accumulator), rtol=1e-5,
                               atol=1e-6)
    row_bytes = len(ids_value) * dim * 4
    to_ps = sum(size for task, dest, size in moved if dest.startswith("/job:ps"))
    from_ps = sum(size for task, dest, size in moved if task.startswith("/job:ps"))
    assert from_ps == row_bytes  # the looked-up rows
    assert to_ps <= row_bytes + 2 * len(ids_value) * 8 + 64  # gradient rows, ids, lr
