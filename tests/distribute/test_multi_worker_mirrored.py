"""MultiWorkerMirroredStrategy (and contrib's CollectiveAllReduceStrategy) across workers:
loopback servers in this process, one graph and session per worker; each step's variables
equal on every worker and equal to one-device training on the union of the batches (NumPy)."""

import json
import os
import threading

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.distribute.cluster_resolver import SimpleClusterResolver
from tests.distributed.cluster_helpers import free_port

B = 4


def _cluster(n):
    return tf.train.ClusterSpec({"worker": [f"localhost:{free_port()}" for _ in range(n)]})


def _in_threads(n, work, timeout=8.0):
    results, failures = {}, []

    def run(i):
        try:
            results[i] = work(i)
        except Exception as err:  # noqa: BLE001 - re-raised in the test's thread
            failures.append(err)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not any(t.is_alive() for t in threads), "a worker hung"
    if failures:
        raise failures[0]
    return results


@pytest.fixture
def servers(request):
    cluster = _cluster(request.param)
    started = [tf.train.Server(cluster, "worker", i) for i in range(request.param)]
    yield started
    for server in started:
        server.stop()


def _data(steps, workers, seed=0):
    rs = np.random.RandomState(seed)
    return (rs.randn(steps, workers, B, 3).astype(np.float32),
            rs.randn(steps, workers, B, 1).astype(np.float32))


def _train_linear(servers, strategies, x_data, y_data, optimizer_fn):
    """Each worker trains w, b on its own batches; returns {worker: [values after each
    step, starting with the initial values]} and the workers' reduced losses."""

    def work(i):
        strategy = strategies[i]
        with tf.Graph().as_default():
            tf.set_random_seed(100 + i)  # different draws: the chief's are broadcast
            with strategy.scope():
                x = tf.placeholder(tf.float32, [B, 3])
                y = tf.placeholder(tf.float32, [B, 1])

                def step():
                    w = tf.get_variable("w", [3, 1])
                    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
                    loss = tf.losses.mean_squared_error(y, tf.matmul(x, w) + b)
                    return optimizer_fn().minimize(loss), loss

                train, loss = strategy.extended.call_for_each_replica(step)
                train = strategy.group(train)
                mean_loss = strategy.reduce(tf.distribute.ReduceOp.MEAN, loss)
                init = tf.global_variables_initializer()
            variables = [v for v in tf.global_variables() if v.op.name in ("w", "b")]
            config = strategy.update_config_proto(tf.ConfigProto())
            with tf.Session(servers[i].target, config=config) as sess:
                sess.run(init)
                history, losses = [sess.run(variables)], []
                for k in range(len(x_data)):
                    _, value = sess.run([train, mean_loss], {x: x_data[k, i], y: y_data[k, i]})
                    losses.append(value)
                    history.append(sess.run(variables))
            return history, losses

    return _in_threads(len(servers), work)


def _strategies(servers, cls=None):
    cluster = servers[0].cluster_spec if len(servers) == 1 else tf.train.ClusterSpec(
        {"worker": [s.cluster_spec.task_address("worker", i) for i, s in enumerate(servers)]})
    return [tf.distribute.experimental.MultiWorkerMirroredStrategy(
        cluster_resolver=SimpleClusterResolver(cluster, task_type="worker", task_id=i))
        for i in range(len(servers))]


