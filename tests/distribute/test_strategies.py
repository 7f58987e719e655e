"""tf.distribute strategies in graph mode: replicas, merge_call, mirrored variables and
optimizers, against single-device training on the same data."""

import numpy as np
import pytest

import tensorflux as tf

TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2})
rng = np.random.RandomState(0)
X = rng.randn(8, 3).astype(np.float32)
Y = rng.randn(8, 1).astype(np.float32)


def _train(strategy, optimizer_fn, steps=3):
    """Losses, the weight's components and the global step after `steps` steps of a linear
    model on global batches of 8 rows (split among the replicas)."""
    graph = tf.Graph()
    with graph.as_default():
        with strategy.scope():
            w = tf.get_variable("w", initializer=tf.constant(np.ones((3, 1), np.float32)))
            optimizer = optimizer_fn()
            step = tf.train.get_or_create_global_step()
            data = tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(8)
            iterator = strategy.make_dataset_iterator(data)

            def replica_step(inputs):
                x, y = inputs
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
                with tf.control_dependencies([optimizer.minimize(loss, global_step=step)]):
                    return tf.identity(loss)

            losses = strategy.experimental_run_v2(replica_step, args=(iterator.get_next(),))
            mean_loss = strategy.reduce(tf.distribute.ReduceOp.MEAN, losses)
        with tf.Session(config=TWO_CPUS) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(iterator.initialize())
            out = [sess.run(mean_loss) for _ in range(steps)]
            components = [sess.run(c) for c in strategy.experimental_local_results(w)]
            names = sorted(v.name for v in tf.global_variables())
            return out, components, sess.run(step), names


def _numpy_adam(steps=3, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    w = np.ones((3, 1))
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    losses = []
    for t in range(1, steps + 1):
        residual = X @ w - Y
        losses.append(np.mean(residual ** 2))
        grad = 2 * X.T @ residual / len(X)
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad ** 2
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w = w - lr_t * m / (np.sqrt(v) + eps)
    return losses, w


@pytest.mark.parametrize("make", [
    lambda: tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]),
    lambda: tf.distribute.MirroredStrategy(),
    lambda: tf.distribute.OneDeviceStrategy("/cpu:0"),
    lambda: tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"]),
])
def test_synchronous_training_equals_one_device_adam(make):
    strategy = make()
    losses, components, step, names = _train(strategy, lambda: tf.train.AdamOptimizer(0.1))
    want_losses, want_w = _numpy_adam()
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    for component in components:
        np.testing.assert_allclose(component, want_w, rtol=1e-5)
    assert step == 3
    # Checkpoint names are those of the one-device graph: components of other devices are
    # not global variables of their own.
    assert names == ["beta1_power:0", "beta2_power:0", "global_step:0", "w/Adam:0",
                     "w/Adam_1:0", "w:0"]


def test_mirrored_components_live_on_their_devices():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with tf.Graph().as_default(), strategy.scope():
        v = tf.Variable(1.0, name="v")
        assert isinstance(v, tf.Variable)
        first, second = strategy.experimental_local_results(v)
        assert first.device.endswith("CPU:0") and second.device.endswith("CPU:1")
        assert (first.op.name, second.op.name) == ("v", "v/replica_1")
        assert v.name == "v:0" and strategy.extended.variable_created_in_scope(v)


def test_merge_call_and_all_reduce_across_replicas():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with tf.Graph().as_default():
        with strategy.scope():
            def replica_fn():
                context = tf.distribute.get_replica_context()
                value = tf.constant(float(context.replica_id_in_sync_group + 1))
                total = context.all_reduce(tf.distribute.ReduceOp.SUM, value)
                mean = context.all_reduce(tf.distribute.ReduceOp.MEAN, [value, 2 * value])

                def merge(strategy_arg, per_replica):
                    assert strategy_arg is strategy
                    assert tf.distribute.in_cross_replica_context()
                    return strategy_arg.reduce(tf.distribute.ReduceOp.SUM, per_replica)

                merged = context.merge_call(merge, args=(value * 10,))
                return value, total, mean, merged

            value, total, mean, merged = strategy.experimental_run_v2(replica_fn)
        with tf.Session(config=TWO_CPUS) as sess:
            got = sess.run([strategy.experimental_local_results(value),
                            strategy.experimental_local_results(total),
                            [strategy.experimental_local_results(m) for m in mean],
                            merged])
    assert got[0] == (1.0, 2.0)
    assert got[1] == (3.0, 3.0)
    assert got[2] == [(1.5, 1.5), (3.0, 3.0)]
    assert got[3] == 30.0


