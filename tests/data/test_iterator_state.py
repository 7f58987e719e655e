"""Saving and restoring tf.data iterator positions (make_saveable_from_iterator, the
SerializeIterator / DeserializeIterator ops, CheckpointInputPipelineHook) and RandomDataset.

Each restore test runs the pipeline uninterrupted, saves after k elements, restores in a new
graph and session, and checks the next elements equal the uninterrupted run's."""

import json
import os

import numpy as np
import pytest

import tensorflux as tf

COVERED_OPS = {"SerializeIterator", "DeserializeIterator"}
GRADIENT_CASES = []


def _pipelines():
    def interleave():
        return tf.data.Dataset.range(6).interleave(
            lambda x: tf.data.Dataset.range(3).map(lambda y: x * 10 + y), cycle_length=2,
            block_length=2)

    return {
        "range": lambda: tf.data.Dataset.range(3, 40, 2),
        "map": lambda: tf.data.Dataset.range(30).map(lambda x: (x * x, tf.cast(x, tf.float32))),
        "shuffle_seeded": lambda: tf.data.Dataset.range(30).shuffle(7, seed=3).repeat(3),
        "shuffle_unseeded": lambda: tf.data.Dataset.range(30).shuffle(7).repeat(3),
        "batch": lambda: tf.data.Dataset.range(63).batch(4),
        "repeat": lambda: tf.data.Dataset.range(5).repeat(),
        "interleave": interleave,
        "shuffle_map_batch": lambda: tf.data.Dataset.range(50).shuffle(50).map(
            lambda x: x + 1).batch(3).repeat(),
        "map_random_seeded": lambda: tf.data.Dataset.range(40).map(
            lambda x: tf.random_uniform([2], seed=4) + tf.cast(x, tf.float32)),
        "random": lambda: tf.data.experimental.RandomDataset(),
        "sample": lambda: tf.data.experimental.sample_from_datasets(
            [tf.data.Dataset.range(100), tf.data.Dataset.range(100, 200)]),
    }


def _same(a, b):
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b))
    return np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b)


def _build(make, one_shot=False):
    ds = make()
    it = ds.make_one_shot_iterator() if one_shot else ds.make_initializable_iterator()
    tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS,
                         tf.data.experimental.make_saveable_from_iterator(it))
    return it, it.get_next(), tf.train.Saver()


@pytest.mark.parametrize("name", sorted(_pipelines()))
@pytest.mark.parametrize("one_shot", [False, True])
def test_restore_continues_the_uninterrupted_run(tmp_path, name, one_shot):
    make = _pipelines()[name]
    k, n = 5, 9
    with tf.Graph().as_default():
        it, nxt, saver = _build(make, one_shot)
        with tf.Session() as sess:
            if not one_shot:
                sess.run(it.initializer)
            first = [sess.run(nxt) for _ in range(k)]
            path = saver.save(sess, str(tmp_path / "it"))
            expected = [sess.run(nxt) for _ in range(n)]
    with tf.Graph().as_default():
        it, nxt, saver = _build(make, one_shot)
        with tf.Session() as sess:
            saver.restore(sess, path)
            got = [sess.run(nxt) for _ in range(n)]
    assert all(_same(a, b) for a, b in zip(expected, got)), (expected, got)
    assert len(first) == k


def test_restore_uses_the_saved_fed_values_and_ends_where_the_run_ends(tmp_path):
    def build():
        x = tf.placeholder(tf.float32, [None])
        ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v * 2.0)
        it = ds.make_initializable_iterator()
        saveable = tf.data.experimental.make_saveable_from_iterator(it)
        return x, it, it.get_next(), tf.train.Saver([saveable])

    with tf.Graph().as_default():
        x, it, nxt, saver = build()
        with tf.Session() as sess:
            sess.run(it.initializer, {x: [0.5, 1.5, 2.5, np.nan]})
            assert sess.run(nxt) == 1.0
            path = saver.save(sess, str(tmp_path / "fed"))
    with tf.Graph().as_default():
        x, it, nxt, saver = build()
        with tf.Session() as sess:
            saver.restore(sess, path)  # no feed: the saved value of `x` is restored
            assert sess.run(nxt) == 3.0 and sess.run(nxt) == 5.0
            assert np.isnan(sess.run(nxt))
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(nxt)


