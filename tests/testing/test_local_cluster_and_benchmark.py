"""`tf.test.create_local_cluster` runs steps across ps and worker tasks; `tf.test.Benchmark`."""

import os
import time

import numpy as np
import pytest

import tensorflux as tf


def test_local_cluster_runs_a_step_on_ps_and_worker_devices():
    workers, ps_servers = tf.test.create_local_cluster(num_workers=2, num_ps=1)
    try:
        assert len(workers) == 2 and len(ps_servers) == 1
        addresses = {s.target for s in workers + ps_servers}
        assert len(addresses) == 3
        assert all(t.startswith("grpc://localhost:") and not t.endswith(":0") for t in addresses)
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable([1.0, 2.0], name="v")
            with tf.device("/job:worker/task:1"):
                doubled = v * 2.0
                update = v.assign_add([10.0, 10.0])
            with tf.Session(workers[0].target) as sess:
                sess.run(v.initializer)
                np.testing.assert_allclose(sess.run(doubled), [2.0, 4.0])
                sess.run(update)
            # The variable lives on the ps task: a session through the other worker sees it.
            with tf.Session(workers[1].target) as sess:
                np.testing.assert_allclose(sess.run(v), [11.0, 12.0])
    finally:
        for server in workers + ps_servers:
            server.stop()


def test_local_cluster_rejects_bad_sizes():
    with pytest.raises(ValueError, match="num_workers >= 1"):
        tf.test.create_local_cluster(0, 1)


def test_benchmark_times_and_reports():
    class Bench(tf.test.Benchmark):
        pass

    bench = Bench()
    with tf.Graph().as_default():
        x = tf.constant(np.ones((4, 4), np.float32))
        y = tf.matmul(x, x)
        with tf.Session() as sess:
            start = time.perf_counter()
            values = bench.run_op_benchmark(sess, y, burn_iters=1, min_iters=3, mbs=2,
                                            extras={"size": 4})
            elapsed = time.perf_counter() - start
    assert values["iters"] == 3
    assert values["name"] == "Bench"
    assert 0 < values["wall_time"] <= elapsed
    assert values["throughput"] == pytest.approx(2 / values["wall_time"])
    assert bench.reported[-1]["extras"] == {"size": 4}
    entry = bench.report_benchmark(iters=5, wall_time=0.25, name="manual")
    assert entry["name"] == "manual" and bench.reported[-1] is entry
    with pytest.raises(ValueError, match="min_iters"):
        bench.run_op_benchmark(None, y, min_iters=0)


def test_namespace_helpers():
    assert tf.test.mock.MagicMock()() is not None
    assert not tf.test.is_built_with_gpu_support() and not tf.test.is_built_with_rocm()
    path = tf.test.test_src_dir_path("tensorflux/test.py")
    assert os.path.isfile(path)
    assert os.path.isdir(tf.test.get_temp_dir())
    assert isinstance(tf.test.benchmark_config(), tf.ConfigProto)


def test_assert_equal_graph_def():
    with tf.Graph().as_default() as g1:
        tf.constant(1.0, name="a")
    with tf.Graph().as_default() as g2:
        tf.constant(1.0, name="a")
    with tf.Graph().as_default() as g3:
        tf.constant(2.0, name="a")
        tf.constant(2.0, name="b")
    tf.test.assert_equal_graph_def(g1.as_graph_def(), g2.as_graph_def())
    with pytest.raises(AssertionError, match=r"unexpected nodes: \['b'\][\s\S]*node 'a' differs"):
        tf.test.assert_equal_graph_def(g1.as_graph_def(), g3.as_graph_def())
    with pytest.raises(TypeError, match="GraphDef"):
        tf.test.assert_equal_graph_def("x", g1.as_graph_def())
