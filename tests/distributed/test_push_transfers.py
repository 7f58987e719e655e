"""Transfers that need no RecvTensor call (distributed/push_plan.py), over real gRPC between
two servers of one process on 127.0.0.1: a PS partition that waits for nothing returns its
sends to the master's task with its RunGraph answer, feeds used only on the PS travel in the
RunGraphRequest, large and dead values still arrive, and a step whose PS partition waits for
the worker's values keeps pulling (waiting for the PS's answer there would deadlock)."""

import numpy as np
import pytest
from cluster_helpers import free_port

import tensorflux as tf
from tensorflux.distributed import worker as worker_mod
from tensorflux.ops.control_flow import primitives as control_flow_ops

PS = "/job:ps/task:0"
WORKER = "/job:worker/task:0"


def rpc_config():
    config = tf.ConfigProto(operation_timeout_in_ms=5000)
    config.rpc_options.use_rpc_for_inprocess_master = True
    return config


@pytest.fixture(scope="module")
def servers():
    spec = tf.train.ClusterSpec({"ps": [f"localhost:{free_port()}"],
                                 "worker": [f"localhost:{free_port()}"]})
    found = [tf.train.Server(spec, job, 0, config=rpc_config()) for job in ("ps", "worker")]
    yield found
    for server in found:
        server.stop()


@pytest.fixture
def traffic(servers):
    """{'pulled': [rendezvous keys served by RecvTensor], 'pushed': [names of pushed
    entries]} while the test runs."""
    seen = {"pulled": [], "pushed": []}
    originals = [server.worker.recv_tensor for server in servers]
    for server, serve in zip(servers, originals):
        def recording(request, respond, serve=serve):
            seen["pulled"].append(request.rendezvous_key)
            serve(request, respond)

        server.worker.recv_tensor = recording
    push_sends = worker_mod._push_sends

    def pushing(keys, rendezvous, response):
        push_sends(keys, rendezvous, response)
        seen["pushed"].extend(entry.name for entry in response.recv
                              if entry.name[:1] in "=!?")

    worker_mod._push_sends = pushing
    yield seen
    worker_mod._push_sends = push_sends
    for server, serve in zip(servers, originals):
        server.worker.recv_tensor = serve


def test_ps_reads_and_fed_lookups_need_no_recv_tensor(servers, traffic):
    table = np.arange(40, dtype=np.float32).reshape(10, 4)
    with tf.Graph().as_default():
        with tf.device(WORKER):
            ids = tf.placeholder(tf.int32, [None])
        with tf.device(PS):
            scalar = tf.Variable(1.0, name="push_scalar")
            emb = tf.Variable(table, name="push_table")
            rows = tf.gather(emb, ids)
            bump = scalar.assign_add(1.0)
        with tf.device(WORKER):
            read = tf.identity(scalar.value()) * 10.0
            looked_up = tf.identity(rows) + 0.5
        with tf.Session(servers[1].target, config=rpc_config()) as sess:
            sess.run([scalar.initializer, emb.initializer])
            traffic["pulled"].clear()
            for step in range(4):
                chosen = np.array([step, 9 - step, 3], np.int32)
                got_read, got_rows = sess.run([read, looked_up], {ids: chosen})
                assert got_read == 10.0 * (1 + step)  # a fresh value every step
                np.testing.assert_array_equal(got_rows, table[chosen] + 0.5)
                sess.run(bump)
            meta = tf.RunMetadata()
            sess.run(looked_up, {ids: [1]}, options=tf.RunOptions(output_partition_graphs=True),
                     run_metadata=meta)
    assert traffic["pulled"] == []
    assert sum(name.startswith("=") for name in traffic["pushed"]) >= 8
    ops = {g.node[0].device.split("/device")[0]: {n.op for n in g.node}
           for g in meta.partition_graphs}
    # The fed ids enter on the PS, which uses them; the worker sends nothing there.
    assert "_Arg" in ops["/job:ps/replica:0/task:0"]
    assert "_Send" not in ops["/job:worker/replica:0/task:0"]


