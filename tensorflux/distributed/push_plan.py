"""Transfers between the master's task and remote tasks that need no RecvTensor call.

Feeds (`forward_feeds`): a fed value that the master's task M only sends on to remote tasks
becomes an `_Arg` of each receiving task's partition, so it travels in that task's
RunGraphRequest (as TensorFlow's master sends feeds to the partitions that use them) instead
of being pulled back from M.

Sends back (`push_keys`):
A step normally moves a tensor from task S to the master's own task M by a RecvTensor call
that M's `_Recv` makes to S. When S's partition can finish on its own, M's receives of S's
sends can instead wait for S's RunGraph answer, which carries the small values (named in
`RunGraphRequest.recv_key`); the RecvTensor round trip is saved. Large values, and any that S
did not send, are pulled as before once the answer is in (`Worker._push_sends`,
`RemoteRendezvous.expect_pushes` / `pull_instead`).

Contract of `push_keys`: it names, per remote task S, the rendezvous keys of S's sends to M,
and only when waiting for S's whole partition cannot deadlock or stall the step:
- S's partition has no control flow (its sends are once per step, keyed at frame "0:0"), no
  function calls and no blocking (asynchronous) kernel other than `_Recv`;
- each `_Recv` of S receives from M, and none of M's sends to S depends (through data or
  control edges within M's partition) on a `_Recv` of M: S never waits for anything that
  waits for S.
S's partition then ends without waiting on any other partition of the step, and M's receives
see the same values, only later by the time S takes to end its partition.
"""

from __future__ import annotations

from tensorflux.distributed.rendezvous_mgr import task_of
from tensorflux.framework.op_def import get_op_def
from tensorflux.runtime.graph_ir import Node
from tensorflux.runtime.partition import CONTROL_FLOW_OPS
from tensorflux.runtime.rendezvous import create_key


def forward_feeds(per_task: dict, master_task: str, remote_tasks, keep=()) -> None:
    """Rewrites `per_task` ({task: nodes}) in place: M's `_Send`s of an `_Arg` to a task of
    `remote_tasks` become that task's own `_Arg` (same feed index) in place of its `_Recv`; an
    `_Arg` left with no use in M goes too, unless its id is in `keep` (a fetched feed)."""
    mine = per_task.get(master_task)
    if not mine:
        return
    remote = set(remote_tasks) - {master_task}
    users: dict = {}
    for node in mine:
        for src, _ in node.inputs:
            users.setdefault(id(src), []).append(node)
        for src in node.control_inputs:
            users.setdefault(id(src), []).append(node)
    recvs = {}
    for task in remote:
        for node in per_task.get(task, ()):
            if node.op == "_Recv" and not node.control_inputs and \
                    task_of(node.attrs["send_device"]) == master_task:
                recvs[node.attrs["tensor_name"]] = (task, node)
    removed = set()
    arg_def = get_op_def("_Arg")
    for arg in [n for n in mine if n.op == "_Arg"]:
        uses = users.get(id(arg), [])
        moved = 0
        for send in uses:
            target = recvs.get(send.attrs.get("tensor_name")) if send.op == "_Send" else None
            if target is None or send.control_inputs or users.get(id(send)) or \
                    len(send.inputs) != 1 or send.inputs[0][0] is not arg:
                continue
            task, recv = target
            dtype = arg.attrs["T"]
            fed = Node(recv.name, "_Arg", {"T": dtype, "index": arg.attrs["index"]}, [], [],
                       recv.device, [dtype], [], recv.location, recv.source_op, arg_def)
            fed.assigned_device = recv.assigned_device
            _replace(per_task[task], recv, fed)
            removed.add(id(send))
            moved += 1
        if uses and moved == len(uses) and id(arg) not in keep:
            removed.add(id(arg))
    if removed:
        per_task[master_task] = [n for n in mine if id(n) not in removed]
        if not per_task[master_task]:
            del per_task[master_task]


def _replace(nodes: list, old, new) -> None:
    """Puts `new` in place of `old` in `nodes` and in every edge from `old`."""
    for position, node in enumerate(nodes):
        if node is old:
            nodes[position] = new
            continue
        if any(src is old for src, _ in node.inputs):
            node.inputs = [(new, idx) if src is old else (src, idx) for src, idx in node.inputs]
        if any(src is old for src in node.control_inputs):
            node.control_inputs = [new if src is old else src for src in node.control_inputs]


def _blocks(node) -> bool:
    """Whether the node may wait on something outside its partition (or is a function call,
    whose body we do not look into)."""
    if node.op in CONTROL_FLOW_OPS:
        return True
    kernels = node.op_def.kernels
    kernel = kernels.get("CPU") if kernels else None
    if kernel is None:  # no kernel of ours: a function call, or an op we cannot judge
        return node.op not in ("_Arg", "NoOp")
    return bool(kernel.asynchronous) and node.op != "_Recv"


def _sends_depend_on_recvs(nodes, target_task: str) -> bool:
    """Whether a `_Send` of `nodes` to `target_task` has a `_Recv` among its ancestors."""
    stack = [n for n in nodes if n.op == "_Send"
             and task_of(n.attrs["recv_device"]) == target_task]
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.op == "_Recv":
            return True
        stack.extend(src for src, _ in node.inputs)
        stack.extend(node.control_inputs)
    return False


def push_keys(per_task: dict, master_task: str, remote_tasks, has_functions: bool) -> dict:
    """{task: tuple of rendezvous keys} for the tasks of `remote_tasks` whose sends to
    `master_task` may come back with their RunGraph answer (see the module docstring).

    Args:
        per_task: {task: its partition's nodes} of one step.
        master_task: the master's own task (M).
        remote_tasks: the tasks reached over RPC (candidates for S).
        has_functions: whether the graph has a function library (then nothing is pushed).
    """
    mine = per_task.get(master_task)
    if not mine or has_functions:
        return {}
    result = {}
    for task in remote_tasks:
        nodes = per_task.get(task)
        if task == master_task or not nodes:
            continue
        sends = [n for n in nodes if n.op == "_Send"
                 and task_of(n.attrs["recv_device"]) == master_task]
        if not sends or any(_blocks(n) for n in nodes):
            continue
        recvs = [n for n in nodes if n.op == "_Recv"]
        if any(task_of(n.attrs["send_device"]) != master_task for n in recvs):
            continue
        if recvs and _sends_depend_on_recvs(mine, task):
            continue
        result[task] = tuple(
            create_key(n.attrs["send_device"], int(n.attrs["send_device_incarnation"]),
                       n.attrs["recv_device"], n.attrs["tensor_name"]) for n in sends)
    return result
