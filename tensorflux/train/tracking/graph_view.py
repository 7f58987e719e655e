"""The dependency graph of trackable objects, as stored in an object-based checkpoint.

Walking breadth-first from the root gives every reachable object a node id (the root is 0)
and a path of local names; a variable's checkpoint key is its escaped path plus
"/.ATTRIBUTES/VARIABLE_VALUE" (e.g. "model/layer_with_weights-0/kernel/.ATTRIBUTES/..."). An
optimizer's slot variables get nodes after all others and keys
"<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot name>/.ATTRIBUTES/VARIABLE_VALUE".
The serialized `TrackableObjectGraph` is saved under `OBJECT_GRAPH_KEY`. The layout and the
names are TensorFlow's, so checkpoints move between the two systems.
"""

from __future__ import annotations

import collections

from tensorflux.framework import graph as graph_mod
from tensorflux.ops.state.variables import Variable
from tensorflux.protos import trackable_object_graph_pb2
from tensorflux.train.optimizer import Optimizer
from tensorflux.train.tracking.base import is_layer_like, is_trackable

__all__ = ["OBJECT_GRAPH_KEY", "VARIABLE_VALUE", "attribute_dependencies", "dependencies",
           "has_slots", "ObjectGraphView",
           "escape_local_name", "is_variable"]

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
VARIABLE_VALUE = "VARIABLE_VALUE"
_ATTRIBUTES = ".ATTRIBUTES"
_OPTIMIZER_SLOT = ".OPTIMIZER_SLOT"

_TrackableObject = trackable_object_graph_pb2.TrackableObjectGraph.TrackableObject


def is_variable(value) -> bool:
    return isinstance(value, Variable)


def escape_local_name(name: str) -> str:
    """A local name as it appears in a key: "." doubled, "/" written ".S"."""
    return name.replace(".", "..").replace("/", ".S")


def _optimizer_dependencies(optimizer) -> list:
    graph = graph_mod.get_default_graph()
    found = [(name, var) for (name, g), var in optimizer._non_slot_dict.items() if g is graph]
    return sorted(found, key=lambda item: item[0])


def dependencies(obj) -> list:
    """The `(local_name, child)` dependencies of `obj` (children that are not trackable, such
    as None or plain numbers, are left out)."""
    if is_variable(obj):
        return []
    if isinstance(obj, Optimizer):
        found = _optimizer_dependencies(obj)
        if hasattr(type(obj), "_checkpoint_dependencies"):  # a wrapper: its inner objects
            found += list(obj._checkpoint_dependencies)
    elif isinstance(obj, (list, tuple)):
        found = [(str(i), v) for i, v in enumerate(obj)]
    elif isinstance(obj, dict):
        found = [(str(k), v) for k, v in obj.items()]
    elif hasattr(type(obj), "_checkpoint_dependencies"):
        found = list(obj._checkpoint_dependencies)
    elif is_layer_like(obj):
        found = attribute_dependencies(obj)
    else:
        found = []
    return [(name, child) for name, child in found if is_trackable(child)]


def has_slots(obj) -> bool:
    """Whether `obj` is an optimizer (a `tf.train.Optimizer`, or any object with
    `get_slot` and `get_slot_names`, as the Keras optimizers)."""
    return isinstance(obj, Optimizer) or (
        callable(getattr(obj, "get_slot", None))
        and callable(getattr(obj, "get_slot_names", None)) and not is_variable(obj))


def attribute_dependencies(obj) -> list:
    """A layer's dependencies, as TF 1.x tracks them: its public attributes holding something
    trackable (a variable, a layer, an optimizer, a list of layers) by attribute name, then
    its weights not held in an attribute by their own name ("kernel", "bias")."""
    found, seen = [], set()
    for name, value in list(vars(obj).items()):
        if name.startswith("_") or not is_trackable(value):
            continue
        found.append((name, value))
        seen.add(id(value))
        if isinstance(value, (list, tuple)):
            seen.update(id(v) for v in value)
    names = {name for name, _ in found}
    for var in list(obj._trainable_weights) + list(obj._non_trainable_weights):
        if id(var) in seen or not is_variable(var):
            continue
        name = var.op.name.rsplit("/", 1)[-1]
        while name in names:
            name += "_"
        names.add(name)
        found.append((name, var))
        seen.add(id(var))
    return found


