"""Collective ops across the tasks of a cluster, over the worker service's RecvTensor.

The executor of one server's task (`ops/collective/exchange.py` states the contract).
Group resolution: a group of `group_size` devices spans the cluster's training tasks (the
"chief" and "worker" jobs when the cluster has either, else every task), in rank order,
with `group_size / tasks` devices of the op's type on each (device indices 0..k-1).

One collective instance is the n-th run of `(group_key, instance_key)` on a device. It gets
its own rendezvous, under a step id derived from the group key, instance key and n (in a
range master step ids never use: above 2**62), so every member names the same one without
talking first. Member r (r > 0) sends its value under `collective_in_r` (a dead value for a
broadcast receiver) and receives `collective_out_r`; the first member receives every
`collective_in_r` (pulled over RecvTensor from the member's task, or locally), combines them
and sends each `collective_out_r`. A failure aborts the instance's rendezvous, so every member
pulling from it fails with the error (which names the task a failed transfer came from); a
dead peer is found by a refused connection or the channel's keepalive (seconds), never a
hang. A peer this task has not reached yet may still be starting: the first collective
that needs it waits for it (GetStatus with wait_for_ready, on a thread of its own) up to the
server's operation timeout (`ConfigProto.operation_timeout_in_ms`, default 10 s), as a
master waits for the tasks of a new session, then fails naming it.
"""

from __future__ import annotations

import hashlib
import threading
import time

from tensorflux.distributed import status as status_mod
from tensorflux.distributed.rendezvous_mgr import task_of
from tensorflux.framework import errors
from tensorflux.ops.collective import exchange
from tensorflux.protos import worker_pb2
from tensorflux.runtime.rendezvous import create_key

__all__ = ["TaskCollectives", "collective_step_id", "group_members"]

_STEP_BASE = (1 << 62) + 1
_STEP_RANGE = (1 << 63) - 1 - _STEP_BASE


def collective_step_id(group_key: int, instance_key: int, seq: int) -> int:
    """The rendezvous step id of the `seq`-th run of an instance (the same on every task)."""
    digest = hashlib.blake2b(f"{group_key}:{instance_key}:{seq}".encode(),
                             digest_size=8).digest()
    return _STEP_BASE + int.from_bytes(digest, "big") % _STEP_RANGE


def _training_tasks(cluster) -> list:
    jobs = [j for j in ("chief", "worker") if j in cluster.jobs] or sorted(cluster.jobs)
    tasks = [f"/job:{job}/replica:0/task:{index}" for job in jobs
             for index in cluster.task_indices(job)]
    return sorted(tasks, key=lambda t: exchange.device_rank_key(t + "/device:CPU:0"))


def group_members(cluster, device: str, group_size: int) -> list:
    """The devices of a group of `group_size` that `device` belongs to, in rank order.

    Raises:
        InvalidArgumentError: the group cannot be spread evenly over the cluster's training
            tasks, or `device` is not one of its members.
    """
    tasks = _training_tasks(cluster)
    kind = device.rpartition("/device:")[2].partition(":")[0] or "CPU"
    if group_size % len(tasks):
        raise errors.InvalidArgumentError(
            None, None, f"A collective group of {group_size} devices cannot be spread over "
            f"the cluster's {len(tasks)} training tasks ({', '.join(tasks)})")
    per_task = group_size // len(tasks)
    members = [f"{task}/device:{kind}:{i}" for task in tasks for i in range(per_task)]
    if device not in members:
        raise errors.InvalidArgumentError(
            None, None, f"Device {device} is not a member of the collective group of "
            f"{group_size} devices ({', '.join(members)})")
    return members


