"""Per-signature preparation of one partition: items, edges, frames, kernels.

Everything here runs once per (signature, partition); the executors then do per-step work only.
Const nodes are folded here: their values sit in their consumers' initial input slots, or travel
with the control edge of the pivot they hang off (`Plan._fold_constants`).
Frames are assigned statically: a node is in the frame of its first input, except that an
`Enter`'s consumers are in the child frame it names and an `Exit`'s consumers in the parent.
"""

from __future__ import annotations

from collections import deque

from tensorflux.framework import errors

NORMAL, ARG, SWITCH, MERGE, ENTER, EXIT, NEXT, NOOP, SEND, TRIGGER = range(10)
PLAIN, CTX, ASYNC = range(3)

_KINDS = {
    "Switch": SWITCH, "RefSwitch": SWITCH, "Merge": MERGE, "RefMerge": MERGE,
    "Enter": ENTER, "RefEnter": ENTER, "Exit": EXIT, "RefExit": EXIT,
    "NextIteration": NEXT, "RefNextIteration": NEXT, "_Arg": ARG, "NoOp": NOOP, "_Send": SEND,
    "_HostSend": SEND, "ControlTrigger": TRIGGER,
}

# Ops worth running on a pool thread when other work is ready (NumPy releases the GIL in them).
EXPENSIVE_OPS = frozenset({
    "MatMul", "BatchMatMul", "BatchMatMulV2", "Conv2D", "Conv2DBackpropInput",
    "Conv2DBackpropFilter", "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
    "DepthwiseConv2dNativeBackpropFilter", "MaxPool", "MaxPoolGrad", "AvgPool", "AvgPoolGrad",
})


def _input_ref_flags(node) -> list:
    """Whether each flattened data input of `node` is a ref input (list args such as
    `inputs: N * Ref(T)` count once per element)."""
    flags = []
    for arg in node.op_def.inputs:
        count = 1
        if getattr(arg, "number_attr", None):
            count = int(node.attrs.get(arg.number_attr, 1))
        elif getattr(arg, "type_list_attr", None):
            count = len(node.attrs.get(arg.type_list_attr, ()))
        flags.extend([arg.is_ref] * count)
    return flags


class Item:
    """A node prepared for execution."""

    __slots__ = ("id", "node", "kind", "mode", "kernel", "n_inputs", "n_data", "n_outputs",
                 "deref", "out_edges", "control_out", "frame", "local", "slot_base",
                 "pending_init", "frame_name", "is_constant", "parallel_iterations",
                 "fetch_slots", "expensive", "arg_index", "fast", "flat_edges", "flat_controls",
                 "flat_consts", "folded", "const_value", "folded_consts")

    def __init__(self, index: int, node):
        self.id = index
        self.node = node
        self.kind = _KINDS.get(node.op, NORMAL)
        self.mode = PLAIN
        self.kernel = None
        self.n_inputs = len(node.inputs)
        self.n_data = len(node.inputs)
        self.n_outputs = len(node.output_dtypes)
        self.deref = ()
        self.out_edges: list = [[] for _ in range(self.n_outputs)]
        self.control_out: list = []
        self.frame = None
        self.local = 0
        self.slot_base = 0
        self.pending_init = 0
        self.frame_name = ""
        self.is_constant = False
        self.parallel_iterations = 1
        self.fetch_slots: list = []
        self.expensive = node.op in EXPENSIVE_OPS
        self.arg_index = node.attrs.get("index", 0) if self.kind == ARG else 0
        self.fast = False
        self.flat_edges = ()
        self.flat_controls = ()
        # Const values this item delivers when it finishes (see `Plan._fold_constants`).
        self.flat_consts = ()
        self.folded = False  # a Const never scheduled: its value is bound at plan time
        self.const_value = None  # a folded Const's value
        self.folded_consts = ()  # folded Consts hanging off this item (for traced steps)


