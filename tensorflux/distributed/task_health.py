"""A master's view of its peer tasks' health: heartbeats during long steps, and dead tasks.

Contract:
- `watch(step)` / `unwatch(step)`: a step running longer than `HEARTBEAT_SECS` has each of
  its remote tasks asked for its status (GetStatus, served on the peer's control lane) every
  `HEARTBEAT_SECS` while no answer came in that time, whatever the number of steps.
- Two signals tell a hung task from a slow one. The channel's keepalive (HTTP/2 PING every
  `channels.KEEPALIVE_TIME_MS`, answered by the peer's gRPC core without its Python code)
  closes the transport of a peer that does not answer one within
  `channels.KEEPALIVE_TIMEOUT_MS` (stopped, frozen, unreachable): its outstanding questions
  fail with UnavailableError, the task is declared dead. A refused connection (a dead
  process) fails at once. A peer whose gRPC core answers pings but whose Python cannot run
  (heavy CPU load, the GIL held) is only slow: its questions wait up to
  `HEARTBEAT_TIMEOUT_SECS`; one that times out with a later question answered since it was
  sent is ignored. Measured at load ~13-20 on 2 cores, a healthy PS took up to 4.3 s to run
  a GetStatus while its pings were answered.
- A dead or hung task fails every watched step that uses it with UnavailableError naming it,
  and is remembered as dead; an answer with a new incarnation fails the steps planned
  against the old one with AbortedError. Detection of a stopped task takes about
  HEARTBEAT_SECS + KEEPALIVE_TIME_MS + KEEPALIVE_TIMEOUT_MS (< 3 s) after it stops; of a task
  whose Python alone is wedged, HEARTBEAT_SECS + HEARTBEAT_TIMEOUT_SECS.
- `require(task, client)`: raises UnavailableError at once when the task is known dead.
  Dead tasks are asked for their status in the background, continuously (each question
  waits `PROBE_SECS`); one that answers again is revived, and steps run on it again.
Short steps pay nothing: `watch`/`unwatch` are single dict operations.
"""

from __future__ import annotations

import threading
import time

from tensorflux.framework import errors
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import worker_pb2

HEARTBEAT_SECS = 0.25
HEARTBEAT_TIMEOUT_SECS = 6.0
PROBE_SECS = 1.0
_TICK_SECS = 0.1


