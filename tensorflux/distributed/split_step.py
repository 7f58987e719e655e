"""Split steps: a remote task's partition run as two RunGraphs that carry its transfers.

A training step between a worker's master M and a PS task S usually costs three calls: M's
RunGraph to S, M's pull of the parameters S sends (RecvTensors served by S) and S's pull of
the gradients M sends back (RecvTensors served by M's own task, which wakes M's server in
the middle of M's step). When S's partition is a *head* that needs nothing from M (the
variable reads and their sends) followed by a *body* that needs M's values and sends nothing
back (the updates), the step can instead run in three stages from the step's own thread:

1. every such S runs its head; the values it sends to M come back in the RunGraph answer
   (the head's `_Send`s are `_Retval`s there);
2. M's partition runs in process with those values as feeds (its `_Recv`s from S are
   `_Arg`s) and returns what it sends to S as fetches (its `_Send`s to S are `_Retval`s);
3. every S runs its body with those values in the RunGraph request (its `_Recv`s are
   `_Arg`s).

Two calls per remote task, both answered by S, and no transfer is served by M. The values
and their order are the same: S's body depends on every value it received, so it could not
have started before M's sends anyway, and nothing of S's head waits for M.

Contract of `split_partitions`: it returns None (the step runs as usual) unless every
partition qualifies: M's partition and every remote one have no control flow, no function
calls and no kernel that may block (queues; `push_plan.may_block`); every value M sends to a
remote task has a static shape of at most MAX_CARRIED_BYTES (it rides a request); every
remote task
receives only from M and sends only to M, and all its sends are in its head (they depend on
no `_Recv`); its head sends something and its body receives something; the body uses from
the head only nodes that can be repeated with the same meaning (a variable or resource
handle, a constant, a fed `_Arg`, the `Identity` read of a variable: the body reads it when
it runs, which the unsplit step may have done too), which the body gets copies of; the
head's control edges into the body are dropped (the head has ended when the body starts).
The transfer of rendezvous tensor name t uses feed/fetch index `SLOT_BASE + k` on both
sides.

A step with a deadline, and any step of a graph that does not qualify, runs as before
(`step_runner.run_step`).
"""

from __future__ import annotations

from tensorflux.distributed.push_plan import may_block
from tensorflux.distributed.rendezvous_mgr import task_of
from tensorflux.framework.op_def import get_op_def
from tensorflux.runtime.graph_ir import Node
from tensorflux.runtime.partition import CONTROL_FLOW_OPS

# Feed and fetch indices of the values a split step moves between tasks: above any index a
# client's feeds or fetches take.
SLOT_BASE = 1 << 24
# The largest value M's partition sends to a body that a split step carries in the body's
# RunGraphRequest; a graph with a larger (or unknown-size) one runs unsplit, its transfers
# streamed as usual.
MAX_CARRIED_BYTES = 16 << 20
# Ops the body may repeat from the head with the same meaning (no inputs: the node is the
# same resource or value wherever it runs).
_VARIABLES = frozenset({"VariableV2", "Variable"})
_REPEATABLE = _VARIABLES | {"VarHandleOp", "Const", "_Arg"}


class Split:
    """The registered stages of a split step: `heads` and `bodies` are task plans of the
    remote tasks, `local` the master task's plan; `slots` the transfer indices that go from
    M to the bodies."""

    __slots__ = ("heads", "local", "bodies", "slots")

    def __init__(self, heads, local, bodies, slots):
        self.heads = heads
        self.local = local
        self.bodies = bodies
        self.slots = slots


def _clone(nodes: list) -> list:
    """Shallow copies of `nodes` with their edges among themselves rewired to the copies."""
    copies = {}
    for node in nodes:
        copy = Node.__new__(Node)
        for slot in Node.__slots__:
            setattr(copy, slot, getattr(node, slot))
        copy.attrs = dict(node.attrs)
        copies[id(node)] = copy
    for copy in copies.values():
        copy.inputs = [(copies.get(id(src), src), idx) for src, idx in copy.inputs]
        copy.control_inputs = [copies.get(id(src), src) for src in copy.control_inputs]
    return [copies[id(node)] for node in nodes]


def _small(src, port: int) -> bool:
    """Whether output `port` of `src` has a static shape of at most MAX_CARRIED_BYTES."""
    try:
        shape = src.source_op.outputs[port].shape.as_list()
        itemsize = src.output_dtypes[port].base_dtype.size
    except (AttributeError, IndexError, ValueError, TypeError):
        return False
    if any(dim is None for dim in shape):
        return False
    count = 1
    for dim in shape:
        count *= dim
    return count * itemsize <= MAX_CARRIED_BYTES


def _repeatable(node) -> bool:
    """Whether the body may run its own copy of head node `node` with the same meaning."""
    if node.control_inputs:
        return False
    if node.op in _REPEATABLE:
        return not node.inputs
    # A variable's read: the body reads it when it runs, as the unsplit step may have.
    return node.op == "Identity" and len(node.inputs) == 1 and \
        node.inputs[0][0].op in _VARIABLES and _repeatable(node.inputs[0][0])


def _repeat(node, repeated: dict):
    """The body's copy of head node `node` (made once; a read's variable too)."""
    copy = repeated.get(id(node))
    if copy is None:
        copy = repeated[id(node)] = _clone([node])[0]
        copy.inputs = [(_repeat(src, repeated), idx) for src, idx in node.inputs]
    return copy