class FrameTemplate:
    """The static shape of a frame: its items, slot count and how many Enters feed it."""

    __slots__ = ("name", "parent", "items", "num_slots", "num_enters", "pending_init",
                 "parallel_iterations", "dead_first", "inputs_init")

    def __init__(self, name: str, parent):
        self.name = name
        self.parent = parent
        self.items: list = []
        self.num_slots = 0
        self.num_enters = 0
        self.pending_init: list = []
        self.parallel_iterations = 10
        # Iteration 0 counts a loop Merge's NextIteration inputs as dead (none can arrive
        # there), so a loop entered with a dead value runs once, dead, down to its Exits;
        # partitions of a loop split over devices then see the same (dead) iteration.
        self.dead_first: list = []
        # Each iteration's input slots at its start: folded Const values, None elsewhere.
        self.inputs_init: list = []


def _input_names(node) -> tuple:
    """TF's input edge names: "src" for output 0, "src:k" otherwise."""
    return tuple(src.name if idx == 0 else f"{src.name}:{idx}" for src, idx in node.inputs)


def _kernel_for(node, device, kernel_cache):
    kernel_def = node.op_def.kernels.get(device.device_type) or node.op_def.kernels.get("CPU")
    if kernel_def is None:
        raise errors.NotFoundError(
            None, node.source_op,
            f"No kernel registered for op '{node.op}' (node '{node.name}') on device "
            f"{device.device_type}. Registered devices: {sorted(node.op_def.kernels) or 'none'}.")
    mode = ASYNC if kernel_def.asynchronous else CTX if kernel_def.ctx else PLAIN
    if node.op_def.is_stateful and kernel_cache is not None:
        # NOTE: two plans may hold different nodes of one name (partition transfers), so the
        # attrs are part of the key; same-named stateful nodes share their kernel state.
        key = (device.name, node.name, node.op,
               tuple(sorted((k, repr(v)) for k, v in node.attrs.items())))
        kernel = kernel_cache.get(key)
        if kernel is None:
            kernel = kernel_def.instantiate(node.attrs, node.name, _input_names(node))
            kernel_cache[key] = kernel
        return kernel, mode
    return kernel_def.instantiate(node.attrs, node.name, _input_names(node)), mode


def _topological(nodes) -> list:
    """Orders nodes so inputs come first, ignoring NextIteration back edges."""
    index = {id(n): i for i, n in enumerate(nodes)}
    indegree = [0] * len(nodes)
    consumers: list = [[] for _ in nodes]
    for i, node in enumerate(nodes):
        for src, _ in node.inputs:
            j = index.get(id(src))
            if j is None:
                raise errors.InternalError(None, None, f"Node {node.name} reads {src.name}, "
                                           "which is not in its partition.")
            if _KINDS.get(src.op) == NEXT:
                continue
            indegree[i] += 1
            consumers[j].append(i)
        for src in node.control_inputs:
            j = index.get(id(src))
            if j is None:
                continue
            indegree[i] += 1
            consumers[j].append(i)
    queue = deque(i for i, d in enumerate(indegree) if d == 0)
    order = []
    while queue:
        i = queue.popleft()
        order.append(nodes[i])
        for k in consumers[i]:
            indegree[k] -= 1
            if indegree[k] == 0:
                queue.append(k)
    if len(order) != len(nodes):
        stuck = [n.name for i, n in enumerate(nodes) if indegree[i] > 0][:5]
        raise errors.InvalidArgumentError(
            None, None, f"Graph has a cycle that is not a while loop, through {stuck}.")
    return order