def test_string_captures_round_trip(tmp_path):
    def build():
        names = tf.placeholder(tf.string, [None])
        it = tf.data.Dataset.from_tensor_slices(names).make_initializable_iterator()
        saveable = tf.data.experimental.make_saveable_from_iterator(it)
        return names, it, it.get_next(), tf.train.Saver([saveable])

    with tf.Graph().as_default():
        names, it, nxt, saver = build()
        with tf.Session() as sess:
            sess.run(it.initializer, {names: ["a", "bé", ""]})
            sess.run(nxt)
            path = saver.save(sess, str(tmp_path / "s"))
    with tf.Graph().as_default():
        names, it, nxt, saver = build()
        with tf.Session() as sess:
            saver.restore(sess, path)
            assert [sess.run(nxt), sess.run(nxt)] == ["bé".encode(), b""]


def test_raw_ops_serialize_then_deserialize_rewinds():
    it = tf.data.Dataset.range(20).shuffle(20).make_initializable_iterator()
    nxt = it.get_next()
    state = tf.raw_ops.SerializeIterator(resource_handle=it._handle)
    assert state.dtype == tf.string and state.shape.as_list() == []
    fed = tf.placeholder(tf.string, [])
    restore = tf.raw_ops.DeserializeIterator(resource_handle=it._handle, serialized=fed)
    with tf.Session() as sess:
        sess.run(it.initializer)
        sess.run(nxt)
        saved = sess.run(state)
        later = [sess.run(nxt) for _ in range(6)]
        sess.run(restore, {fed: saved})
        assert [sess.run(nxt) for _ in range(6)] == later
        with pytest.raises(tf.errors.InvalidArgumentError, match="not a saved iterator state"):
            sess.run(restore, {fed: b"{not json"})


def test_serialize_uninitialized_is_failed_precondition():
    it = tf.data.Dataset.range(3).make_initializable_iterator()
    state = tf.raw_ops.SerializeIterator(resource_handle=it._handle)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            sess.run(state)


def _save_state(tmp_path, make):
    with tf.Graph().as_default():
        it, nxt, saver = _build(make)
        with tf.Session() as sess:
            sess.run(it.initializer)
            sess.run(nxt)
            return saver.save(sess, str(tmp_path / "x"))


def _restore_into(path, make):
    with tf.Graph().as_default():
        it, _, _ = _build(make)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, path)


def test_restore_into_another_structure_names_both(tmp_path):
    path = _save_state(tmp_path, lambda: tf.data.Dataset.range(5))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"int64\[\].*float32\[2\]"):
        _restore_into(path, lambda: tf.data.Dataset.from_tensor_slices(np.ones((4, 2),
                                                                               np.float32)))


def test_restore_into_another_pipeline_names_both(tmp_path):
    path = _save_state(tmp_path, lambda: tf.data.Dataset.range(5))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"RangeDataset.*ShuffleDataset\(.*'RangeDataset"):
        _restore_into(path, lambda: tf.data.Dataset.range(5).shuffle(2))


def test_make_saveable_rejects_bad_arguments():
    it = tf.data.Dataset.range(3).make_one_shot_iterator()
    with pytest.raises(TypeError, match="make_saveable_from_iterator"):
        tf.data.experimental.make_saveable_from_iterator(tf.constant(1))
    with pytest.raises(ValueError, match="external_state_policy"):
        tf.data.experimental.make_saveable_from_iterator(it, external_state_policy="x")


# -- RandomDataset --------------------------------------------------------------------------