def _arg(like, index: int, dtype) -> Node:
    node = Node(like.name, "_Arg", {"T": dtype, "index": index}, [], [], like.device,
                [dtype], [], like.location, like.source_op, get_op_def("_Arg"))
    node.assigned_device = like.assigned_device
    return node


def _retval(send, index: int) -> Node:
    src, idx = send.inputs[0]
    node = Node(f"_split_retval_{index}", "_Retval", {"T": send.attrs["T"], "index": index},
                [(src, idx)], list(send.control_inputs), send.device, [], [],
                send.location, send.source_op, get_op_def("_Retval"))
    node.assigned_device = send.assigned_device
    return node


def _depends_on_recv(nodes: list) -> set:
    """ids of the nodes of `nodes` that depend (data or control, transitively) on a `_Recv`."""
    users: dict = {}
    for node in nodes:
        for src in [s for s, _ in node.inputs] + list(node.control_inputs):
            users.setdefault(id(src), []).append(node)
    found = set()
    stack = [n for n in nodes if n.op == "_Recv"]
    while stack:
        node = stack.pop()
        if id(node) in found:
            continue
        found.add(id(node))
        stack.extend(users.get(id(node), ()))
    return found


def split_partitions(per_task: dict, master_task: str, remote_tasks, has_functions: bool):
    """The stages of a split step, or None when the step does not qualify (see the module
    docstring).

    Args:
        per_task: {task: its partition's nodes} of one step (left unchanged).
        master_task: the master's own task (M), run in process.
        remote_tasks: the tasks reached over RPC.
        has_functions: whether the graph has a function library (then: None).

    Returns:
        None, or (heads, local, bodies, slots): heads and bodies are {task: nodes}, local the
        nodes of M, slots the indices of the values M's partition returns for the bodies.
    """
    mine = per_task.get(master_task)
    remote = [t for t in remote_tasks if t != master_task and per_task.get(t)]
    if has_functions or not mine or not remote or set(per_task) - set(remote) - {master_task}:
        return None
    for nodes in per_task.values():
        if any(n.op in CONTROL_FLOW_OPS or (n.op != "_Retval" and may_block(n))
               for n in nodes):
            return None
    names: dict = {}

    def slot(name: str) -> int:
        return names.setdefault(name, SLOT_BASE + len(names))

    heads, bodies = {}, {}
    for task in remote:
        nodes = _clone(per_task[task])
        recvs = [n for n in nodes if n.op == "_Recv"]
        sends = [n for n in nodes if n.op == "_Send"]
        if not recvs or not sends or any(
                task_of(n.attrs["send_device"]) != master_task or n.attrs.get("client_terminal")
                for n in recvs) or any(
                task_of(n.attrs["recv_device"]) != master_task or len(n.inputs) != 1
                for n in sends):
            return None
        later = _depends_on_recv(nodes)
        if any(id(n) in later for n in sends):
            return None
        head = [n for n in nodes if id(n) not in later]
        body = [n for n in nodes if id(n) in later]
        repeated: dict = {}
        for node in body:
            inputs = []
            for src, idx in node.inputs:
                if id(src) not in later:  # a head node: repeated in the body
                    if not _repeatable(src):
                        return None
                    src = _repeat(src, repeated)
                inputs.append((src, idx))
            node.inputs = inputs
            node.control_inputs = [c for c in node.control_inputs if id(c) in later]
        body = list(repeated.values()) + [
            _arg(n, slot(n.attrs["tensor_name"]), n.attrs["tensor_type"])
            if n.op == "_Recv" else n for n in body]
        _rewire_args(body)
        heads[task] = [_retval(n, slot(n.attrs["tensor_name"])) if n.op == "_Send" else n
                       for n in head]
        bodies[task] = body
    local = _clone(mine)
    sent = {n.attrs["tensor_name"] for t in remote for n in per_task[t] if n.op == "_Recv"}
    for node in local:
        if node.op == "_Recv" and task_of(node.attrs["send_device"]) != master_task:
            if node.attrs["tensor_name"] not in names or node.attrs.get("client_terminal"):
                return None
        if node.op == "_Send" and task_of(node.attrs["recv_device"]) != master_task:
            if node.attrs["tensor_name"] not in sent or len(node.inputs) != 1 or \
                    not _small(*node.inputs[0]):
                return None
    slots = []
    rewritten = []
    for node in local:
        if node.op == "_Recv" and task_of(node.attrs["send_device"]) != master_task:
            node = _arg(node, names[node.attrs["tensor_name"]], node.attrs["tensor_type"])
        elif node.op == "_Send" and task_of(node.attrs["recv_device"]) != master_task:
            slots.append(names[node.attrs["tensor_name"]])
            node = _retval(node, names[node.attrs["tensor_name"]])
        rewritten.append(node)
    _rewire_args(rewritten, local)
    return heads, rewritten, bodies, tuple(slots)


def _rewire_args(nodes: list, before=None) -> None:
    """Points every edge to a node replaced in `nodes` (same position in `before`, or the
    same name) at its replacement."""
    if before is None:
        by_name = {n.name: n for n in nodes}
        for node in nodes:
            node.inputs = [(by_name.get(src.name, src) if src.op == "_Recv" else src, idx)
                           for src, idx in node.inputs]
            node.control_inputs = [by_name.get(c.name, c) if c.op == "_Recv" else c
                                   for c in node.control_inputs]
        return
    swap = {id(old): new for old, new in zip(before, nodes) if old is not new}
    if not swap:
        return
    for node in nodes:
        node.inputs = [(swap.get(id(src), src), idx) for src, idx in node.inputs]
        node.control_inputs = [swap.get(id(c), c) for c in node.control_inputs]