def test_reduce_over_an_axis_counts_every_element():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    with tf.Graph().as_default():
        with strategy.scope():
            dataset = tf.data.Dataset.from_tensors(data)
            iterator = strategy.experimental_distribute_dataset(
                dataset).make_initializable_iterator()
            batch = iterator.get_next()
            total = strategy.reduce("SUM", batch, axis=0)
            mean = strategy.reduce(tf.distribute.ReduceOp.MEAN, batch, axis=0)
            halves = strategy.experimental_local_results(batch)
        with tf.Session(config=TWO_CPUS) as sess:
            sess.run(iterator.initialize())
            got_total, got_mean, got_halves = sess.run([total, mean, halves])
    np.testing.assert_allclose(got_total, data.sum(0))
    np.testing.assert_allclose(got_mean, data.mean(0))
    np.testing.assert_allclose(got_halves[0], data[:3])
    np.testing.assert_allclose(got_halves[1], data[3:])


def test_a_global_batch_must_divide_among_replicas():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with tf.Graph().as_default(), strategy.scope():
        dataset = tf.data.Dataset.from_tensors(np.zeros((5, 2), np.float32))
        iterator = strategy.experimental_distribute_dataset(dataset).make_one_shot_iterator()
        with pytest.raises(ValueError, match="not divisible by the number of replicas 2"):
            iterator.get_next()


def test_mirrored_variable_assignments():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with tf.Graph().as_default():
        with strategy.scope():
            plain = tf.Variable(0.0, name="plain")
            mean = tf.Variable(0.0, name="mean", aggregation=tf.VariableAggregation.MEAN)
            cross = plain.assign(5.0)

            def assign_mean():
                replica = tf.distribute.get_replica_context().replica_id_in_sync_group
                return mean.assign(tf.constant(float(replica * 4 + 2)))

            assigned = strategy.experimental_run_v2(assign_mean)
            with pytest.raises(ValueError, match="aggregation method to update a "
                                                 "MirroredVariable"):
                strategy.experimental_run_v2(lambda: plain.assign(1.0))
        with tf.Session(config=TWO_CPUS) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(cross)
            assert [sess.run(c) for c in strategy.experimental_local_results(plain)] == [5, 5]
            sess.run(strategy.group(assigned))
            assert [sess.run(c) for c in strategy.experimental_local_results(mean)] == [4, 4]


def test_contexts_outside_inside_and_within_replicas():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with tf.Graph().as_default():
        default = tf.distribute.get_strategy()
        assert not tf.distribute.has_strategy()
        assert tf.distribute.get_replica_context().replica_id_in_sync_group == 0
        assert not tf.distribute.in_cross_replica_context()
        with strategy.scope():
            assert tf.distribute.get_strategy() is strategy and tf.distribute.has_strategy()
            assert tf.distribute.get_replica_context() is None
            assert tf.distribute.in_cross_replica_context()
            with strategy.scope():  # the same scope again changes nothing
                assert tf.distribute.get_strategy() is strategy
            with pytest.raises(ValueError, match="Mixing different"):
                with tf.distribute.OneDeviceStrategy("/cpu:0").scope():
                    pass
            ids = strategy.experimental_run_v2(
                lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
            assert strategy.experimental_local_results(ids) == (0, 1)

            def enter_scope_in_replica():
                with strategy.scope():
                    pass

            with pytest.raises(RuntimeError, match="cross-replica context"):
                strategy.experimental_run_v2(enter_scope_in_replica)
        assert tf.distribute.get_strategy() is default


def test_variables_created_in_a_replica_function_are_shared():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with tf.Graph().as_default():
        with strategy.scope():
            def replica_fn():
                a = tf.Variable(3.0, name="a")
                b = tf.get_variable("b", initializer=tf.constant(4.0))
                return a, b, a * b

            a, b, product = strategy.experimental_run_v2(replica_fn)
            assert isinstance(a, tf.Variable) and len(strategy.experimental_local_results(a)) == 2
        with tf.Session(config=TWO_CPUS) as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(list(strategy.experimental_local_results(product))) == [12, 12]
        names = sorted(op.name for op in tf.get_default_graph().get_operations()
                       if op.type == "VariableV2")
    assert names == ["a", "a/replica_1", "b", "b/replica_1"]


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="cannot be empty"):
        tf.distribute.MirroredStrategy([])
    with pytest.raises(ValueError, match="No duplicates"):
        tf.distribute.MirroredStrategy(["/cpu:0", "/device:CPU:0"])
    with pytest.raises(ValueError, match="cross_device_ops"):
        tf.distribute.MirroredStrategy(cross_device_ops="nccl")
    strategy = tf.distribute.MirroredStrategy()
    with tf.Graph().as_default(), strategy.scope():
        with pytest.raises(ValueError, match="`NONE` variable synchronization"):
            tf.Variable(1.0, name="v", synchronization=tf.VariableSynchronization.NONE)
        with pytest.raises(ValueError, match="reduce_op"):
            strategy.reduce("MAX", tf.constant(1.0))