def _take(ds, n, inits=1):
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    out = []
    with tf.Session() as sess:
        for _ in range(inits):
            sess.run(it.initializer)
            out.append([sess.run(nxt) for _ in range(n)])
    return out


def test_random_dataset_seeded_repeats_and_covers_int64():
    with tf.Graph().as_default():
        ds = tf.data.experimental.RandomDataset(seed=7)
        assert ds.output_types == tf.int64 and ds.output_shapes.as_list() == []
        a, b = _take(ds, 400, inits=2)
    assert a == b and all(type(v) is np.int64 for v in a)
    values = np.array(a)
    assert (values < 0).any() and (values > 0).any() and len(set(a)) == 400
    assert np.abs(values).max() > 2**62  # the whole int64 range, not 32 bits
    with tf.Graph().as_default():
        assert _take(tf.data.experimental.RandomDataset(seed=7), 400)[0] == a
        assert _take(tf.data.experimental.RandomDataset(seed=8), 5)[0] != a[:5]


def test_random_dataset_graph_seed_and_unseeded():
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        x = _take(tf.data.experimental.RandomDataset(), 5)[0]
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        assert _take(tf.data.experimental.RandomDataset(), 5)[0] == x
    with tf.Graph().as_default():
        a, b = _take(tf.data.experimental.RandomDataset(), 5, inits=2)
    assert a != b  # a new seed at each initialization


def test_random_dataset_bad_seed():
    with pytest.raises(TypeError, match="RandomDataset"):
        tf.data.experimental.RandomDataset(seed=1.5)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="constant"):
        tf.data.experimental.RandomDataset(seed=tf.placeholder(tf.int64, []))


# -- CheckpointInputPipelineHook ------------------------------------------------------------


def _model_fn(features, labels, mode):
    step = tf.train.get_or_create_global_step()
    log = tf.get_variable("log", [12], tf.int64, initializer=tf.zeros_initializer())
    record = tf.scatter_update(log, tf.reshape(step, [1]), tf.reshape(features, [1]))
    with tf.control_dependencies([record]):
        train_op = tf.assign_add(step, 1)
    loss = tf.constant(0.0)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _input_fn():
    return tf.data.Dataset.range(100).shuffle(100).map(lambda x: (x, x))


def _train(model_dir, steps_list, hook):
    est = tf.estimator.Estimator(_model_fn, model_dir=str(model_dir))
    for steps in steps_list:
        hooks = [tf.data.experimental.CheckpointInputPipelineHook(est)] if hook else []
        est.train(_input_fn, steps=steps, hooks=hooks)
    return tf.train.load_variable(str(model_dir), "log")


def test_hook_resumed_training_reads_on_where_it_stopped(tmp_path):
    resumed = _train(tmp_path / "a", [4, 3, 5], hook=True)
    assert len(set(resumed.tolist())) == 12  # no element read twice across the resumes
    assert os.path.exists(tmp_path / "a" / "checkpoint_input")
    assert tf.train.latest_checkpoint(str(tmp_path / "a"), "checkpoint_input").endswith(
        "input.ckpt-12")
    # The input checkpoint holds the iterator's state: 12 elements read, one drawn seed.
    path = tf.train.latest_checkpoint(str(tmp_path / "a"), "checkpoint_input")
    (key, shape), = tf.train.list_variables(path)
    assert key.endswith("_STATE") and shape == []
    state = json.loads(tf.train.load_variable(path, key))
    assert state["produced"] == 12 and len(state["seeds"]) == 1
    assert [stage.split("(")[0] for stage in state["pipeline"]] == [
        "MapDataset", "ShuffleDataset", "RangeDataset"]


