"""Checkpoints lose nothing when the saving process is killed (issue 13).

`kill_saves.py` SIGKILLs a process saving in a loop at random moments (20 times with one
prefix per step, 20 times overwriting one prefix) and checks after every kill that the
latest checkpoint, and every one the state file lists, is complete and consistent, with a
parseable `.meta`; the next save must leave no temporary file behind.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.lib.formats import atomic_files, bundle

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))


def test_forty_kills_during_saves_lose_no_checkpoint(tmp_path):
    runs = {}
    for mode, seed in (("steps", 13), ("same", 17)):
        directory = tmp_path / mode
        directory.mkdir()
        env = dict(os.environ, PYTHONPATH=REPO_ROOT)
        runs[mode] = (directory, subprocess.Popen(
            [sys.executable, os.path.join(HERE, "kill_saves.py"), str(directory), mode, "20",
             str(seed)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    for mode, (directory, proc) in runs.items():
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        counts = json.loads(out.strip().splitlines()[-1])
        assert counts["kills"] == 20, counts
        for fault in ("lost", "unreadable_listed", "inconsistent", "went_back", "meta_missing",
                      "meta_truncated", "restore_failed", "temporaries_after"):
            assert counts[fault] == 0, (mode, fault, counts, err)
        assert counts["last_step"] > 20, counts  # every child saved before its kill
        # The latest checkpoint restores through its own .meta in a fresh graph.
        latest = tf.train.latest_checkpoint(str(directory))
        with tf.Graph().as_default():
            saver = tf.train.import_meta_graph(latest + ".meta")
            with tf.Session() as sess:
                saver.restore(sess, latest)
                a, b = sess.run(["a:0", "b:0"])
        np.testing.assert_array_equal(a, np.full_like(a, counts["last_step"]))
        np.testing.assert_array_equal(a, b)


def _crash_on_nth_replace(monkeypatch, n):
    real = os.replace
    calls = []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == n:
            raise KeyboardInterrupt("killed")
        return real(src, dst)

    monkeypatch.setattr(bundle.os, "replace", replace)
    return calls


@pytest.mark.parametrize("crash_at,expected", [(1, 3.0), (2, 7.0)],
                         ids=["before-index-commit", "between-index-and-data-renames"])
def test_same_prefix_crash_between_renames_keeps_a_complete_bundle(tmp_path, monkeypatch,
                                                                   crash_at, expected):
    prefix = str(tmp_path / "model.ckpt")
    bundle.write_bundle(prefix, {"v": np.full(5, 3.0)})
    calls = _crash_on_nth_replace(monkeypatch, crash_at)
    with pytest.raises(KeyboardInterrupt):
        bundle.write_bundle(prefix, {"v": np.full(5, 7.0)})
    # replace #1 commits the index, #2 moves the new data to its standard name.
    assert calls[0].endswith(".index") and len(calls) == crash_at
    with bundle.BundleReader(prefix) as reader:
        np.testing.assert_array_equal(reader.get_tensor("v"), np.full(5, expected))
    monkeypatch.undo()
    # The next save finishes or removes what the crash left (no temporaries), and is read.
    bundle.write_bundle(prefix, {"v": np.full(5, 9.0)})
    assert not [n for n in os.listdir(tmp_path) if atomic_files.MARK in n]
    with bundle.BundleReader(prefix) as reader:
        np.testing.assert_array_equal(reader.get_tensor("v"), np.full(5, 9.0))


def test_state_file_names_a_checkpoint_only_once_its_meta_is_written(tmp_path, monkeypatch):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            first = saver.save(sess, str(tmp_path / "m"), global_step=1)

            def killed(path, data):
                raise KeyboardInterrupt("killed while writing " + path)

            monkeypatch.setattr(atomic_files, "write_file", killed)
            with pytest.raises(KeyboardInterrupt, match=r"m-2\.meta"):
                saver.save(sess, str(tmp_path / "m"), global_step=2)
    # The new bundle is committed but not named: the state still leads to step 1, complete.
    assert tf.train.latest_checkpoint(str(tmp_path)) == first
    assert os.path.exists(first + ".meta") and bundle.bundle_exists(str(tmp_path / "m-2"))


def test_eight_threads_saving_into_one_directory_lose_no_update(tmp_path):
    """Concurrent saves (each thread its own variable, prefix and state file, and some
    overwriting one shared prefix) never remove or mix each other's files."""
    import threading

    rounds = 5
    with tf.Graph().as_default():
        variables = [tf.Variable(np.zeros(1000, np.float32), name=f"v{i}") for i in range(8)]
        values = tf.placeholder(tf.float32, [1000])
        assigns = [v.assign(values) for v in variables]
        savers = [tf.train.Saver([v], max_to_keep=2) for v in variables]
        shared = tf.train.Saver(variables)
        failures = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())

            def work(i):
                try:
                    for k in range(1, rounds + 1):
                        sess.run(assigns[i], {values: np.full(1000, 100 * i + k, np.float32)})
                        savers[i].save(sess, str(tmp_path / f"t{i}"), global_step=k,
                                       latest_filename=f"state{i}")
                        shared.save(sess, str(tmp_path / "shared"), latest_filename="shared_state",
                                    write_meta_graph=False)
                except Exception as err:  # noqa: BLE001 - reported below
                    failures.append(err)

            threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
        assert not failures, failures
    for i in range(8):
        latest = tf.train.latest_checkpoint(str(tmp_path), latest_filename=f"state{i}")
        assert latest == str(tmp_path / f"t{i}-{rounds}")
        with bundle.BundleReader(latest) as reader:
            np.testing.assert_array_equal(reader.get_tensor(f"v{i}"),
                                          np.full(1000, 100 * i + rounds, np.float32))
        assert os.path.exists(latest + ".meta")
    with bundle.BundleReader(str(tmp_path / "shared")) as reader:
        for i in range(8):  # each variable holds one of the values its thread assigned
            saved = reader.get_tensor(f"v{i}")
            assert np.all(saved == saved[0]) and 100 * i <= saved[0] <= 100 * i + rounds
    assert not [n for n in os.listdir(tmp_path) if atomic_files.MARK in n]