class TaskHealth:
    """Heartbeats and the dead-task memory of one master (see the module docstring)."""

    def __init__(self):
        self._steps: dict = {}
        self._lock = threading.Lock()
        self._probing: dict = {}  # task -> time its latest outstanding question was sent
        self._outstanding: dict = {}  # task -> number of questions without an answer yet
        self._answered: dict = {}  # task -> time of its last answer
        self._dead: dict = {}  # task -> (client, since, reason)
        self._thread = None
        self._closed = threading.Event()

    # -- steps -------------------------------------------------------------------------------

    def watch(self, step) -> None:
        self._steps[id(step)] = step
        self._ensure_thread()

    def unwatch(self, step) -> None:
        self._steps.pop(id(step), None)

    def close(self) -> None:
        self._closed.set()

    # -- dead tasks --------------------------------------------------------------------------

    def is_dead(self, task: str) -> bool:
        return task in self._dead

    def require(self, task: str, client) -> None:
        """Returns when `task` is not known dead; else raises at once.

        Raises:
            UnavailableError: the task is known dead (it has not answered since).
        """
        entry = self._dead.get(task)
        if entry is None:
            return
        _, since, reason = entry
        error = errors.UnavailableError(
            None, None, f"Task {task} at {client.address} is unavailable: it stopped "
            f"answering {time.monotonic() - since:.1f}s ago ({reason}); steps that need it "
            "fail at once until it answers again.")
        error._tfx_task = task
        raise error

    def mark_dead(self, task: str, client, reason: str) -> None:
        with self._lock:
            if task in self._dead:
                return
            self._dead[task] = (client, time.monotonic(), reason)
        logging.warning(f"Task {task} at {client.address} is considered dead: {reason}")
        self._ensure_thread()

    def revive(self, task: str) -> None:
        with self._lock:
            found = self._dead.pop(task, None)
            self._answered[task] = time.monotonic()
        if found is not None:
            logging.info(f"Task {task} answers again")

    # -- the heartbeat thread ----------------------------------------------------------------

    def _ensure_thread(self) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._loop, daemon=True,
                                                    name="tfx-heartbeat")
                    self._thread.start()

    def _loop(self) -> None:
        while not self._closed.wait(_TICK_SECS):
            try:
                self._tick(time.monotonic())
            except Exception as err:  # noqa: BLE001 - the watch must go on
                logging.error(f"Heartbeat check failed: {type(err).__name__}: {err}")

    def _tick(self, now: float) -> None:
        due: dict = {}
        for step in list(self._steps.values()):
            if step.done.is_set() or now - step.started < HEARTBEAT_SECS:
                continue
            for plan in step.plans:
                if plan.client.needs_health_checks:
                    due.setdefault(plan.task, plan.client)
        for task, (client, _, _) in list(self._dead.items()):
            due.setdefault(task, client)
        for task, client in due.items():
            dead = task in self._dead
            with self._lock:
                if dead and self._outstanding.get(task, 0):
                    continue  # a dead task is asked one question at a time
                last = max(self._answered.get(task, 0.0), self._probing.get(task, 0.0))
                if not dead and now - last < HEARTBEAT_SECS:
                    continue  # a live one once per period without an answer
                self._probing[task] = now
                self._outstanding[task] = self._outstanding.get(task, 0) + 1
            timeout = PROBE_SECS if dead else HEARTBEAT_TIMEOUT_SECS
            try:
                client.call_async("get_status", worker_pb2.GetStatusRequest(), timeout,
                                  lambda error, response, task=task, client=client, sent=now:
                                  self._answer(task, client, error, response, sent))
            except Exception as err:  # noqa: BLE001 - e.g. a closed client
                self._answer(task, client, _as_op_error(err), None, now)

    def _answer(self, task: str, client, error, response, sent: float = 0.0) -> None:
        with self._lock:
            self._outstanding[task] = max(0, self._outstanding.get(task, 0) - 1)
            if not self._outstanding[task]:
                self._probing.pop(task, None)
            answered_since = self._answered.get(task, -1.0) >= sent
            if error is None:
                self._answered[task] = time.monotonic()
        steps = [s for s in list(self._steps.values()) if not s.done.is_set()
                 and any(p.task == task for p in s.plans)]
        if error is not None:
            if task in self._dead:
                return
            if isinstance(error, errors.CancelledError):
                return
            if isinstance(error, errors.DeadlineExceededError) and answered_since:
                return  # a later question was answered: slow, not hung
            self.mark_dead(task, client, f"no heartbeat: {error.message}")
            # A question that timed out, or one refused at once (the task exited: its port
            # is closed), which the message must not call a timeout.
            why = f"no heartbeat within {HEARTBEAT_TIMEOUT_SECS:.1f}s" \
                if isinstance(error, errors.DeadlineExceededError) else "its heartbeat failed"
            for step in steps:
                failure = errors.UnavailableError(
                    None, None, f"Task {task} at {client.address} failed during the step "
                    f"({why}): {error.message}")
                failure._tfx_task = task
                step.fail(task, failure)
            return
        self.revive(task)
        for step in steps:
            known = step.incarnations.get(task, {})
            changed = [a.name for a in response.device_attributes
                       if a.name in known and known[a.name] != a.incarnation]
            if changed:
                failure = errors.AbortedError(
                    None, None, f"Task {task} restarted during the step (new incarnation of "
                    f"{changed[0]}); the step was aborted.")
                failure._tfx_root = True
                failure._tfx_task = task
                step.fail(task, failure)


def _as_op_error(err):
    if isinstance(err, errors.OpError):
        return err
    return errors.UnavailableError(None, None, f"{type(err).__name__}: {err}")
