"""MonitoredTrainingSession, hooks, SessionManager and Supervisor."""

import os

import numpy as np
import pytest

import tensorflux as tf


def _model():
    x = tf.placeholder(tf.float32, [None, 1], name="x")
    w = tf.get_variable("w", [1, 1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 2.0 * x))
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    tf.summary.scalar("loss", loss)
    return x, w, loss, step, train


def test_monitored_training_session_stops_and_resumes(tmp_path):
    ckpt = str(tmp_path)
    feed_value = np.ones((4, 1), np.float32)
    with tf.Graph().as_default():
        x, w, loss, step, train = _model()
        hooks = [tf.train.StopAtStepHook(last_step=5)]
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, hooks=hooks,
                                               save_summaries_steps=1) as sess:
            while not sess.should_stop():
                sess.run(train, {x: feed_value})
    assert tf.train.latest_checkpoint(ckpt).endswith("model.ckpt-5")
    assert os.path.exists(os.path.join(ckpt, "graph.pbtxt"))
    events = [f for f in os.listdir(ckpt) if f.startswith("events.out.tfevents")]
    assert events
    with tf.Graph().as_default():
        x, w, loss, step, train = _model()
        hooks = [tf.train.StopAtStepHook(num_steps=3)]
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, hooks=hooks) as sess:
            # restored: the global step continues (x is fed: the summary hook adds the loss
            # summary to the first run, as TF's does)
            assert sess.run(step, {x: feed_value}) == 5
            first_w = sess.run(w, {x: feed_value})
            while not sess.should_stop():
                sess.run(train, {x: feed_value})
            assert sess.run(step, {x: feed_value}) == 8
    w5 = 2.0 * (1 - 0.8 ** 5)
    np.testing.assert_allclose(first_w, [[w5]], rtol=1e-5)
    assert tf.train.latest_checkpoint(ckpt).endswith("model.ckpt-8")


def test_hooks_see_run_values_and_can_feed():
    seen = []

    class Recorder(tf.train.SessionRunHook):
        def begin(self):
            self.step = tf.train.get_global_step()

        def before_run(self, run_context):
            return tf.train.SessionRunArgs({"step": self.step})

        def after_run(self, run_context, run_values):
            seen.append(int(run_values.results["step"]))

    with tf.Graph().as_default():
        x, w, loss, step, train = _model()
        final = tf.train.FinalOpsHook(w)
        feeder = tf.train.FeedFnHook(lambda: {x: np.ones((2, 1), np.float32)})
        logging_hook = tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=2)
        with tf.train.MonitoredSession(hooks=[Recorder(), final, feeder, logging_hook]) as sess:
            for _ in range(3):
                sess.run(train)
        # Fetched refs alias the variable, so the value is read after the increment (as TF).
        assert seen == [1, 2, 3]
        np.testing.assert_allclose(final.final_ops_values, [[2.0 * (1 - 0.8 ** 3)]],
                                   rtol=1e-5)


def test_nan_tensor_hook():
    with tf.Graph().as_default():
        value = tf.placeholder(tf.float32, [])
        tf.train.get_or_create_global_step()
        with pytest.raises(tf.train.NanLossDuringTrainingError):
            with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(value)]) as sess:
                sess.run(value, {value: float("nan")})
        with tf.train.MonitoredSession(
                hooks=[tf.train.NanTensorHook(value, fail_on_nan_loss=False)]) as sess:
            sess.run(value, {value: float("nan")})
            assert sess.should_stop()


def test_out_of_range_is_a_clean_stop():
    with tf.Graph().as_default():
        queue = tf.FIFOQueue(3, tf.int32)
        fill = queue.enqueue_many([[1, 2, 3]])
        close = queue.close()
        item = queue.dequeue()
        got = []
        with tf.train.SingularMonitoredSession() as sess:
            sess.run(fill)
            sess.run(close)
            while not sess.should_stop():
                got.append(sess.run(item))
        assert got == [1, 2, 3]


def test_profiler_hook_writes_chrome_trace(tmp_path):
    with tf.Graph().as_default():
        x, w, loss, step, train = _model()
        hook = tf.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path))
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(4):
                sess.run(train, {x: np.ones((2, 1), np.float32)})
    traces = [f for f in os.listdir(tmp_path) if f.startswith("timeline-")]
    assert traces
    import json

    with open(os.path.join(tmp_path, traces[0])) as handle:
        assert json.load(handle)["traceEvents"]


def test_session_manager_requires_initialization():
    with tf.Graph().as_default() as graph:
        tf.Variable(1.0, name="v")
        manager = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(),
                                          graph=graph)
        with pytest.raises(RuntimeError, match="not initialized"):
            manager.prepare_session("")
        sess = manager.prepare_session("", init_op=tf.global_variables_initializer())
        assert sess.run("v:0") == 1.0


def test_supervisor_managed_session(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        x, w, loss, step, train = _model()
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0)
        with sv.managed_session() as sess:
            for _ in range(4):
                if sv.should_stop():
                    break
                sess.run(train, {x: np.ones((2, 1), np.float32)})
            sv.saver.save(sess, sv.save_path, global_step=step)
            raise tf.errors.OutOfRangeError(None, None, "input exhausted")
    with tf.Graph().as_default():
        x, w, loss, step, train = _model()
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0)
        with sv.managed_session() as sess:
            assert sess.run(step) == 4
    with tf.Graph().as_default():
        x, w, loss, step, train = _model()
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0)
        with pytest.raises(ValueError, match="boom"):
            with sv.managed_session():
                raise ValueError("boom")


class _FlakyCreator(tf.train.SessionCreator):
    """Fails like a parameter server that is not up yet, `failures` times, then creates."""

    def __init__(self, failures, error=tf.errors.UnavailableError):
        self.failures, self.error, self.calls = failures, error, 0

    def create_session(self):
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error(None, None, f"Task /job:ps/replica:0/task:0 is unreachable "
                                         f"(attempt {self.calls})")
        return tf.train.ChiefSessionCreator().create_session()


class _CountingHook(tf.train.SessionRunHook):
    def __init__(self):
        self.created = 0

    def after_create_session(self, session, coord):
        self.created += 1


def test_session_creation_waits_for_an_unavailable_task(caplog):
    # TF's recoverable session creates again after Aborted/Unavailable while creating (a worker
    # started before its ps); the wait is logged, never silent.
    with tf.Graph().as_default():
        v = tf.Variable(2.0)
        tripled = v * 3.0
        hook = _CountingHook()
        creator = _FlakyCreator(2)
        with tf.train.MonitoredSession(session_creator=creator, hooks=[hook]) as sess:
            assert sess.run(tripled) == 6.0
        assert creator.calls == 3 and hook.created == 1
        creator = _FlakyCreator(1, tf.errors.AbortedError)
        with tf.train.MonitoredSession(session_creator=creator) as sess:
            assert sess.run(v) == 2.0
        assert creator.calls == 2
    warnings = [r for r in caplog.records if "a new session will be created" in r.getMessage()]
    assert len(warnings) == 3 and all(r.levelname == "WARNING" for r in warnings)
    assert "attempt 2" in warnings[1].getMessage()


def test_session_creation_errors_that_are_not_preemptions_propagate():
    with tf.Graph().as_default():
        tf.Variable(1.0)
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.train.MonitoredSession(session_creator=_FlakyCreator(1,
                                                                    tf.errors.InvalidArgumentError))
