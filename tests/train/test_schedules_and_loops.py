"""piecewise_constant_decay, noisy_linear_cosine_decay, checkpoints_iterator, basic_train_loop,
VocabInfo and warm_start."""

import contextlib
import math
import os
import time

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_piecewise_constant_decay_is_piecewise_constant():
    assert tf.train.piecewise_constant_decay is tf.train.piecewise_constant
    step = tf.placeholder(tf.int64, [])
    lr = tf.train.piecewise_constant_decay(step, [10, 20], [1.0, 0.5, 0.1])
    with tf.Session() as sess:
        got = [sess.run(lr, {step: s}) for s in (0, 10, 11, 20, 25)]
    np.testing.assert_allclose(got, [1.0, 1.0, 0.5, 0.5, 0.1])


def _noiseless(step, decay_steps, num_periods=0.5, alpha=0.0):
    step = min(step, decay_steps)
    linear = (decay_steps - step) / decay_steps
    cosine = 0.5 * (1 + math.cos(math.pi * 2 * num_periods * step / decay_steps))
    return linear, cosine


def test_noisy_linear_cosine_decay_noise_statistics():
    tf.set_random_seed(3)
    step = tf.placeholder(tf.int64, [])
    lr = tf.train.noisy_linear_cosine_decay(0.1, step, 100, initial_variance=0.5,
                                            variance_decay=0.55, beta=0.001)
    assert lr.op.name == "NoisyLinearCosineDecay" and lr.dtype == tf.float32
    with tf.Session() as sess:
        samples = np.array([sess.run(lr, {step: 30}) for _ in range(400)], np.float64)
        capped = sess.run(lr, {step: 100})
    linear, cosine = _noiseless(30, 100)
    noise = (samples / 0.1 - 0.001) / cosine - linear
    std = math.sqrt(0.5 / (1 + 30) ** 0.55)
    assert abs(noise.mean()) < 4 * std / math.sqrt(400)
    assert abs(noise.std() - std) < 0.15 * std
    # At and past decay_steps the cosine factor is 0: only beta is left.
    np.testing.assert_allclose(capped, 0.1 * 0.001, rtol=1e-5)


def test_noisy_linear_cosine_decay_is_seeded_and_checks_step():
    values = []
    for _ in range(2):
        with tf.Graph().as_default():
            tf.set_random_seed(11)
            lr = tf.train.noisy_linear_cosine_decay(1.0, tf.constant(5), 10, name="lr")
            with tf.Session() as sess:
                values.append([sess.run(lr) for _ in range(3)])
    assert values[0] == values[1] and len(set(values[0])) == 3
    with pytest.raises(ValueError, match="global_step"):
        tf.train.noisy_linear_cosine_decay(0.1, None, 10)


def _save(directory, value, step):
    with tf.Graph().as_default():
        v = tf.Variable(float(value), name="v")
        with tf.Session() as sess:
            sess.run(v.initializer)
            return tf.train.Saver().save(sess, os.path.join(directory, "model.ckpt"),
                                         global_step=step)


def test_checkpoints_iterator_yields_new_checkpoints(tmp_path):
    first = _save(str(tmp_path), 1.0, 1)
    seen = []
    calls = []

    def timeout_fn():
        calls.append(1)
        if len(calls) == 1:
            seen.append(_save(str(tmp_path), 2.0, 2))
            return False
        return True

    for path in tf.train.checkpoints_iterator(str(tmp_path), timeout=0.01,
                                              timeout_fn=timeout_fn):
        seen.append(path)
    assert seen[0] == first and seen[-1].endswith("model.ckpt-2") and len(seen) == 3
    assert len(calls) == 2


def test_checkpoints_iterator_timeout_and_min_interval(tmp_path):
    assert list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0.01)) == []
    _save(str(tmp_path), 1.0, 7)
    start = time.time()
    paths = list(tf.train.checkpoints_iterator(str(tmp_path), min_interval_secs=0.3,
                                               timeout=0.01))
    assert [os.path.basename(p) for p in paths] == ["model.ckpt-7"]
    assert time.time() - start >= 0.3


class _FakeSupervisor:
    """A supervisor whose first session aborts, then stops after `steps` train steps."""

    def __init__(self, steps):
        self.steps, self.sessions, self.masters = steps, 0, []

    @contextlib.contextmanager
    def managed_session(self, master):
        self.sessions += 1
        self.masters.append(master)
        yield f"session-{self.sessions}"

    def should_stop(self):
        return self.steps <= 0


def test_basic_train_loop_retries_aborted_sessions():
    sv = _FakeSupervisor(3)
    calls = []

    def step(sess, scale, offset=0):
        calls.append((sess, scale, offset))
        if sess == "session-1":
            raise tf.errors.AbortedError(None, None, "lost the parameter server")
        sv.steps -= 1

    tf.train.basic_train_loop(sv, step, args=[2], kwargs={"offset": 1}, master="grpc://x")
    assert calls == [("session-1", 2, 1)] + [("session-2", 2, 1)] * 3
    assert sv.masters == ["grpc://x", "grpc://x"]