def test_large_pushed_values_are_pulled(servers, traffic):
    value = np.random.RandomState(1).standard_normal(600_000).astype(np.float32)  # 2.4 MB
    with tf.Graph().as_default():
        with tf.device(PS):
            big = tf.Variable(value, name="push_big")
            small = tf.Variable(3.0, name="push_small")
        with tf.device(WORKER):
            both = [tf.identity(big.value()), tf.identity(small.value())]
        with tf.Session(servers[1].target, config=rpc_config()) as sess:
            sess.run([big.initializer, small.initializer])
            traffic["pulled"].clear()
            got_big, got_small = sess.run(both)
    np.testing.assert_array_equal(got_big, value)
    assert got_small == 3.0
    transfers = [key for key in traffic["pulled"] if ";_fetch_" not in key]
    assert len(transfers) == 1 and "push_big" in transfers[0], transfers  # the large one
    assert sum(name.startswith("?") for name in traffic["pushed"]) == 1


def test_dead_values_are_pushed_as_dead(servers, traffic):
    with tf.Graph().as_default():
        with tf.device(WORKER):
            x = tf.placeholder(tf.float32, [2])
            pred = tf.placeholder(tf.bool, [])
            if_false, if_true = control_flow_ops.switch(x, pred)
        with tf.device(PS):
            doubled = if_true * 2.0  # dead when pred is False
        with tf.device(WORKER):
            out, _ = control_flow_ops.merge([if_false - 1.0, doubled])
        data = np.array([1.0, 4.0], np.float32)
        with tf.Session(servers[1].target, config=rpc_config()) as sess:
            for flag, expected in ((True, data * 2), (False, data - 1), (True, data * 2)):
                np.testing.assert_array_equal(sess.run(out, {x: data, pred: flag}), expected)
    assert any(name.startswith("!") for name in traffic["pushed"])
    assert any(name.startswith("=") for name in traffic["pushed"])


def test_ps_waiting_for_the_worker_keeps_pulling(servers, traffic):
    # The PS's assign needs the worker's product of the PS's own value: were the read
    # returned only with the PS's RunGraph answer, the step could never end.
    with tf.Graph().as_default():
        with tf.device(PS):
            var = tf.Variable(2.0, name="push_cycle")
        with tf.device(WORKER):
            scaled = var.value() * 3.0
        with tf.device(PS):
            update = var.assign(scaled)
        with tf.Session(servers[1].target, config=rpc_config()) as sess:
            sess.run(var.initializer)
            traffic["pulled"].clear()
            assert sess.run(update) == 6.0
            assert sess.run(update) == 18.0
    assert traffic["pushed"] == []
    assert len(traffic["pulled"]) >= 4  # the read one way, the product the other, per step


def _adam_mlp(tf_module, spec=None):
    """An mnist_replica-shaped step (variables on the PS when `spec` is given)."""
    tf_module.set_random_seed(3)
    setter = tf_module.train.replica_device_setter(worker_device=WORKER, cluster=spec) \
        if spec is not None else None
    with tf_module.device(setter), tf_module.variable_scope("relay_mlp"):
        x = tf_module.placeholder(tf_module.float32, [8, 12])
        y = tf_module.placeholder(tf_module.int64, [8])
        hidden = tf_module.layers.dense(x, 6, activation=tf_module.nn.relu)
        logits = tf_module.layers.dense(hidden, 3)
        loss = tf_module.reduce_mean(tf_module.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits))
        step = tf_module.train.get_or_create_global_step()
        train = tf_module.train.AdamOptimizer(0.05).minimize(loss, global_step=step)
    return x, y, loss, step, train


def test_training_step_moves_only_parameters_and_gradients(servers, traffic):
    rng = np.random.RandomState(0)
    data = {"x": rng.rand(8, 12).astype(np.float32), "y": rng.randint(0, 3, 8)}
    runs = {}
    for where in ("local", "cluster"):
        with tf.Graph().as_default():
            spec = servers[0].cluster_spec if where == "cluster" else None
            x, y, loss, step, train = _adam_mlp(tf, spec)
            target = servers[1].target if where == "cluster" else ""
            with tf.Session(target, config=rpc_config()) as sess:
                sess.run(tf.global_variables_initializer())
                traffic["pulled"].clear()
                losses = [sess.run([loss, train], {x: data["x"], y: data["y"]})[0]
                          for _ in range(3)]
                pulled = len(traffic["pulled"])
                runs[where] = (losses, sess.run(step), pulled)
    # Same values; per step the PS sends 4 parameters and pulls 4 gradients, nothing else
    # (Adam's constants are copied, its update group runs on the PS).
    np.testing.assert_array_equal(runs["cluster"][0], runs["local"][0])
    assert runs["cluster"][1] == runs["local"][1] == 3
    assert runs["cluster"][2] == 3 * 8, runs["cluster"][2]
