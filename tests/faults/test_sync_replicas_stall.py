"""A SyncReplicasOptimizer step waiting for a missing replica is reported, not silent.

TF 1.x's chief waits forever without a word when a worker dies and replicas_to_aggregate ==
total_num_replicas. Ours still waits (a restarted worker resumes the training), but the
chief's hook logs how many of the replicas' gradients arrived once a step waited
STALL_REPORT_SECS."""

import logging
import threading
import time

import pytest

import tensorflux as tf
from tensorflux.train import sync_replicas_optimizer


@pytest.fixture
def short_report(monkeypatch):
    monkeypatch.setattr(sync_replicas_optimizer, "STALL_REPORT_SECS", 0.4)


def test_a_chief_waiting_for_a_missing_replica_reports_it(short_report, caplog):
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        loss = tf.reduce_sum(tf.square(w))
        step = tf.train.get_or_create_global_step()
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                             replicas_to_aggregate=2, total_num_replicas=2)
        train = opt.minimize(loss, global_step=step)
        # No initial tokens: the first step needs both replicas' gradients, as every step
        # does in a cluster once a worker died; this process is the only replica.
        sess = tf.train.MonitoredSession(
            hooks=[opt.make_session_run_hook(is_chief=True, num_tokens=0)])
        box = []

        def run():
            try:
                box.append(sess.run(train))
            except Exception as err:  # noqa: BLE001 - the step is cancelled below
                box.append(err)

        with caplog.at_level(logging.WARNING):
            thread = threading.Thread(target=run, daemon=True)
            thread.start()
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not any(
                    "SyncReplicasOptimizer" in r.getMessage() for r in caplog.records):
                time.sleep(0.05)
        reports = [r.getMessage() for r in caplog.records if "SyncReplicasOptimizer" in
                   r.getMessage()]
        assert reports, "the stalled step was not reported"
        assert "1 of 2 replicas' gradients arrived" in reports[0], reports[0]
        assert not box  # still waiting: a restarted worker would resume it
        sess.close()
        thread.join(timeout=5)
        assert box and isinstance(box[0], tf.errors.CancelledError), box


def test_steps_that_complete_are_not_reported(short_report, caplog):
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        step = tf.train.get_or_create_global_step()
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                             replicas_to_aggregate=1, total_num_replicas=1)
        train = opt.minimize(tf.reduce_sum(tf.square(w)), global_step=step)
        with caplog.at_level(logging.WARNING):
            with tf.train.MonitoredSession(
                    hooks=[opt.make_session_run_hook(is_chief=True)]) as sess:
                for _ in range(3):
                    sess.run(train)
                    time.sleep(0.3)
                applied, values = sess.run([step, w])  # the chief's runner applies each update
        assert applied >= 2
        assert values.tolist() == pytest.approx([1.0 * 0.8 ** applied, 2.0 * 0.8 ** applied])
        assert not [r for r in caplog.records if "SyncReplicasOptimizer" in r.getMessage()]