def test_basic_train_loop_with_supervisor():
    counter = tf.Variable(0, name="counter")
    bump = tf.assign_add(counter, 1)
    sv = tf.train.Supervisor(logdir=None, summary_op=None, saver=None)
    values = []

    def step(sess):
        values.append(sess.run(bump))
        if values[-1] == 4:
            sv.request_stop()

    tf.train.basic_train_loop(sv, step)
    assert values == [1, 2, 3, 4]


# -- warm_start ---------------------------------------------------------------------------------


def _write(path, tokens):
    with open(path, "w") as handle:
        handle.write("".join(t + "\n" for t in tokens))
    return str(path)


@pytest.fixture
def checkpoint(tmp_path):
    with tf.Graph().as_default():
        tf.get_variable("emb", initializer=np.arange(6, dtype=np.float32).reshape(3, 2))
        tf.get_variable("old/w", initializer=np.ones((2, 2), np.float32))
        tf.get_variable("out", initializer=np.arange(6, dtype=np.float32).reshape(2, 3))
        tf.get_variable("bias", initializer=np.float32(3.0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, str(tmp_path / "model"))
    return tmp_path


def _initialized(fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches)


def test_warm_start_regex_and_renames(checkpoint):
    w = tf.get_variable("new/w", [2, 2])
    bias = tf.get_variable("bias", [], initializer=tf.zeros_initializer())
    other = tf.get_variable("other", [2], initializer=tf.ones_initializer())
    tf.train.warm_start(str(checkpoint), vars_to_warm_start="new/|bias",
                        var_name_to_prev_var_name={"new/w": "old/w"})
    w_v, bias_v, other_v = _initialized([w, bias, other])
    np.testing.assert_array_equal(w_v, np.ones((2, 2)))
    assert bias_v == 3.0
    np.testing.assert_array_equal(other_v, [1.0, 1.0])


def test_warm_start_lists_and_vocab(checkpoint):
    old = _write(checkpoint / "old.txt", ["a", "b", "c"])
    new = _write(checkpoint / "new.txt", ["c", "x", "a"])
    emb = tf.get_variable("emb", [4, 2], initializer=tf.constant_initializer(-1.0))
    out = tf.get_variable("out", [2, 3])
    bias = tf.get_variable("bias", [], trainable=False, initializer=tf.zeros_initializer())
    infos = {"emb": tf.train.VocabInfo(new, 3, 1, old,
                                       backup_initializer=tf.constant_initializer(7.0)),
             "out": tf.train.VocabInfo(new, 2, 1, old, axis=1)}
    tf.train.warm_start(str(checkpoint / "model"), vars_to_warm_start=["emb", "out", "bias"],
                        var_name_to_vocab_info=infos)
    emb_v, out_v, bias_v = _initialized([emb, out, bias])
    np.testing.assert_array_equal(emb_v, [[4, 5], [7, 7], [0, 1], [7, 7]])
    np.testing.assert_array_equal(out_v, [[2, 0, 0], [5, 0, 0]])
    assert bias_v == 3.0


def test_warm_start_variable_list_and_none(checkpoint):
    old = _write(checkpoint / "old.txt", ["a", "b", "c"])
    emb = tf.get_variable("emb", [2, 2])
    bias = tf.get_variable("bias", [], initializer=tf.zeros_initializer())
    out = tf.get_variable("out", [2, 3], initializer=tf.zeros_initializer())
    tf.train.warm_start(str(checkpoint), vars_to_warm_start=[bias])
    # None: only the variables with a VocabInfo (old_vocab_size limits the old tokens).
    tf.train.warm_start(str(checkpoint), vars_to_warm_start=None,
                        var_name_to_vocab_info={"emb": tf.train.VocabInfo(old, 2, 0, old, 2)})
    emb_v, bias_v, out_v = _initialized([emb, bias, out])
    np.testing.assert_array_equal(emb_v, [[0, 1], [2, 3]])
    assert bias_v == 3.0
    np.testing.assert_array_equal(out_v, np.zeros((2, 3)))


def test_warm_start_errors(checkpoint, tmp_path):
    tf.get_variable("emb", [3, 2])
    with pytest.raises(ValueError, match="var_name_to_prev_var_name that were not used"):
        tf.train.warm_start(str(checkpoint), var_name_to_prev_var_name={"emb2": "emb"})
    with pytest.raises(ValueError, match="var_name_to_vocab_info that were not used"):
        tf.train.warm_start(str(checkpoint), var_name_to_vocab_info={
            "nope": tf.train.VocabInfo("a", 1, 0, "b")})
    with pytest.raises(ValueError, match="all `Variable` or all `str`"):
        tf.train.warm_start(str(checkpoint), vars_to_warm_start=["emb", 3])
    with pytest.raises(ValueError, match="Unrecognized type"):
        tf.train.warm_start(str(checkpoint), vars_to_warm_start=3)
    with pytest.raises(ValueError, match="not found"):
        tf.train.warm_start(str(checkpoint), var_name_to_prev_var_name={"emb": "missing"})
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="Couldn't find"):
        tf.train.warm_start(str(tmp_path / "empty"))
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.warm_start(str(tmp_path / "missing_prefix"))
    with pytest.raises(ValueError, match="axis"):
        tf.train.VocabInfo("a", 1, 0, "b", axis=2)
    info = tf.train.VocabInfo("new", 5, 1, "old")
    assert (info.old_vocab_size, info.backup_initializer, info.axis) == (-1, None, 0)
    assert info.axis_name == "rows"
