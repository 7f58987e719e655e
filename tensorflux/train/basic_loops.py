"""`tf.train.basic_train_loop`: the simplest training loop over a Supervisor."""

from __future__ import annotations

from tensorflux.framework import errors

__all__ = ["basic_train_loop"]


def basic_train_loop(supervisor, train_step_fn, args=None, kwargs=None, master=""):
    """Runs `train_step_fn(sess, *args, **kwargs)` until `supervisor.should_stop()`.

    The session comes from `supervisor.managed_session(master)`; an `AbortedError` (e.g. a
    lost parameter server) starts a new managed session and goes on.

    Example: `tf.train.basic_train_loop(sv, lambda sess: sess.run(train_op))`.
    """
    args = [] if args is None else args
    kwargs = {} if kwargs is None else kwargs
    should_retry = True
    while should_retry:
        try:
            should_retry = False
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
        except errors.AbortedError:
            should_retry = True
