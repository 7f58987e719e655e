"""tf.train.CheckpointManager: numbering, max_to_keep, preserved checkpoints, state file."""

import os

import pytest

import tensorflux as tf


@pytest.fixture
def counter():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(0.0, name="v")
        inc = v.assign_add(1.0)
        with tf.Session() as sess:
            sess.run(v.initializer)
            yield tf.train.Checkpoint(v=v), inc, sess


def _value(path):
    return tf.train.load_variable(path, "v/.ATTRIBUTES/VARIABLE_VALUE")


def test_max_to_keep_deletes_oldest_and_records_state(counter, tmp_path):
    ckpt, inc, sess = counter
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    assert manager.latest_checkpoint is None and manager.checkpoints == []
    paths = []
    for _ in range(4):
        sess.run(inc)
        paths.append(manager.save(session=sess))
    assert paths == [str(tmp_path / f"ckpt-{i}") for i in range(1, 5)]
    assert manager.checkpoints == paths[2:] and manager.latest_checkpoint == paths[3]
    assert sorted(f for f in os.listdir(tmp_path) if f.endswith(".index")) == \
        ["ckpt-3.index", "ckpt-4.index"]
    assert [_value(p) for p in manager.checkpoints] == [3.0, 4.0]
    assert tf.train.latest_checkpoint(str(tmp_path)) == paths[3]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert list(state.all_model_checkpoint_paths) == paths[2:]
    assert len(state.all_model_checkpoint_timestamps) == 2
    again = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    assert again.checkpoints == paths[2:] and again.latest_checkpoint == paths[3]
    sess.run(inc)
    assert again.save(session=sess) == str(tmp_path / "ckpt-5")
    assert not os.path.exists(paths[2] + ".index") and again.checkpoints[-1].endswith("ckpt-5")


def test_checkpoint_number_name_and_keep_all(counter, tmp_path):
    ckpt, inc, sess = counter
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=None,
                                         checkpoint_name="model")
    step = tf.constant(100, tf.int64)
    with sess.as_default():
        assert manager.save(checkpoint_number=7) == str(tmp_path / "model-7")
        assert manager.save(checkpoint_number=step) == str(tmp_path / "model-100")
        assert manager.save() == str(tmp_path / "model-3")  # save_counter counted every save
    assert len(manager.checkpoints) == 3
    assert all(os.path.exists(p + ".index") for p in manager.checkpoints)
    with pytest.raises(ValueError, match="max_to_keep"):
        tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=0)


def test_keep_checkpoint_every_n_hours_preserves_files(counter, tmp_path):
    ckpt, inc, sess = counter
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1,
                                         keep_checkpoint_every_n_hours=1e-9)
    paths = [manager.save(session=sess) for _ in range(3)]
    assert manager.checkpoints == paths[2:]
    assert all(os.path.exists(p + ".index") for p in paths)  # preserved, not deleted
    plain = tf.train.CheckpointManager(ckpt, str(tmp_path / "plain"), max_to_keep=1)
    kept = [plain.save(session=sess) for _ in range(2)]
    assert not os.path.exists(kept[0] + ".index") and os.path.exists(kept[1] + ".index")


def test_restore_latest_from_manager(counter, tmp_path):
    ckpt, inc, sess = counter
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=3)
    for _ in range(2):
        sess.run(inc)
        manager.save(session=sess)
    with tf.Graph().as_default():
        v = tf.Variable(-1.0, name="anything")
        fresh = tf.train.Checkpoint(v=v)
        status = fresh.restore(tf.train.CheckpointManager(fresh, str(tmp_path),
                                                          max_to_keep=3).latest_checkpoint)
        with tf.Session() as s2:
            status.run_restore_ops(s2)
            assert s2.run(v) == 2.0 and s2.run(fresh.save_counter) == 2


def test_checkpoints_saved_outside_the_manager_are_never_deleted(counter, tmp_path):
    ckpt, inc, sess = counter
    outside = [ckpt.save(str(tmp_path / "by_hand"), session=sess) for _ in range(2)]
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1)
    assert manager.latest_checkpoint == outside[-1] and manager.checkpoints == []
    managed = [manager.save(session=sess) for _ in range(3)]
    assert manager.checkpoints == managed[-1:]
    assert [tf.train.checkpoint_exists(p) for p in outside + managed] == [
        True, True, False, False, True]


def test_clock_going_back_keeps_old_checkpoints(counter, tmp_path, monkeypatch, caplog):
    from tensorflux.train import checkpoint_management as cm

    ckpt, inc, sess = counter
    clock = [50_000.0]
    monkeypatch.setattr(cm.time, "time", lambda: clock[0])
    first = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1,
                                       keep_checkpoint_every_n_hours=2.0)
    old = []
    for _ in range(3):
        old.append(first.save(session=sess))
        clock[0] += 2 * 3600.0
    # the second is preserved (2 h after the start), the first deleted
    assert [tf.train.checkpoint_exists(p) for p in old] == [False, True, True]
    clock[0] = 1_000.0
    with caplog.at_level("WARNING"):
        second = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1)
    assert "behind the last preserved checkpoint timestamp" in caplog.text
    assert second.checkpoints == [] and second.latest_checkpoint == old[-1]
    new = [second.save(session=sess) for _ in range(2)]
    assert second.checkpoints == new[-1:]
    assert all(tf.train.checkpoint_exists(p) for p in old[1:] + new[1:])
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.last_preserved_timestamp == 1_000.0


def test_remove_checkpoint_for_each_format_and_sharding(tmp_path):
    for sharded in (False, True):
        for version in (tf.train.SaverDef.V1, tf.train.SaverDef.V2):
            with tf.Graph().as_default(), tf.Session() as sess:
                tf.Variable([1.0, 2.0], name="w")
                sess.run(tf.global_variables_initializer())
                saver = tf.train.Saver(sharded=sharded, write_version=version)
                prefix = saver.save(sess, str(tmp_path / f"m{int(sharded)}{version}"))
                assert tf.train.checkpoint_exists(prefix)
                tf.train.remove_checkpoint(prefix, version)
                assert not tf.train.checkpoint_exists(prefix)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint"]


def test_state_proto_appends_the_newest_path_to_the_given_list(tmp_path):
    given = [str(tmp_path / "m-1")]
    state = tf.train.generate_checkpoint_state_proto(str(tmp_path), str(tmp_path / "m-4"),
                                                     all_model_checkpoint_paths=given)
    assert list(state.all_model_checkpoint_paths) == given == [str(tmp_path / "m-1"),
                                                               str(tmp_path / "m-4")]
