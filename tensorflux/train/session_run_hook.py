"""The hook protocol of monitored sessions (TF1 `tf.train.SessionRunHook` and friends)."""

from __future__ import annotations

import collections
import time

__all__ = ["SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues",
           "SecondOrStepTimer"]


class SessionRunHook:
    """Called around session creation and every `run` of a MonitoredSession."""

    def begin(self):
        """Before the graph is finalized: the hook may still add ops."""

    def after_create_session(self, session, coord):
        """Once the session exists (and is initialized or restored)."""

    def before_run(self, run_context):
        """Returns SessionRunArgs to add fetches/feeds/options to the coming run, or None."""
        return None

    def after_run(self, run_context, run_values):
        """Receives the results of the fetches this hook asked for."""

    def end(self, session):
        """When the monitored session closes normally (also after OutOfRangeError)."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs",
                                            ["fetches", "feed_dict", "options"])):
    """What a hook adds to a run: fetches, a feed_dict, RunOptions."""

    __slots__ = ()

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunValues(collections.namedtuple("SessionRunValues",
                                              ["results", "options", "run_metadata"])):
    """The results of a hook's fetches, and the run's options and metadata."""

    __slots__ = ()


class SessionRunContext:
    """The run in progress: its original arguments, the session, and a stop request flag."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        self._stop_requested = True


class SecondOrStepTimer:
    """Triggers every `every_secs` seconds or every `every_steps` steps (exactly one is set)."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("Either every_secs or every_steps should be provided.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self._last_time = None
        self._last_step = None

    def reset(self) -> None:
        self._last_time = None
        self._last_step = None

    def should_trigger_for_step(self, step) -> bool:
        if self._last_step is None:
            return True
        if self._last_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_time + self._every_secs
        return step >= self._last_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Returns (seconds, steps) since the previous trigger (None, None the first time)."""
        now = time.time()
        elapsed = (None, None) if self._last_time is None else (
            now - self._last_time, step - self._last_step)
        self._last_time = now
        self._last_step = step
        return elapsed

    def last_triggered_step(self):
        return self._last_step
