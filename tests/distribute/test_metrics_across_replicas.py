"""tf.metrics under a two-replica MirroredStrategy: each replica updates its own component of
the ON_READ/SUM metric variables; the value, built once in cross-replica context, equals one
device's metric over the rows of both replicas (NumPy references where the metric is simple)."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.distribute import values as values_lib

TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2})
ROWS = 6  # per replica and step
STEPS = 3
rng = np.random.RandomState(7)
LABELS = rng.randint(0, 3, (STEPS, 2, ROWS)).astype(np.int64)
SCORES = rng.rand(STEPS, 2, ROWS).astype(np.float32)
WEIGHTS = rng.choice([0.0, 0.5, 1.0, 2.0], (STEPS, 2, ROWS)).astype(np.float32)


def _metrics(labels, scores, weights):
    binary = tf.cast(labels > 0, tf.int64)
    predicted = tf.cast(scores > 0.5, tf.int64)
    classes = tf.cast(tf.round(scores * 2.0), tf.int64)
    two_column = tf.stack([1.0 - scores, scores], 1)
    return {
        "mean": tf.metrics.mean(scores, weights),
        "accuracy": tf.metrics.accuracy(binary, predicted),
        "precision": tf.metrics.precision(binary, predicted, weights),
        "recall": tf.metrics.recall(binary, predicted),
        "rmse": tf.metrics.root_mean_squared_error(tf.cast(labels, tf.float32), scores),
        "auc": tf.metrics.auc(binary, scores, weights, num_thresholds=20),
        "pr_auc": tf.metrics.auc(binary, scores, curve="PR", num_thresholds=20,
                                 summation_method="careful_interpolation"),
        "mean_iou": tf.metrics.mean_iou(labels, classes, 3, weights),
        "per_class": tf.metrics.mean_per_class_accuracy(labels, classes, 3),
        "at_thresholds": tf.metrics.precision_at_thresholds(binary, scores, [0.25, 0.75]),
        "sensitivity": tf.metrics.sensitivity_at_specificity(binary, scores, 0.5,
                                                             num_thresholds=9),
        "cosine": tf.metrics.mean_cosine_distance(tf.reshape(scores, [-1, 1]),
                                                  tf.reshape(scores, [-1, 1]) * 0.5, 1),
        "recall_at_1": tf.metrics.recall_at_k(tf.reshape(binary, [-1, 1]), two_column, 1),
        "ap_at_2": tf.metrics.average_precision_at_k(tf.reshape(binary, [-1, 1]),
                                                     two_column, 2),
    }


def _placeholders():
    return (tf.placeholder(tf.int64, [ROWS]), tf.placeholder(tf.float32, [ROWS]),
            tf.placeholder(tf.float32, [ROWS]))


def _two_replicas():
    """(values, each replica's updates per step, graph, metric variables) of two replicas."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    graph = tf.Graph()
    with graph.as_default(), strategy.scope():
        feeds = [_placeholders() for _ in range(2)]
        per_replica = [values_lib.PerReplica([f[i] for f in feeds]) for i in range(3)]
        def replica_fn(labels, scores, weights):
            result = _metrics(labels, scores, weights)
            result["mean_tensor"] = tf.metrics.mean_tensor(tf.reshape(scores, [2, ROWS // 2]))
            return result

        result = strategy.extended.call_for_each_replica(replica_fn, args=tuple(per_replica))
        update = tf.group(*[strategy.group(u) for _, u in result.values()])
        values = {k: v for k, (v, _) in result.items()}
        init = tf.local_variables_initializer()
    with tf.Session(graph=graph, config=TWO_CPUS) as sess:
        sess.run(init)
        for step in range(STEPS):
            sess.run(update, {p: data[step, r] for r in range(2)
                              for p, data in zip(feeds[r], (LABELS, SCORES, WEIGHTS))})
        got = sess.run(values)
        sess.run(init)
        reset = sess.run(values["mean"])
    return got, reset, graph, result


def _one_device():
    graph = tf.Graph()
    with graph.as_default():
        feeds = (tf.placeholder(tf.int64, [2 * ROWS]), tf.placeholder(tf.float32, [2 * ROWS]),
                 tf.placeholder(tf.float32, [2 * ROWS]))
        result = _metrics(*feeds)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            for step in range(STEPS):
                sess.run([u for _, u in result.values()],
                         {p: data[step].reshape(-1)
                          for p, data in zip(feeds, (LABELS, SCORES, WEIGHTS))})
            return sess.run({k: v for k, (v, _) in result.items()})


@pytest.fixture(scope="module")
def both():
    return _two_replicas(), _one_device()


def test_values_equal_one_device_over_both_replicas_rows(both):
    (got, _, _, _), want = both
    assert sorted(got) == sorted(list(want) + ["mean_tensor"])
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-7, err_msg=key)


def test_simple_metrics_match_numpy(both):
    (got, _, _, _), _ = both
    binary, predicted = LABELS > 0, SCORES > 0.5
    np.testing.assert_allclose(got["mean"], (SCORES * WEIGHTS).sum() / WEIGHTS.sum(),
                               rtol=1e-5)
    np.testing.assert_allclose(got["accuracy"], (binary == predicted).mean(), rtol=1e-6)
    tp = (binary & predicted) * WEIGHTS
    np.testing.assert_allclose(got["precision"], tp.sum() / (predicted * WEIGHTS).sum(),
                               rtol=1e-5)
    np.testing.assert_allclose(got["recall"], (binary & predicted).sum() / binary.sum(),
                               rtol=1e-5)
    np.testing.assert_allclose(got["mean_tensor"],
                               SCORES.reshape(STEPS * 2, 2, ROWS // 2).mean(0), rtol=1e-5)
    np.testing.assert_allclose(got["rmse"], np.sqrt(((LABELS - SCORES) ** 2).mean()),
                               rtol=1e-5)


def test_each_replica_updates_its_own_component_and_the_value_is_one_tensor(both):
    (_, reset, graph, result), _ = both
    assert reset == 0.0  # local_variables_initializer resets every component
    value, update = result["mean"]
    assert isinstance(value, tf.Tensor)
    assert isinstance(update, values_lib.PerReplica) and len(update.values) == 2
    total = [v for v in graph.get_collection(tf.GraphKeys.METRIC_VARIABLES)
             if v.name == "mean/total:0"]
    assert len(total) == 1 and isinstance(total[0], values_lib.SyncOnReadVariable)
    assert [c.device for c in total[0].values] == [
        "/job:localhost/replica:0/task:0/device:CPU:0",
        "/job:localhost/replica:0/task:0/device:CPU:1"]
    assert total[0].synchronization == tf.VariableSynchronization.ON_READ
    assert total[0].aggregation == tf.VariableAggregation.SUM


def test_collections_get_the_value_once_and_each_replicas_update():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with tf.Graph().as_default() as graph, strategy.scope():
        x = values_lib.PerReplica([tf.constant([1.0, 2.0]), tf.constant([3.0, 5.0])])
        value, update = strategy.extended.call_for_each_replica(
            lambda v: tf.metrics.mean(v, metrics_collections=["values"],
                                      updates_collections=["updates"]), args=(x,))
        assert graph.get_collection("values") == [value]
        assert graph.get_collection("updates") == list(update.values)
        with tf.Session(config=TWO_CPUS) as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(value) == 0.0
            assert list(sess.run(update.values)) == [1.5, 4.0]  # each replica's own running
            np.testing.assert_allclose(sess.run(value), 11.0 / 4)


def test_without_a_strategy_metric_variables_stay_plain():
    with tf.Graph().as_default() as graph:
        tf.metrics.auc([True, False], [0.7, 0.2], num_thresholds=3)
        variables = graph.get_collection(tf.GraphKeys.METRIC_VARIABLES)
        assert len(variables) == 4
        assert not any(isinstance(v, values_lib.DistributedVariable) for v in variables)
        assert not [op for op in graph.get_operations()
                    if op.type == "AddN" or "replica" in op.name]


def test_central_storage_replicas_update_the_one_variable_to_the_same_values():
    strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
    labels = LABELS[0] > 0
    with tf.Graph().as_default(), strategy.scope():
        args = (values_lib.PerReplica([tf.constant(labels[r]) for r in range(2)]),
                values_lib.PerReplica([tf.constant(SCORES[0, r]) for r in range(2)]))
        result = strategy.extended.call_for_each_replica(
            lambda y, p: (tf.metrics.mean(p), tf.metrics.auc(y, p, num_thresholds=5)),
            args=args)
        with tf.Session(config=TWO_CPUS) as sess:
            sess.run(tf.local_variables_initializer())
            sess.run([strategy.group(update) for _, update in result])
            mean, auc = sess.run([value for value, _ in result])
    np.testing.assert_allclose(mean, SCORES[0].mean(), rtol=1e-6)
    with tf.Graph().as_default():
        value, update = tf.metrics.auc(labels.reshape(-1), SCORES[0].reshape(-1),
                                       num_thresholds=5)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run(update)
            np.testing.assert_allclose(auc, sess.run(value), rtol=1e-6)


def test_only_functions_of_across_replica_values_and_constants_count_as_such():
    from tensorflux.metrics.util import computed_from_across_replica_values

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with tf.Graph().as_default(), strategy.scope():
        x = values_lib.PerReplica([tf.placeholder(tf.float32, [2]) for _ in range(2)])

        def replica_fn(v):
            mean, _ = tf.metrics.mean(v)
            return (tf.maximum(mean, 1.0 - mean), mean + tf.reduce_sum(v),
                    mean * tf.random_uniform([]))

        derived, with_input, with_random = strategy.extended.call_for_each_replica(
            replica_fn, args=(x,))
        assert computed_from_across_replica_values(derived.values[1])
        assert not computed_from_across_replica_values(with_input.values[0])
        assert not computed_from_across_replica_values(with_random.values[0])