def test_saver_restores_every_component(tmp_path):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with tf.Graph().as_default():
        with strategy.scope():
            v = tf.Variable([1.0, 2.0], name="v")
            change = v.assign([7.0, 8.0])
        saver = tf.train.Saver()
        with tf.Session(config=TWO_CPUS) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(change)
            path = saver.save(sess, str(tmp_path / "model"))
        with tf.Session(config=TWO_CPUS) as sess:
            saver.restore(sess, path)
            for component in strategy.experimental_local_results(v):
                np.testing.assert_allclose(sess.run(component), [7.0, 8.0])
    # The checkpoint holds one entry, under the variable's own name.
    assert sorted(name for name, _ in tf.train.list_variables(path)) == ["v"]


def test_strategy_survives_deepcopy_as_runconfig_replace_does():
    import copy

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    copied = copy.deepcopy(strategy)
    assert copied.extended._container_strategy() is copied
    assert copied.extended.worker_devices == strategy.extended.worker_devices


def test_multi_worker_mirrored_reads_its_workers_from_tf_config(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2"]},'
                                    ' "task": {"type": "worker", "index": 1}}')
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    assert strategy.num_replicas_in_sync == 2
    assert strategy.extended.worker_devices == ("/job:worker/replica:0/task:1/device:CPU:0",)
    assert strategy.extended.experimental_between_graph
    assert not strategy.extended.should_checkpoint  # worker 0 is the chief
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["127.0.0.1:1"], '
                                    '"ps": ["127.0.0.1:2"]}, "task": {"type": "worker", '
                                    '"index": 0}}')
    single = tf.distribute.experimental.MultiWorkerMirroredStrategy()  # one worker: local
    assert single.num_replicas_in_sync == 1
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2"], '
                                    '"ps": ["127.0.0.1:3"]}, "task": {"type": "worker", '
                                    '"index": 0}}')
    with pytest.raises(ValueError, match="ps tasks"):
        tf.distribute.experimental.MultiWorkerMirroredStrategy()
    monkeypatch.delenv("TF_CONFIG")
    single = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    assert single.num_replicas_in_sync == 1


def test_parameter_server_strategy_places_variables_on_ps_tasks(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"ps": ["127.0.0.1:1", "127.0.0.1:2"], '
                                    '"worker": ["127.0.0.1:3"]}, '
                                    '"task": {"type": "worker", "index": 0}}')
    strategy = tf.distribute.experimental.ParameterServerStrategy()
    assert strategy.extended.experimental_between_graph
    with tf.Graph().as_default(), strategy.scope():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
    assert "/job:ps/" in a.device and "task:0" in a.device
    assert "/job:ps/" in b.device and "task:1" in b.device
    monkeypatch.delenv("TF_CONFIG")
    local = tf.distribute.experimental.ParameterServerStrategy()
    assert not local.extended.experimental_between_graph


def test_contrib_mirrored_strategy_takes_per_replica_batches():
    strategy = tf.contrib.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    assert isinstance(strategy, tf.distribute.MirroredStrategy)
    data = np.arange(8, dtype=np.float32).reshape(4, 2)
    with tf.Graph().as_default():
        with strategy.scope():
            iterator = strategy.make_dataset_iterator(
                tf.data.Dataset.from_tensor_slices(data).batch(2))
            parts = strategy.experimental_local_results(iterator.get_next())
        with tf.Session(config=TWO_CPUS) as sess:
            sess.run(iterator.initialize())
            first, second = sess.run(parts)
    # Each replica takes a whole batch of its own (which one runs first is not fixed).
    got = sorted([first.tolist(), second.tolist()])
    assert got == [data[:2].tolist(), data[2:].tolist()]
    with pytest.raises(ValueError, match="no GPU"):
        tf.contrib.distribute.MirroredStrategy(num_gpus=2)
    config = tf.estimator.RunConfig(experimental_distribute=tf.contrib.distribute.DistributeConfig(
        train_distribute=strategy))
    assert config.train_distribute is strategy