def _slot_references(optimizer, objects) -> list:
    """`(original variable, slot name, slot variable)` of `optimizer` for `objects`, slot
    names outermost (TF's order)."""
    refs = []
    for slot_name in optimizer.get_slot_names():
        for original in objects:
            if is_variable(original):
                slot = optimizer.get_slot(original, slot_name)
                if slot is not None:
                    refs.append((original, slot_name, slot))
    return refs


class ObjectGraphView:
    """The objects reachable from `root`, their node ids, paths and checkpoint keys."""

    def __init__(self, root):
        self.root = root
        self.objects: list = []
        self.paths: dict = {}
        self.children: dict = {}
        self.slots: dict = {}
        self._walk()

    def node_id(self, obj) -> int | None:
        return self._ids.get(id(obj))

    def _add(self, obj, path) -> int:
        self._ids[id(obj)] = len(self.objects)
        self.objects.append(obj)
        self.paths[id(obj)] = path
        return self._ids[id(obj)]

    def _walk(self) -> None:
        self._ids: dict = {}
        self._add(self.root, ())
        queue = collections.deque([self.root])
        while queue:
            obj = queue.popleft()
            refs = []
            for name, child in dependencies(obj):
                if id(child) not in self._ids:
                    self._add(child, self.paths[id(obj)] + (name,))
                    queue.append(child)
                refs.append((name, self._ids[id(child)]))
            self.children[id(obj)] = refs
        for optimizer in [o for o in self.objects if has_slots(o)]:
            refs = []
            for original, slot_name, slot in _slot_references(optimizer, list(self.objects)):
                if id(slot) not in self._ids:
                    self._add(slot, None)
                    self.children[id(slot)] = []
                refs.append((self._ids[id(original)], slot_name, self._ids[id(slot)]))
                self.slots[id(slot)] = (original, optimizer, slot_name)
            self.children.setdefault(id(optimizer), [])
            self.slots[("refs", id(optimizer))] = refs

    def object_path(self, obj) -> str:
        path = self.paths.get(id(obj))
        if path is None:
            original, optimizer, slot_name = self.slots[id(obj)]
            return "/".join([self.object_path(original), _OPTIMIZER_SLOT,
                             self.object_path(optimizer), escape_local_name(slot_name)])
        return "/".join(escape_local_name(name) for name in path)

    def variable_key(self, var) -> str:
        return f"{self.object_path(var)}/{_ATTRIBUTES}/{VARIABLE_VALUE}"

    def variables(self) -> list:
        """Every variable in the graph, in node order."""
        return [obj for obj in self.objects if is_variable(obj)]

    def serialize(self):
        """`(TrackableObjectGraph, {checkpoint key: variable})` for this graph."""
        graph_proto = trackable_object_graph_pb2.TrackableObjectGraph()
        keyed = {}
        for obj in self.objects:
            node = graph_proto.nodes.add()
            for name, child_id in self.children.get(id(obj), []):
                node.children.add(node_id=child_id, local_name=name)
            if is_variable(obj):
                key = self.variable_key(obj)
                keyed[key] = obj
                node.attributes.add(name=VARIABLE_VALUE, full_name=obj.op.name,
                                    checkpoint_key=key)
            for original_id, slot_name, slot_id in self.slots.get(("refs", id(obj)), []):
                node.slot_variables.add(original_variable_node_id=original_id,
                                        slot_name=slot_name, slot_variable_node_id=slot_id)
        _mark_checkpoint_values(graph_proto)
        return graph_proto, keyed


def _mark_checkpoint_values(graph_proto) -> None:
    """Sets `has_checkpoint_values` on each node: it or a node it reaches holds a value."""
    nodes = graph_proto.nodes
    has = [bool(node.attributes) for node in nodes]
    changed = True
    while changed:
        changed = False
        for i, node in enumerate(nodes):
            if has[i]:
                continue
            reached = [c.node_id for c in node.children]
            reached += [s.slot_variable_node_id for s in node.slot_variables]
            if any(has[j] for j in reached):
                has[i] = changed = True
    for node, value in zip(nodes, has):
        node.has_checkpoint_values.value = value