class Plan:
    """Prepared items of one partition, with fetch positions and frame templates."""

    def __init__(self, nodes, device, fetches, kernel_cache=None):
        self.device = device
        order = _topological(list(nodes))
        self.items = [Item(i, n) for i, n in enumerate(order)]
        by_node = {id(item.node): item for item in self.items}
        self.has_control_flow = False
        self.has_async = False
        # Ops keeping per-step state (TensorArrays, stacks) need `end_step` after the step.
        self.step_scoped = False
        for item in self.items:
            node = item.node
            if item.kind not in (ARG, NOOP):
                item.kernel, item.mode = _kernel_for(node, device, kernel_cache)
            if item.kind in (SWITCH, MERGE, ENTER, EXIT, NEXT):
                self.has_control_flow = True
            if item.mode == ASYNC:
                self.has_async = True
            if node.op_def.step_scoped:
                self.step_scoped = True
            if item.kind == ENTER:
                item.frame_name = node.attrs["frame_name"]
                item.is_constant = bool(node.attrs.get("is_constant", False))
                item.parallel_iterations = int(node.attrs.get("parallel_iterations", 10))
            deref = []
            ref_flags = _input_ref_flags(node)
            for k, (src, idx) in enumerate(node.inputs):
                src_item = by_node[id(src)]
                src_item.out_edges[idx].append((item, k))
                is_ref_source = src.output_dtypes[idx].is_ref_dtype
                wants_ref = (k < len(ref_flags) and ref_flags[k]) \
                    or (item.kind in (SWITCH, MERGE, ENTER, EXIT, NEXT)
                        and node.op.startswith("Ref")) or _forwards_ref(node) \
                    or getattr(node.op_def, "passes_refs", False)
                if is_ref_source and not wants_ref:
                    deref.append(k)
            item.deref = tuple(deref)
            for src in node.control_inputs:
                src_item = by_node.get(id(src))
                if src_item is not None:
                    src_item.control_out.append(item)
                    item.pending_init += 1
        self.fetches = []
        for position, (node, idx) in enumerate(fetches):
            item = by_node[id(node)]
            item.fetch_slots.append((idx, position))
            self.fetches.append((item, idx))
        self._assign_frames()

    def _assign_frames(self) -> None:
        root = FrameTemplate("", None)
        self.frames = {"": root}
        for item in self.items:
            frame = None
            node = item.node
            sources = [src for src, _ in node.inputs] + list(node.control_inputs)
            for src in sources:
                src_item = self._item_of(src)
                if src_item is None or src_item.frame is None:
                    continue
                if src_item.kind == ENTER:
                    frame = self._child_frame(src_item)
                elif src_item.kind == EXIT:
                    frame = src_item.frame.parent or root
                else:
                    frame = src_item.frame
                break
            item.frame = frame or root
        for item in self.items:
            frame = item.frame
            item.local = len(frame.items)
            frame.items.append(item)
            item.slot_base = frame.num_slots
            frame.num_slots += item.n_inputs
            pending = item.n_inputs + item.pending_init
            if item.kind == MERGE:
                # Low bit: "still waiting for a live data input"; each control input counts 2.
                pending = 1 + 2 * item.pending_init
            frame.pending_init.append(pending)
            frame.dead_first.append(
                sum(1 for src, _ in item.node.inputs if _KINDS.get(src.op) == NEXT)
                if item.kind == MERGE else 0)
            if item.kind == ENTER:
                self._child_frame(item).num_enters += 1
        for item in self.items:
            if item.kind == MERGE:
                item.n_data = item.n_inputs
            self._check_frames(item, root)
        for frame in self.frames.values():
            frame.inputs_init = [None] * frame.num_slots
        self.root = root
        self._flatten_edges()
        self._fold_constants()
        self.root_ready = [item for item in root.items
                           if root.pending_init[item.local] == 0 and not item.folded]
        self.folded_roots = [item for item in root.items
                             if item.folded and not item.pending_init]

    def _flatten_edges(self) -> None:
        """Precomputes, for ordinary kernels, the consumers' slots in the same iteration so the
        executor activates them without further lookups."""
        for item in self.items:
            item.flat_edges = tuple(
                (index, dst, dst.slot_base + k, dst.local, dst.kind == MERGE)
                for index, edges in enumerate(item.out_edges) for dst, k in edges)
            item.flat_controls = tuple((dst, dst.local, dst.kind == MERGE)
                                       for dst in item.control_out)
            item.fast = (item.kind == NORMAL and item.mode in (PLAIN, CTX)
                         and all(dst.frame is item.frame for _, dst, *_ in item.flat_edges)
                         and all(dst.frame is item.frame for dst, *_ in item.flat_controls))

    def _fold_constants(self) -> None:
        """Takes Const nodes out of the per-step schedule.

        A Const without inputs has its value written into its consumers' initial input slots
        (their pending counts lowered by one). A Const whose only input is one control edge
        (a Const inside a cond branch or loop body hangs off the branch's pivot) becomes part
        of that source's activation: when the source finishes, the value (or DEAD, when the
        source finished dead, as the Const would have) is delivered to the Const's consumers
        in the same frame and iteration. Consts that are fetched, have control consumers,
        feed a Merge or have several control inputs keep their node.
        """
        for item in self.items:
            value = _foldable_value(item)
            if value is None:
                continue
            edges = item.out_edges[0]
            if item.pending_init == 0:
                frame = item.frame
                for dst, k in edges:
                    frame.inputs_init[dst.slot_base + k] = value
                    frame.pending_init[dst.local] -= 1
            else:
                source = next(src for src in (self._item_of(n) for n in
                                              item.node.control_inputs) if src is not None)
                source.flat_controls = tuple(entry for entry in source.flat_controls
                                             if entry[0] is not item)
                source.flat_consts += tuple((value, dst, dst.slot_base + k, dst.local)
                                            for dst, k in edges)
                source.folded_consts += (item,)
            item.folded = True
            item.const_value = value
        for item in self.items:
            item.fast = item.fast and all(dst.frame is item.frame
                                          for _, dst, *_ in item.flat_consts)

    def _check_frames(self, item, root) -> None:
        """Every edge must stay in one frame, except out of Enter (child) and Exit (parent)."""
        node = item.node
        for src in [src for src, _ in node.inputs] + list(node.control_inputs):
            src_item = self._item_of(src)
            if src_item is None:
                continue
            if src_item.kind == ENTER:
                frame = self._child_frame(src_item)
            elif src_item.kind == EXIT:
                frame = src_item.frame.parent or root
            else:
                frame = src_item.frame
            if frame is not item.frame:
                raise errors.InvalidArgumentError(
                    None, node.source_op,
                    f"Node '{node.name}' ({node.op}) has inputs from different frames: "
                    f"'{src.name}' is in frame '{frame.name}' but '{node.name}' is in frame "
                    f"'{item.frame.name}'. Values crossing into a while loop must go through "
                    "an Enter (tf.while_loop routes them automatically).")

    def _item_of(self, node):
        if not hasattr(self, "_by_node"):
            self._by_node = {id(item.node): item for item in self.items}
        return self._by_node.get(id(node))

    def _child_frame(self, enter_item) -> FrameTemplate:
        name = enter_item.frame_name
        frame = self.frames.get(name)
        if frame is None:
            frame = FrameTemplate(name, enter_item.frame)
            frame.parallel_iterations = enter_item.parallel_iterations
            self.frames[name] = frame
        return frame


def _foldable_value(item):
    """The read-only array a foldable Const item always returns, else None."""
    node = item.node
    if node.op != "Const" or item.n_inputs or item.n_outputs != 1 or item.fetch_slots \
            or item.control_out or item.pending_init > 1 or item.mode != PLAIN:
        return None
    if any(dst.kind == MERGE for dst, _ in item.out_edges[0]):
        return None
    value = item.kernel()
    if getattr(value, "flags", None) is None or value.flags.writeable:
        return None
    return value


_FORWARDING_REF_OPS = frozenset({"Identity", "RefIdentity"})


def _forwards_ref(node) -> bool:
    """Identity of a ref input stays a ref (TF's RefIdentity behaviour for `_ref` outputs)."""
    return node.op in _FORWARDING_REF_OPS and node.output_dtypes and \
        node.output_dtypes[0].is_ref_dtype
