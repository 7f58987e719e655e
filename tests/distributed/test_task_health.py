"""TaskHealth's rules, on fake clients (no network): overlapping heartbeat questions, a timed-out
question ignored when a later one was answered (a slow task), death when none was, death at once
on a broken connection (the keepalive's verdict), and a dead task's steps failing at once."""

import threading
import time

import pytest

from tensorflux.distributed import task_health
from tensorflux.distributed.rpc import channels
from tensorflux.framework import errors

TASK = "/job:ps/replica:0/task:0"


class _Client:
    needs_health_checks = True
    address = "ps0:2222"

    def __init__(self):
        self.questions = []  # (timeout, done) per GetStatus sent

    def call_async(self, method, request, timeout, done):
        assert method == "get_status"
        self.questions.append((timeout, done))


class _Plan:
    def __init__(self, client):
        self.task, self.client = TASK, client


class _Step:
    def __init__(self, client, started):
        self.plans = [_Plan(client)]
        self.started = started
        self.done = threading.Event()
        self.incarnations = {}
        self.failures = []

    def fail(self, task, error):
        self.failures.append((task, error))
        self.done.set()


class _Status:
    device_attributes = ()


@pytest.fixture
def watched():
    health = task_health.TaskHealth()
    health._ensure_thread = lambda: None  # ticks are driven by the test
    client = _Client()
    now = time.monotonic()
    step = _Step(client, now - 1.0)
    health.watch(step)
    return health, client, step, now


def _timeout():
    return errors.DeadlineExceededError(None, None, "GetStatus timed out")


def test_questions_overlap_and_a_slow_answer_keeps_the_task_alive(watched):
    health, client, step, now = watched
    health._tick(now)
    health._tick(now + 0.1)  # within HEARTBEAT_SECS of the first: not asked again
    assert len(client.questions) == 1
    assert client.questions[0][0] == task_health.HEARTBEAT_TIMEOUT_SECS
    health._tick(now + task_health.HEARTBEAT_SECS + 0.01)  # no answer yet: ask again
    assert len(client.questions) == 2
    client.questions[1][1](None, _Status())  # the later question is answered ...
    client.questions[0][1](_timeout(), None)  # ... so the earlier one's timeout is ignored
    assert not step.failures and not health.is_dead(TASK)
    health.require(TASK, client)  # does not raise


def test_a_timeout_with_no_later_answer_declares_the_task_dead(watched):
    health, client, step, now = watched
    health._tick(now)
    health._tick(now + task_health.HEARTBEAT_SECS + 0.01)
    client.questions[1][1](_timeout(), None)
    client.questions[0][1](_timeout(), None)
    assert health.is_dead(TASK)
    assert len(step.failures) == 1
    task, error = step.failures[0]
    assert task == TASK and isinstance(error, errors.UnavailableError)
    assert TASK in str(error) and client.address in str(error)
    with pytest.raises(errors.UnavailableError, match="stopped answering"):
        health.require(TASK, client)


def test_a_broken_connection_declares_the_task_dead_even_after_answers(watched):
    health, client, step, now = watched
    health._tick(now)
    client.questions[0][1](None, _Status())
    health._tick(now + task_health.HEARTBEAT_SECS + 0.01)
    client.questions[1][1](errors.UnavailableError(None, None, "ping timeout"), None)
    assert health.is_dead(TASK) and len(step.failures) == 1
    # A dead task is probed one question at a time, and revived by an answer.
    health._tick(now + 1.0)
    health._tick(now + 1.5)
    assert len(client.questions) == 3 and client.questions[2][0] == task_health.PROBE_SECS
    client.questions[2][1](None, _Status())
    assert not health.is_dead(TASK)
    health.require(TASK, client)


def test_a_hung_task_is_detected_within_three_seconds_of_stopping():
    # The bound the constants promise (test_hung_task.py measures it on a real process).
    worst = (task_health.HEARTBEAT_SECS + task_health._TICK_SECS
             + (channels.KEEPALIVE_TIME_MS + channels.KEEPALIVE_TIMEOUT_MS) / 1000)
    assert worst < 3.0, worst
