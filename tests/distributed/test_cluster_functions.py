"""Function calls across a cluster: the master ships the graph's function library with each
registered partition, and the worker resolves the calls' func attrs from it."""

import numpy as np
import pytest
from cluster_helpers import make_cluster

import tensorflux as tf
from tensorflux.ops.control_flow import functional_control as fc


@pytest.fixture(params=["in-process", "grpc"])
def cluster(request):
    spec = make_cluster(ps=1, workers=1)
    config = tf.ConfigProto()
    config.rpc_options.use_rpc_for_inprocess_master = request.param == "grpc"
    servers = [tf.train.Server(spec, job, task, config=config)
               for job in ("ps", "worker") for task in spec.task_indices(job)]
    yield servers, config
    for server in servers:
        server.stop()


def test_function_calls_and_functional_loops_run_on_remote_tasks(cluster):
    servers, config = cluster
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0)
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [3])
            f = tf.function(lambda a: a * v + 1.0)
            y = f(x)
            _, total = fc.while_([tf.constant(0), tf.constant(0.0)], lambda i, s: i < 4,
                                 lambda i, s: (i + 1, s + tf.cast(i, tf.float32)))
        with tf.Session(servers[1].target, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            got, loop = sess.run([y, total], {x: [1.0, 2.0, 3.0]})
    np.testing.assert_allclose(got, [2.0, 3.0, 4.0])
    assert loop == 6.0