@pytest.mark.parametrize("servers", [2], indirect=True)
def test_two_workers_train_as_one_device_on_the_union_of_batches(servers):
    x_data, y_data = _data(3, 2)
    strategies = _strategies(servers)
    assert strategies[0].num_replicas_in_sync == 2
    results = _train_linear(servers, strategies, x_data, y_data,
                            lambda: tf.train.GradientDescentOptimizer(0.1))
    w, b = results[0][0][0]
    for k in range(3):
        for i in range(2):  # equal on both workers, bit for bit
            np.testing.assert_array_equal(results[i][0][k][0], results[0][0][k][0])
            np.testing.assert_array_equal(results[i][0][k][1], results[0][0][k][1])
        xx, yy = x_data[k].reshape(-1, 3), y_data[k].reshape(-1, 1)
        err = xx @ w + b - yy
        np.testing.assert_allclose(results[0][1][k], np.mean(err ** 2), rtol=1e-5)
        w = w - 0.1 * 2 * xx.T @ err / len(xx)
        b = b - 0.1 * 2 * err.sum(0) / len(xx)
        np.testing.assert_allclose(results[0][0][k + 1][0], w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(results[1][0][k + 1][1], b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("servers", [3], indirect=True)
def test_three_workers_with_adam_equal_numpy_adam(servers):
    x_data, y_data = _data(3, 3, seed=1)
    lr, beta1, beta2, eps = 0.05, 0.9, 0.999, 1e-8
    results = _train_linear(servers, _strategies(servers), x_data, y_data,
                            lambda: tf.train.AdamOptimizer(lr, beta1, beta2, eps))
    w, b = (np.array(v, np.float64) for v in results[0][0][0])
    m = [np.zeros_like(w), np.zeros_like(b)]
    v = [np.zeros_like(w), np.zeros_like(b)]
    for k in range(3):
        xx, yy = x_data[k].reshape(-1, 3), y_data[k].reshape(-1, 1)
        err = xx @ w + b - yy
        grads = [2 * xx.T @ err / len(xx), 2 * err.sum(0) / len(xx)]
        t = k + 1
        rate = lr * np.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        params = [w, b]
        for j in range(2):
            m[j] = beta1 * m[j] + (1 - beta1) * grads[j]
            v[j] = beta2 * v[j] + (1 - beta2) * grads[j] ** 2
            params[j] = params[j] - rate * m[j] / (np.sqrt(v[j]) + eps)
        w, b = params
        for i in range(3):
            np.testing.assert_array_equal(results[i][0][k + 1][0], results[0][0][k + 1][0])
            np.testing.assert_allclose(results[i][0][k + 1][0], w, rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose(results[i][0][k + 1][1], b, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("servers", [2], indirect=True)
def test_contrib_collective_all_reduce_strategy_from_tf_config(servers, monkeypatch):
    addresses = [s.cluster_spec.task_address("worker", i) for i, s in enumerate(servers)]
    strategies = []
    for i in range(2):
        monkeypatch.setenv("TF_CONFIG", json.dumps(
            {"cluster": {"worker": addresses}, "task": {"type": "worker", "index": i}}))
        strategies.append(tf.contrib.distribute.CollectiveAllReduceStrategy(
            num_gpus_per_worker=0))
    monkeypatch.delenv("TF_CONFIG")
    assert [s.extended.should_checkpoint for s in strategies] == [True, False]
    x_data, y_data = _data(2, 2, seed=2)
    results = _train_linear(servers, strategies, x_data, y_data,
                            lambda: tf.train.GradientDescentOptimizer(0.2))
    w, b = results[0][0][0]
    for k in range(2):
        xx, yy = x_data[k].reshape(-1, 3), y_data[k].reshape(-1, 1)
        err = xx @ w + b - yy
        w = w - 0.2 * 2 * xx.T @ err / len(xx)
        b = b - 0.2 * 2 * err.sum(0) / len(xx)
    for i in range(2):
        np.testing.assert_allclose(results[i][0][-1][0], w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(results[i][0][-1][1], b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("jobs", [("worker", "worker"), ("chief", "worker")])
def test_estimator_train_and_evaluate_on_two_workers(tmp_path, monkeypatch, jobs):
    """A cluster of workers (worker 0 is the chief) and TF's chief + worker layout; each
    worker reads the shard of its rank (input_context)."""
    steps = 3
    x_data, y_data = _data(steps, 2, seed=3)
    tasks = [(jobs[0], 0), (jobs[1], 0 if jobs[0] != jobs[1] else 1)]
    cluster = {}
    for job, _ in tasks:
        cluster.setdefault(job, []).append(f"localhost:{free_port()}")
    model_dir = str(tmp_path / "model")

    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [3, 1], initializer=tf.ones_initializer())
        loss = tf.losses.mean_squared_error(labels, tf.matmul(features, w))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train)

    def input_fn(input_context=None):
        i = input_context.input_pipeline_id
        return tf.data.Dataset.from_tensor_slices((x_data[:, i], y_data[:, i]))

    estimators = []
    for i, (job, index) in enumerate(tasks):
        monkeypatch.setenv("TF_CONFIG", json.dumps(
            {"cluster": cluster, "task": {"type": job, "index": index}}))
        config = tf.estimator.RunConfig(
            model_dir=model_dir, save_checkpoints_steps=steps,
            train_distribute=tf.distribute.experimental.MultiWorkerMirroredStrategy())
        assert config.is_chief == (i == 0)
        estimators.append(tf.estimator.Estimator(model_fn, config=config))
    monkeypatch.delenv("TF_CONFIG")
    train_spec = tf.estimator.TrainSpec(input_fn, max_steps=steps)
    eval_spec = tf.estimator.EvalSpec(input_fn)
    _in_threads(2, lambda i: tf.estimator.train_and_evaluate(estimators[i], train_spec,
                                                             eval_spec))
    w = np.ones((3, 1), np.float32)
    for k in range(steps):
        xx, yy = x_data[k].reshape(-1, 3), y_data[k].reshape(-1, 1)
        w = w - 0.1 * 2 * xx.T @ (xx @ w - yy) / len(xx)
    # The chief (the first task) wrote the checkpoints, at steps 0 and 3.
    assert tf.train.load_variable(model_dir, "global_step") == steps
    np.testing.assert_allclose(tf.train.load_variable(model_dir, "w"), w, rtol=1e-5)
    assert sorted(f for f in os.listdir(model_dir) if f.endswith(".index")) == [
        "model.ckpt-0.index", f"model.ckpt-{steps}.index"]


def test_a_task_outside_the_cluster_is_refused():
    cluster = tf.train.ClusterSpec({"worker": ["localhost:1", "localhost:2"]})
    with pytest.raises(ValueError, match="not a chief or worker task"):
        tf.distribute.experimental.MultiWorkerMirroredStrategy(
            cluster_resolver=SimpleClusterResolver(cluster, task_type="evaluator", task_id=0))


def test_configure_sets_the_cluster_and_the_session_config():
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    assert strategy.num_replicas_in_sync == 1
    config = tf.ConfigProto()
    strategy.configure(config, {"chief": ["localhost:1"], "worker": ["localhost:2"]},
                       task_type="worker", task_id=0)
    assert strategy.num_replicas_in_sync == 2
    assert not strategy.extended.should_checkpoint  # the chief task is the chief
    assert list(config.device_filters) == ["/job:worker/replica:0/task:0"]
    assert config.experimental.collective_group_leader == "/job:chief/replica:0/task:0"
