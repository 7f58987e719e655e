"""monitored_session._HookedSession: hooks around each run of a plain session."""

import pytest

import tensorflux as tf
from tensorflux.train import monitored_session


class _Counting(tf.train.SessionRunHook):
    """Fetches a tensor on every run, asks to stop once it reaches `limit`."""

    def __init__(self, tensor, limit):
        self.tensor, self.limit, self.seen = tensor, limit, []

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self.tensor)

    def after_run(self, run_context, run_values):
        self.seen.append(run_values.results)
        if run_values.results >= self.limit:
            run_context.request_stop()


def test_hooks_see_their_fetches_and_stop_the_session():
    with tf.Graph().as_default():
        counter = tf.Variable(0, name="counter")
        step = tf.assign_add(counter, 1)
        doubled = counter * 2
        hook = _Counting(doubled, limit=6)
        with tf.Session() as sess:
            sess.run(counter.initializer)
            hooked = monitored_session._HookedSession(sess, [hook])
            values = []
            while not hooked.should_stop():
                values.append(hooked.run(step))
            assert values == [1, 2, 3]
            assert hook.seen == [2, 4, 6]
            with pytest.raises(RuntimeError, match="after should_stop"):
                hooked.run(step)
            hooked._should_stop = False
            assert hooked.run(step) == 4


def test_nested_hooked_sessions_forward_stop():
    with tf.Graph().as_default():
        c = tf.constant(5)
        with tf.Session() as sess:
            inner = monitored_session._HookedSession(sess, [_Counting(c, limit=5)])
            outer = monitored_session._HookedSession(inner, [])
            assert outer.run(c) == 5
            assert inner.should_stop() and outer.should_stop()