def test_hook_matches_an_uninterrupted_seeded_run(tmp_path):
    def input_fn():
        return tf.data.Dataset.range(100).shuffle(100, seed=5).map(lambda x: (x, x))

    def train(model_dir, steps_list, hook):
        est = tf.estimator.Estimator(_model_fn, model_dir=str(model_dir))
        for steps in steps_list:
            hooks = [tf.data.experimental.CheckpointInputPipelineHook(est)] if hook else []
            est.train(input_fn, steps=steps, hooks=hooks)
        return tf.train.load_variable(str(model_dir), "log")

    whole = train(tmp_path / "w", [12], hook=False)
    resumed = train(tmp_path / "r", [5, 7], hook=True)
    restarted = train(tmp_path / "n", [5, 7], hook=False)
    assert np.array_equal(whole, resumed)
    assert np.array_equal(restarted[5:10], whole[:5])  # without the hook: from the start


def test_a_captured_table_comes_from_the_current_initialization(tmp_path):
    def build():
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(["a", "b", "c"]),
                                                tf.constant([10, 20, 30], tf.int64)), -1)
        ds = tf.data.Dataset.from_tensor_slices(["c", "a", "x", "b"]).map(table.lookup)
        it = ds.make_initializable_iterator()
        saveable = tf.data.experimental.make_saveable_from_iterator(it)
        return it, it.get_next(), tf.train.Saver([saveable])

    with tf.Graph().as_default():
        it, nxt, saver = build()
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            sess.run(it.initializer)
            assert sess.run(nxt) == 30
            path = saver.save(sess, str(tmp_path / "t"))
    with tf.Graph().as_default():
        it, nxt, saver = build()
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            with pytest.raises(tf.errors.FailedPreconditionError, match="resource"):
                saver.restore(sess, path)
            sess.run(it.initializer)
            saver.restore(sess, path)
            assert [sess.run(nxt) for _ in range(3)] == [10, -1, 20]


def test_unseeded_random_ops_in_map_follow_external_state_policy(tmp_path):
    def build(policy):
        ds = tf.data.Dataset.range(9).map(lambda x: tf.random_uniform([]) + tf.cast(x, tf.float32))
        it = ds.make_initializable_iterator()
        saveable = tf.data.experimental.make_saveable_from_iterator(it, policy)
        return it, tf.train.Saver([saveable])

    it, saver = build("fail")
    with tf.Session() as sess:
        sess.run(it.initializer)
        with pytest.raises(tf.errors.FailedPreconditionError, match="RandomUniform"):
            saver.save(sess, str(tmp_path / "f"))
    with tf.Graph().as_default():
        it, saver = build("ignore")
        with tf.Session() as sess:
            sess.run(it.initializer)
            assert saver.save(sess, str(tmp_path / "i"))
        bad = tf.raw_ops.SerializeIterator(resource_handle=it._handle, external_state_policy=5)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="external_state_policy"):
                sess.run(bad)


def test_an_iterator_with_two_initializers_restores_on_the_one_that_ran(tmp_path):
    def build():
        train = tf.data.Dataset.range(100).shuffle(10)
        val = tf.data.Dataset.range(1000, 1100).shuffle(10)
        it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
        inits = it.make_initializer(train), it.make_initializer(val)
        saveable = tf.data.experimental.make_saveable_from_iterator(it)
        return it, inits, it.get_next(), tf.train.Saver([saveable])

    with tf.Graph().as_default():
        it, inits, nxt, saver = build()
        with tf.Session() as sess:
            sess.run(inits[1])
            sess.run(nxt)
            path = saver.save(sess, str(tmp_path / "v"))
            expected = [sess.run(nxt) for _ in range(4)]
    with tf.Graph().as_default():
        it, inits, nxt, saver = build()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="initializer"):
                saver.restore(sess, path)
            sess.run(inits[1])
            saver.restore(sess, path)
            assert [sess.run(nxt) for _ in range(4)] == expected
            sess.run(inits[0])
            with pytest.raises(tf.errors.InvalidArgumentError, match="pipeline"):
                saver.restore(sess, path)  # the same pipeline classes, another dataset
