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

Contract of `push_keys`: it names, per remote task S, rendezvous keys of S's sends to M,
only where waiting for S's whole partition cannot deadlock or stall the step:
- S's partition has no control flow (its sends are once per step, keyed at frame "0:0"), no
  function calls and no blocking (asynchronous) kernel other than `_Recv`;
- each `_Recv` of S receives from M; when S receives anything, a send is named only if no
  `_Send` of M depends (through data or control edges within M's partition) on its `_Recv`:
  what S waits for never waits for S's end.
S's partition then ends once M's sends arrive, and M's receives of the named keys see the
same values, only later by the time S takes to end its partition (a training step's control
edges back to the worker, say, while the parameters it reads are still pulled at once).

Constants (`copy_constants`): a `Const` sent to another task is copied into the receiving
partition instead of crossing every step.
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


def may_block(node) -> bool:
    """Whether the node may wait on something outside its partition (or is a function call,
    whose body we do not look into)."""
    if node.op in CONTROL_FLOW_OPS:
        return True
    kernels = node.op_def.kernels
    kernel = kernels.get("CPU") if kernels else None
    if kernel is None:  # no kernel of ours: a function call, or an op we cannot judge
        return node.op not in ("_Arg", "NoOp")
    return bool(kernel.asynchronous) and node.op != "_Recv"


def _recvs_feeding_sends(nodes) -> set:
    """Names of the `_Recv`s of `nodes` that some `_Send` of `nodes` depends on (through data
    or control edges)."""
    stack = [n for n in nodes if n.op == "_Send"]
    seen = set()
    found = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.op == "_Recv":
            found.add(node.attrs["tensor_name"])
        stack.extend(src for src, _ in node.inputs)
        stack.extend(node.control_inputs)
    return found


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
    feeding = None
    for task in remote_tasks:
        nodes = per_task.get(task)
        if task == master_task or not nodes:
            continue
        sends = [n for n in nodes if n.op == "_Send"
                 and task_of(n.attrs["recv_device"]) == master_task]
        if not sends or any(may_block(n) for n in nodes):
            continue
        recvs = [n for n in nodes if n.op == "_Recv"]
        if any(task_of(n.attrs["send_device"]) != master_task for n in recvs):
            continue
        if recvs:  # S waits for M: only what no send of M waits for may wait for S's end
            if feeding is None:
                feeding = _recvs_feeding_sends(mine)
            sends = [n for n in sends if n.attrs["tensor_name"] not in feeding]
        if sends:
            result[task] = tuple(
                create_key(n.attrs["send_device"], int(n.attrs["send_device_incarnation"]),
                           n.attrs["recv_device"], n.attrs["tensor_name"]) for n in sends)
    return result


def copy_constants(per_task: dict, remote_tasks, keep=()) -> None:
    """Rewrites `per_task` ({task: nodes}) in place: a `_Recv` of a `Const`'s value sent by
    another task, where either task is in `remote_tasks`, becomes a copy of that `Const`; the
    `_Send` (and the `Const`, when nothing else uses it and its id is not in `keep`) leave
    the sender's partition."""
    remote = set(remote_tasks)
    sends = {}
    for task, nodes in per_task.items():
        for node in nodes:
            if node.op == "_Send" and not node.control_inputs and len(node.inputs) == 1 and \
                    node.inputs[0][0].op == "Const" and not node.inputs[0][0].control_inputs:
                sends[node.attrs["tensor_name"]] = (task, node)
    dropped: dict = {}
    for task, nodes in per_task.items():
        for recv in [n for n in nodes if n.op == "_Recv"]:
            found = sends.get(recv.attrs["tensor_name"])
            if found is None or recv.control_inputs or found[0] == task or \
                    (found[0] not in remote and task not in remote):
                continue
            const = found[1].inputs[0][0]
            copy = Node(recv.name, "Const", dict(const.attrs), [], [], recv.device,
                        list(const.output_dtypes), [], recv.location, recv.source_op,
                        const.op_def)
            copy.assigned_device = recv.assigned_device
            _replace(nodes, recv, copy)
            dropped.setdefault(found[0], {})[id(found[1])] = const
    for task, gone in dropped.items():
        nodes = [n for n in per_task[task] if id(n) not in gone]
        used = set(keep)
        for node in nodes:
            used.update(id(src) for src, _ in node.inputs)
            used.update(id(src) for src in node.control_inputs)
        unused = {id(c) for c in gone.values()} - used
        nodes = [n for n in nodes if id(n) not in unused]
        if nodes:
            per_task[task] = nodes
        else:
            del per_task[task]


def move_control_relays(per_task: dict, remote_tasks) -> None:
    """Rewrites `per_task` in place: a `NoOp` of task T that only waits for control edges
    from one task S (a `_Recv` each, used by nothing else) and only signals S back (or
    nothing) runs on S instead, with the waits and signals local there.

    A training step's `update` group on the worker (it waits for the PS's ApplyAdam ops and
    gates the PS's global-step increment) then costs no transfer; the ops it orders, and
    when they run relative to each other, stay the same.
    """
    remote = set(remote_tasks)
    sends, recvs = {}, {}
    for task, nodes in per_task.items():
        for node in nodes:
            if node.op == "_Send":
                sends[node.attrs["tensor_name"]] = (task, node)
            elif node.op == "_Recv":
                recvs[node.attrs["tensor_name"]] = (task, node)
    for task in list(per_task):
        nodes = per_task.get(task)
        if not nodes:
            continue
        users = _users(nodes)
        for noop in [n for n in nodes if n.op == "NoOp" and not n.inputs and n.control_inputs]:
            plan = _relay_plan(noop, task, users, sends, recvs, per_task, remote)
            if plan is not None:
                _move_relay(noop, task, plan, per_task)


def _users(nodes) -> dict:
    found: dict = {}
    for node in nodes:
        for src, _ in node.inputs:
            found.setdefault(id(src), []).append(node)
        for src in node.control_inputs:
            found.setdefault(id(src), []).append(node)
    return found


def _relay_plan(noop, task, users, sends, recvs, per_task, remote):
    """(source task S, [(recv on T, send on S, dummy on S)], [(dummy on T, send on T, recv on
    S, S's users of that recv)]) when `noop` is a relay that may move to S, else None."""
    waits = []
    source = None
    for recv in noop.control_inputs:
        if recv.op != "_Recv" or recv.control_inputs or users.get(id(recv)) != [noop]:
            return None
        found = sends.get(recv.attrs["tensor_name"])
        if found is None:
            return None
        sender_task, send = found
        dummy = send.inputs[0][0] if len(send.inputs) == 1 else None
        if source not in (None, sender_task) or sender_task == task or dummy is None or \
                dummy.op != "Const" or dummy.inputs or send.control_inputs:
            return None
        source = sender_task
        waits.append((recv, send, dummy))
    if source is None or (source not in remote and task not in remote):
        return None
    source_users = _users(per_task[source])
    if any(source_users.get(id(dummy)) != [send] for _, send, dummy in waits):
        return None
    signals = []
    for dummy in users.get(id(noop), []):
        if dummy.op != "Const" or dummy.inputs or dummy.control_inputs != [noop]:
            return None
        chain = users.get(id(dummy), [])
        if len(chain) != 1 or chain[0].op != "_Send":
            return None
        found = recvs.get(chain[0].attrs["tensor_name"])
        if found is None or found[0] != source:
            return None
        recv = found[1]
        targets = source_users.get(id(recv), [])
        if any(any(src is recv for src, _ in t.inputs) for t in targets):
            return None  # used as data: not a plain control edge
        signals.append((dummy, chain[0], recv, targets))
    return source, waits, signals


def _move_relay(noop, task, plan, per_task) -> None:
    source, waits, signals = plan
    origins = []
    for _, _, dummy in waits:
        origins.extend(dummy.control_inputs)
    moved = Node(noop.name, "NoOp", dict(noop.attrs), [], origins, noop.device, [], [],
                 noop.location, noop.source_op, noop.op_def)
    moved.assigned_device = waits[0][1].assigned_device
    gone_here = {id(noop)}
    gone_there = set()
    for recv, send, dummy in waits:
        gone_here.add(id(recv))
        gone_there.update((id(send), id(dummy)))
    for dummy, send, recv, targets in signals:
        gone_here.update((id(dummy), id(send)))
        gone_there.add(id(recv))
        for target in targets:
            target.control_inputs = [moved if src is recv else src
                                     for src in target.control_inputs]
    per_task[task] = [n for n in per_task[task] if id(n) not in gone_here]
    per_task[source] = [n for n in per_task[source] if id(n) not in gone_there] + [moved]
    if not per_task[task]:
        del per_task[task]
