"""Smaller `tf.train` helpers: piecewise_constant_decay, noisy_linear_cosine_decay,
checkpoints_iterator (with wait_for_new_checkpoint) and basic_train_loop."""

from __future__ import annotations

import math
import time

from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.ops import math as math_ops
from tensorflux.ops.random import stateful as random_ops
from tensorflux.platform import tf_logging as logging
from tensorflux.train.checkpoint_utils import latest_checkpoint
from tensorflux.train.learning_rate_decay import _check, _floats, piecewise_constant

__all__ = ["piecewise_constant_decay", "noisy_linear_cosine_decay", "checkpoints_iterator",
           "basic_train_loop"]

piecewise_constant_decay = piecewise_constant


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name=None):
    """Linear cosine decay with Gaussian noise on the linear part (Bello et al., 2017).

    `lr * ((alpha + linear + eps) * cosine + beta)`, where `linear = (decay_steps - step) /
    decay_steps`, `cosine = 0.5 * (1 + cos(pi * 2 * num_periods * step / decay_steps))`, the
    step is capped at `decay_steps`, and `eps ~ N(0, initial_variance / (1 + step) **
    variance_decay)` is drawn anew each run (seeded by the graph seed).

    Raises:
        ValueError: `global_step` is None.

    Example: `lr = tf.train.noisy_linear_cosine_decay(0.1, global_step, 1000)`.
    """

    _check(global_step, "noisy_linear_cosine_decay")
    with graph_mod.get_default_graph().name_scope(name or "NoisyLinearCosineDecay") as scope:
        lr, step, steps, variance0, decay, periods, a, b = _floats(
            global_step, learning_rate, decay_steps, initial_variance, variance_decay,
            num_periods, alpha, beta)
        step = math_ops.minimum(step, steps)
        linear = (steps - step) / steps
        variance = variance0 / math_ops.pow(1.0 + step, decay)
        noise = random_ops.random_normal(linear.shape, stddev=math_ops.sqrt(variance),
                                         dtype=lr.dtype.base_dtype)
        fraction = 2.0 * periods * step / steps
        cosine = 0.5 * (1.0 + math_ops.cos(math.pi * fraction))
        return math_ops.multiply(lr, (a + linear + noise) * cosine + b, name=scope)


def wait_for_new_checkpoint(checkpoint_dir, last_checkpoint=None, seconds_to_sleep=1,
                            timeout=None):
    """Polls `checkpoint_dir` until its latest checkpoint differs from `last_checkpoint`.

    Returns:
        The new checkpoint prefix, or None when `timeout` seconds pass first.
    """
    logging.info("Waiting for new checkpoint at %s", checkpoint_dir)
    stop_time = time.time() + timeout if timeout is not None else None
    while True:
        checkpoint_path = latest_checkpoint(checkpoint_dir)
        if checkpoint_path is not None and checkpoint_path != last_checkpoint:
            logging.info("Found new checkpoint at %s", checkpoint_path)
            return checkpoint_path
        if stop_time is not None and time.time() + seconds_to_sleep > stop_time:
            return None
        time.sleep(seconds_to_sleep)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new checkpoint prefix of `checkpoint_dir` as it appears.

    Args:
        checkpoint_dir: the directory whose `checkpoint` state file is watched.
        min_interval_secs: at least this many seconds between two yields.
        timeout: seconds to wait for a new checkpoint before giving up (None: forever).
        timeout_fn: called on each timeout; the iterator ends when it returns True, and goes
            on waiting otherwise. Without it the iterator ends at the first timeout.

    Example:
        >>> for path in tf.train.checkpoints_iterator("/tmp/model", timeout=60):
        ...     evaluate(path)
    """
    checkpoint_path = None
    while True:
        new_path = wait_for_new_checkpoint(checkpoint_dir, checkpoint_path, timeout=timeout)
        if new_path is None:
            if not timeout_fn:
                logging.info("Timed-out waiting for a checkpoint.")
                return
            if timeout_fn():
                return
            continue
        start = time.time()
        checkpoint_path = new_path
        yield checkpoint_path
        remaining = start + min_interval_secs - time.time()
        if remaining > 0:
            time.sleep(remaining)


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
