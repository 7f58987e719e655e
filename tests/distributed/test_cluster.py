"""The distributed runtime: clusters of servers in one process (in-process and gRPC transports)
and across processes on 127.0.0.1, with failures reported by task."""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from cluster_helpers import make_cluster

import tensorflux as tf


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


def test_cluster_spec_api():
    spec = tf.train.ClusterSpec({"ps": ["a:1"], "worker": {0: "b:2", 2: "c:3"}})
    assert spec.jobs == ["ps", "worker"]
    assert spec.num_tasks("worker") == 2 and spec.task_indices("worker") == [0, 2]
    assert spec.task_address("worker", 2) == "c:3"
    assert spec.job_tasks("worker") == ["b:2", None, "c:3"]
    assert spec.as_dict() == {"ps": ["a:1"], "worker": {0: "b:2", 2: "c:3"}}
    assert tf.train.ClusterSpec(spec.as_cluster_def()) == spec
    with pytest.raises(ValueError):
        spec.task_address("chief", 0)


def _regression(ps_device, worker_device):
    with tf.device(ps_device):
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
    with tf.device(worker_device):
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 1])
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return x, y, w, loss, train


DATA_X = np.random.RandomState(0).rand(32, 3).astype(np.float32)
DATA_Y = DATA_X @ np.array([[1.0], [-1.0], [0.5]], np.float32) + 0.25


def _local_losses(steps):
    with tf.Graph().as_default():
        x, y, w, loss, train = _regression("", "")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return [sess.run([loss, train], {x: DATA_X, y: DATA_Y})[0] for _ in range(steps)]


def test_training_across_tasks_matches_one_process(cluster):
    spec, servers, config = cluster
    with tf.Graph().as_default():
        x, y, w, loss, train = _regression("/job:ps/task:0", "/job:worker/task:1")
        with tf.Session(servers[1].target, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {x: DATA_X, y: DATA_Y})[0] for _ in range(20)]
    np.testing.assert_allclose(losses, _local_losses(20), rtol=1e-5)


def test_between_graph_replication_shares_ps_variables(cluster):
    spec, servers, config = cluster
    graphs = []
    for task in range(2):
        graph = tf.Graph()
        with graph.as_default():
            x, y, w, loss, train = _regression(
                "/job:ps/task:0", f"/job:worker/task:{task}")
            init = tf.global_variables_initializer()
        graphs.append((graph, x, y, w, loss, train, init))
    sessions = [tf.Session(servers[1 + i].target, graph=g[0], config=config)
                for i, g in enumerate(graphs)]
    try:
        sessions[0].run(graphs[0][6])
        for step in range(10):
            g = graphs[step % 2]
            sessions[step % 2].run(g[5], {g[1]: DATA_X, g[2]: DATA_Y})
        w_first = sessions[0].run(graphs[0][3])
        w_second = sessions[1].run(graphs[1][3])
        np.testing.assert_array_equal(w_first, w_second)
        final = sessions[1].run(graphs[1][4], {graphs[1][1]: DATA_X, graphs[1][2]: DATA_Y})
        assert np.isclose(final, _local_losses(11)[-1], rtol=1e-5)
    finally:
        for sess in sessions:
            sess.close()


def test_remote_kernel_error_names_op_and_task(cluster):
    spec, servers, config = cluster
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:1"):
            a = tf.placeholder(tf.float32, [None, None])
            bad = tf.matmul(a, a, name="bad_matmul")
        with tf.Session(servers[1].target, config=config) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(bad, {a: np.ones((2, 3), np.float32)})
    assert "bad_matmul" in str(info.value) and "/job:worker" in str(info.value)


def test_unreachable_task_is_unavailable_within_deadline():
    spec = make_cluster(ps=1, workers=1)
    config = tf.ConfigProto(operation_timeout_in_ms=1000)
    worker = tf.train.Server(spec, "worker", 0, config=config)
    try:
        with tf.Graph().as_default():
            v = tf.Variable(1.0)
            start = time.monotonic()
            with tf.Session(worker.target, config=config) as sess:
                with pytest.raises(tf.errors.UnavailableError) as info:
                    sess.run(v.initializer)
            assert time.monotonic() - start < 8
        assert "/job:ps/replica:0/task:0" in str(info.value)
        assert spec.task_address("ps", 0) in str(info.value)
    finally:
        worker.stop()


def test_reset_clears_containers():
    server = tf.train.Server.create_local_server()
    try:
        with tf.Graph().as_default():
            with tf.container("experiment"):
                v = tf.Variable(5.0, name="v")
            with tf.Session(server.target) as sess:
                sess.run(v.initializer)
                assert sess.run(v) == 5.0
            tf.Session.reset(server.target, ["experiment"])
            with tf.Session(server.target) as sess:
                with pytest.raises(tf.errors.FailedPreconditionError):
                    sess.run(v)
    finally:
        server.stop()


def _spawn(spec, job, task):
    return subprocess.Popen(
        [sys.executable, "-m", "tensorflux.cli", "server", "--cluster-json",
         json.dumps(spec.as_dict()), "--job", job, "--task", str(task)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait_ready(proc):
    line = proc.stdout.readline()
    assert "serving at" in line, line


def test_killed_ps_process_is_reported_by_name():
    spec = make_cluster(ps=1, workers=1)
    ps = _spawn(spec, "ps", 0)
    worker = tf.train.Server(spec, "worker", 0)
    try:
        _wait_ready(ps)
        with tf.Graph().as_default():
            x, y, w, loss, train = _regression("/job:ps/task:0", "/job:worker/task:0")
            with tf.Session(worker.target) as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(train, {x: DATA_X, y: DATA_Y})
                ps.kill()
                ps.wait(timeout=10)
                start = time.monotonic()
                with pytest.raises((tf.errors.UnavailableError, tf.errors.AbortedError)) as info:
                    for _ in range(5):
                        sess.run(train, {x: DATA_X, y: DATA_Y})
                assert time.monotonic() - start < 15
        assert "/job:ps/replica:0/task:0" in str(info.value)
    finally:
        worker.stop()
        if ps.poll() is None:
            ps.kill()
        ps.wait(timeout=10)


def test_shutdown_cluster_stops_server_processes():
    spec = make_cluster(ps=1, workers=0)
    ps = _spawn(spec, "ps", 0)
    try:
        _wait_ready(ps)
        from tensorflux.distributed.server import shutdown_cluster

        shutdown_cluster(spec)
        assert ps.wait(timeout=15) == 0
    finally:
        if ps.poll() is None:
            ps.kill()
            ps.wait(timeout=10)


def test_cluster_command_runs_workers(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(
        "import json, os\n"
        "import tensorflux as tf\n"
        "cluster = json.loads(os.environ['TFX_CLUSTER'])\n"
        "task = int(os.environ['TFX_TASK_INDEX'])\n"
        "target = 'grpc://' + cluster['worker'][task]\n"
        "with tf.device('/job:ps/task:0'):\n"
        "    v = tf.Variable(0.0, name='counter')\n"
        "with tf.Session(target) as sess:\n"
        "    sess.run(tf.assign_add(v, 1.0) if sess.run(tf.is_variable_initialized(v)) "
        "else v.initializer)\n"
        "print('ok', task)\n")
    result = subprocess.run([sys.executable, "-m", "tensorflux.cli", "cluster", "--ps", "1",
                             "--workers", "2", "--", sys.executable, str(script)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    assert "ok 0" in result.stdout and "ok 1" in result.stdout


del os
