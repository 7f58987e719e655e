"""`tf.train.SessionManager`: create a session, restore or initialize it, and check readiness.

`prepare_session` restores the newest checkpoint when there is one and otherwise runs the init
op and init_fn; it then runs the local init op once the ready_for_local_init op reports no
uninitialized variables, and fails with a RuntimeError naming what is still uninitialized if
the ready op is not empty. Non-chief workers `wait_for_session` until the chief has made the
model ready.
"""

from __future__ import annotations

import time

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.platform import tf_logging as logging
from tensorflux.runtime.session import Session
from tensorflux.train import checkpoint_utils

__all__ = ["SessionManager"]


def _not_ready(session, op, feed_dict=None):
    """None when `op` (a report of uninitialized variables) is empty, else a message."""
    if op is None:
        return None
    try:
        names = session.run(op, feed_dict)
    except errors.FailedPreconditionError as err:
        return str(err)
    names = np.asarray(names).reshape(-1)
    if names.size == 0:
        return None
    return "Variables not initialized: " + ", ".join(
        n.decode() if isinstance(n, bytes) else str(n) for n in names)


WAIT_REPORT_SECS = 30.0  # how often a worker waiting for the chief says so


class SessionManager:
    """Creates sessions that are initialized or restored and ready to run."""

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=30, local_init_run_options=None,
                 local_init_feed_dict=None):
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a "
                             f"local_init_op , ready_for_local_init_op "
                             f"[{ready_for_local_init_op}]")
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph or graph_mod.get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        self._target = None

    def _session(self, master, config):
        return Session(master, graph=self._graph, config=config)

    def _restore(self, session, saver, checkpoint_dir, checkpoint_filename_with_path,
                 wait_for_checkpoint, max_wait_secs):
        if checkpoint_filename_with_path:
            saver.restore(session, checkpoint_filename_with_path)
            return True
        if saver is None or not checkpoint_dir:
            return False
        deadline = time.time() + max_wait_secs
        while True:
            path = checkpoint_utils.latest_checkpoint(checkpoint_dir)
            if path:
                saver.restore(session, path)
                saver.recover_last_checkpoints(
                    list(checkpoint_utils.get_checkpoint_state(checkpoint_dir)
                         .all_model_checkpoint_paths))
                return True
            if not wait_for_checkpoint or time.time() > deadline:
                return False
            logging.info(f"Waiting for checkpoint to be available in {checkpoint_dir}.")
            time.sleep(min(self._recovery_wait_secs, max(0.0, deadline - time.time())))

    def _try_local_init(self, session):
        if self._local_init_op is None:
            return True, None
        reason = _not_ready(session, self._ready_for_local_init_op)
        if reason is not None:
            return False, reason
        session.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                    options=self._local_init_run_options)
        return True, None

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None):
        """Returns a session that is restored (or initialized) and ready.

        Raises:
            RuntimeError: nothing initialized the model, or it is still not ready.
        """
        session = self._session(master, config)
        restored = self._restore(session, saver, checkpoint_dir,
                                 checkpoint_filename_with_path, wait_for_checkpoint,
                                 max_wait_secs)
        if not restored:
            if init_op is None and init_fn is None and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                   "local_init_op was given")
            if init_op is not None:
                session.run(init_op, feed_dict=init_feed_dict)
            if init_fn is not None:
                init_fn(session)
        ok, reason = self._try_local_init(session)
        if not ok:
            raise RuntimeError(f"Init operations did not make model ready for local_init. "
                               f"Init op: {getattr(init_op, 'name', init_op)}, error: {reason}")
        reason = _not_ready(session, self._ready_op)
        if reason is not None:
            raise RuntimeError(f"Init operations did not make model ready. Init op: "
                               f"{getattr(init_op, 'name', init_op)}, init fn: {init_fn}, "
                               f"error: {reason}")
        return session

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None):
        """Returns (session, initialized): restores when possible, never initializes; the
        local init op runs (when ready for it) whether or not a checkpoint was restored."""
        session = self._session(master, config)
        restored = self._restore(session, saver, checkpoint_dir, checkpoint_filename_with_path,
                                 wait_for_checkpoint, max_wait_secs)
        ok, _ = self._try_local_init(session)
        if not restored or not ok:
            return session, False
        return session, _not_ready(session, self._ready_op) is None

    def wait_for_session(self, master, config=None, max_wait_secs=float("inf")):
        """Waits (polling) until the chief has initialized the model; returns the session.

        Raises:
            DeadlineExceededError: the model was not ready within `max_wait_secs`.
        """
        deadline = time.time() + max_wait_secs
        # NOTE: TF1 slept recovery_wait_secs (30 s) between checks, so workers started up to
        # 30 s after the chief was ready; polling backs off from 0.1 s to that bound instead.
        pause = min(0.1, self._recovery_wait_secs)
        started = time.monotonic()
        next_report = started + WAIT_REPORT_SECS
        while True:
            session = self._session(master, config)
            ok, reason = self._try_local_init(session)
            if ok:
                reason = _not_ready(session, self._ready_op)
                if reason is None:
                    return session
            session.close()
            remaining = deadline - time.time()
            if remaining <= 0:
                raise errors.DeadlineExceededError(
                    None, None, f"Session was not ready after waiting {max_wait_secs} secs: "
                    f"{reason}")
            logging.info(f"Waiting for model to be ready: {reason}")
            if time.monotonic() >= next_report:  # TF1 only logs at INFO: never silently
                next_report = time.monotonic() + WAIT_REPORT_SECS
                logging.warning(f"Still waiting for the model to be ready after "
                                f"{time.monotonic() - started:.0f}s (the chief initializes or "
                                f"restores it; is it running?): {reason}")
            time.sleep(min(pause, remaining))
            pause = min(2 * pause, self._recovery_wait_secs)