class TaskCollectives:
    """The collective executor of one server task (see the module docstring).

    Args:
        worker: the task's Worker (its rendezvous table serves the peers' RecvTensor calls;
            an instance that fails is aborted there, so a late pull is refused, not left
            waiting).
        cluster: a callable returning the current ClusterSpec (ports bound late).
    """

    def __init__(self, worker, cluster, clients=None, startup_secs: float = 10.0):
        self.task = worker.task
        self._worker = worker
        self._mgr = worker.rendezvous
        self._cluster = cluster
        self._clients = clients
        self._startup_secs = startup_secs
        self._lock = threading.Lock()
        self._counts: dict = {}
        self._reached: set = {worker.task}

    def _wait_for(self, tasks) -> None:
        """Blocks until every task of `tasks` answers GetStatus (the first contact).

        Raises:
            UnavailableError: a task did not answer within the startup bound.
        """
        deadline = time.monotonic() + self._startup_secs
        for task in tasks:
            client = self._clients(task)
            while True:
                remaining = deadline - time.monotonic()
                try:
                    client.call("get_status", worker_pb2.GetStatusRequest(),
                                timeout=max(0.05, min(remaining, 1.0)), wait_for_ready=True)
                    break
                except errors.OpError as err:
                    if time.monotonic() >= deadline:
                        error = errors.UnavailableError(
                            None, None, f"Task {task} at {getattr(client, 'address', '?')} "
                            f"did not answer within {self._startup_secs:.1f}s (a collective "
                            f"group waits for every member to start): {err.message}")
                        error._tfx_task = task
                        raise error from None
                    time.sleep(0.02)
            with self._lock:
                self._reached.add(task)

    def _abort(self, step_id: int, error) -> None:
        """Fails the instance's pending receives here, and refuses later pulls of it."""
        request = worker_pb2.AbortRequest(step_id=step_id)
        status_mod.to_status(request.status, error, self.task)
        self._worker.abort(request)

    def _next_seq(self, group_key, instance_key, device) -> int:
        with self._lock:
            key = (group_key, instance_key, device)
            seq = self._counts.get(key, 0)
            self._counts[key] = seq + 1
            return seq

    def run(self, device, group_key, group_size, instance_key, value, combine, done,
            cancellation=None) -> None:
        once = exchange.Once(done, cancellation)
        try:
            members = group_members(self._cluster(), device, group_size)
        except errors.OpError as err:
            once(err)
            return
        local_members = [d for d in members if task_of(d) == self.task]
        if len(local_members) == len(members):  # the whole group is on this task
            exchange.LOCAL.run(device, group_key, group_size, instance_key, value, combine,
                               done, cancellation)
            return
        rank = members.index(device)
        seq = self._next_seq(group_key, instance_key, device)
        peers = {task_of(d) for d in (members[1:] if rank == 0 else members[:1])}
        unreached = sorted(peers - self._reached)
        if unreached and self._clients is not None:
            def first_contact():
                try:
                    self._wait_for(unreached)
                except errors.OpError as err:
                    # Members already waiting on this instance are failed too.
                    self._abort(collective_step_id(group_key, instance_key, seq), err)
                    once(err)
                    return
                if not once.finished:
                    self._exchange(members, rank, group_key, instance_key, seq, value,
                                   combine, once, cancellation)

            threading.Thread(target=first_contact, daemon=True,
                             name=f"collective-contact-{group_key}-{instance_key}").start()
            return
        self._exchange(members, rank, group_key, instance_key, seq, value, combine, once,
                       cancellation)

    def _exchange(self, members, rank, group_key, instance_key, seq, value, combine, once,
                  cancellation) -> None:
        step_id = collective_step_id(group_key, instance_key, seq)
        rendezvous = self._mgr.find_or_create(step_id)

        def fail(error):
            if not isinstance(error, errors.OpError):
                error = errors.InternalError(None, None, f"{type(error).__name__}: {error}")
            self._abort(step_id, error)
            once(error)

        if cancellation is not None:
            once.token = cancellation.register(fail)
            if once.token is None:
                fail(cancellation.error)
                return
        if rank > 0:
            def received(error, result, is_dead):
                if error is not None:
                    fail(error)
                    return
                self._mgr.step_finished(step_id)
                once(None, result)

            rendezvous.send(_in_key(members, rank), value, value is None)
            rendezvous.recv_async(_out_key(members, rank), received)
            return
        self._lead(members, rendezvous, step_id, value, combine, once, fail)

    def _lead(self, members, rendezvous, step_id, value, combine, once, fail) -> None:
        values = [value] + [None] * (len(members) - 1)
        state = {"left": len(members) - 1, "failed": False}
        lock = threading.Lock()

        def arrived(rank, error, received, is_dead):
            with lock:
                if state["failed"]:
                    return
                if error is not None:
                    state["failed"] = True
                else:
                    values[rank] = None if is_dead else received
                    state["left"] -= 1
                    if state["left"]:
                        return
            if error is not None:
                fail(error)
                return
            try:
                result = combine(values)
            except Exception as err:  # noqa: BLE001 - every member gets the failure
                fail(err)
                return
            for rank in range(1, len(members)):
                # Its own buffer: this task's later ops may update `result` in place (assigned
                # to a variable) before the member has pulled it.
                rendezvous.send(_out_key(members, rank), result.copy())
            self._mgr.step_finished(step_id)
            once(None, result)

        for rank in range(1, len(members)):
            rendezvous.recv_async(_in_key(members, rank),
                                  lambda e, v, d, rank=rank: arrived(rank, e, v, d))


def _in_key(members, rank: int) -> str:
    return create_key(members[rank], 0, members[0], f"collective_in_{rank}")


def _out_key(members, rank: int) -> str:
    return create_key(members[0], 0, members[rank], f"collective_out_{rank}")
