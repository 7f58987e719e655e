"""What `tf.train.Checkpoint.restore` returns: load statuses that match and restore objects.

Matching walks the Python dependency graph and the checkpoint's `TrackableObjectGraph` side
by side from the root (node 0), following children with the same local name, then slot
variables of matched optimizers. It is redone whenever restore ops are run, so variables
created after `restore()` (Keras layers built later, optimizer slots made by `minimize`) are
restored by the next `run_restore_ops` / `initialize_or_restore` (deferred restoration, as
graph-mode TF 1.x does). Each variable gets its RestoreV2 + assign ops once.
"""

from __future__ import annotations

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor_conversion import constant, convert_to_tensor
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.io import checkpoint as io_ops
from tensorflux.ops.state import variables
from tensorflux.platform import tf_logging as logging
from tensorflux.train import saver as saver_mod
from tensorflux.train.tracking import graph_view
from tensorflux.train.tracking.graph_view import VARIABLE_VALUE, is_variable

__all__ = ["CheckpointLoadStatus", "InitializationOnlyStatus", "NameBasedSaverStatus",
           "session_or_default"]


def session_or_default(session):
    """`session`, else the default session; ValueError when there is none."""
    session = session or graph_mod.get_default_session()
    if session is None:
        raise ValueError("A session is required to save or restore a checkpoint in graph "
                         "mode: pass `session=` or enter `with tf.Session() as sess:`.")
    return session


class _Restorer:
    """Builds (once per variable) the ops that assign a variable from checkpoint keys."""

    def __init__(self, save_path, reader):
        self._save_path = save_path
        self._reader = reader
        self._shapes = reader.get_variable_to_shape_map()
        self._dtypes = reader.get_variable_to_dtype_map()
        self._built: dict = {}

    def ops_for(self, pairs) -> list:
        """Restore ops for `(variable, key)` pairs (built for the new ones, in one RestoreV2
        per graph).

        Raises:
            NotFoundError: a key is not in the checkpoint.
            InvalidArgumentError: the variable's shape or dtype differs from the saved one.
        """
        new = [(var, key) for var, key in pairs if id(var) not in self._built]
        by_graph: dict = {}
        for var, key in new:
            self._check(var, key)
            by_graph.setdefault(var.graph, []).append((var, key))
        for graph, group in by_graph.items():
            with graph.as_default(), graph.name_scope("checkpoint_restore"):
                prefix = constant(self._save_path, dtypes.string, name="prefix")
                tensors = io_ops.restore_v2(prefix, [k for _, k in group], [""] * len(group),
                                            [self._dtypes[k] for _, k in group])
                for (var, key), tensor in zip(group, tensors):
                    saveable = saver_mod._variable_saveable(
                        convert_to_tensor(var, as_ref=True), "", key)
                    op = saveable.restore([tensor], None)
                    self._built[id(var)] = getattr(op, "op", op)
        return [self._built[id(var)] for var, _ in pairs]

    def _check(self, var, key) -> None:
        if key not in self._shapes:
            raise errors.NotFoundError(None, None, f"Key {key} not found in checkpoint "
                                       f"{self._save_path} (restoring {var.op.name})")
        saved = self._dtypes[key]
        if saved != var.dtype.base_dtype:
            raise errors.InvalidArgumentError(
                None, None, f"tensor_name = {key}; expected dtype {var.dtype.base_dtype.name} "
                f"does not equal original dtype {saved.name} (variable {var.op.name})")
        shape = var.get_shape()
        if shape.is_fully_defined() and shape.as_list() != list(self._shapes[key]):
            raise errors.InvalidArgumentError(
                None, None, f"Received incompatible tensor with shape {self._shapes[key]} when "
                f"attempting to restore variable {var.op.name} with shape {shape.as_list()} "
                f"(checkpoint key {key})")


def _run(session, ops) -> None:
    if ops:
        session.run(control_flow_ops.group(*ops) if len(ops) > 1 else ops[0])


def _initializers(session, variables_to_init) -> None:
    if variables_to_init:
        with variables_to_init[0].graph.as_default():
            session.run(variables.variables_initializer(variables_to_init))


class _Match:
    """One matching of the Python objects under `root` against a checkpoint's object graph."""

    def __init__(self, root, graph_proto):
        self.view = graph_view.ObjectGraphView(root)
        self.by_node: dict = {0: root}
        self.node_of: dict = {id(root): 0}
        nodes = self.nodes = graph_proto.nodes
        if not nodes:
            raise errors.DataLossError(None, None, "The checkpoint's object graph is empty")
        queue = [root]
        while queue:
            obj = queue.pop(0)
            node = nodes[self.node_of[id(obj)]]
            children = {ref.local_name: ref.node_id for ref in node.children}
            for name, child in graph_view.dependencies(obj):
                node_id = children.get(name)
                if node_id is None or id(child) in self.node_of or node_id in self.by_node:
                    continue
                self._bind(child, node_id)
                queue.append(child)
        for node_id, obj in list(self.by_node.items()):
            if not graph_view.has_slots(obj):
                continue
            for ref in nodes[node_id].slot_variables:
                original = self.by_node.get(ref.original_variable_node_id)
                if original is None or not is_variable(original):
                    continue
                slot = obj.get_slot(original, ref.slot_name)
                if slot is not None and id(slot) not in self.node_of:
                    self._bind(slot, ref.slot_variable_node_id)

    def _bind(self, obj, node_id) -> None:
        if not 0 <= node_id < len(self.nodes):
            raise errors.DataLossError(None, None, f"The checkpoint's object graph refers to "
                                       f"node {node_id} of {len(self.nodes)}")
        self.by_node[node_id] = obj
        self.node_of[id(obj)] = node_id

    def variable_keys(self, graph=None) -> list:
        """`(variable, checkpoint key)` of every matched variable (of `graph` if given)."""
        pairs = []
        for node_id, obj in sorted(self.by_node.items()):
            if is_variable(obj) and (graph is None or obj.graph is graph):
                for attribute in self.nodes[node_id].attributes:
                    if attribute.name == VARIABLE_VALUE:
                        pairs.append((obj, attribute.checkpoint_key))
        return pairs

    def unmatched_objects(self) -> list:
        """Python objects with values (variables) that matched no checkpointed object."""
        return [o for o in self.view.objects if id(o) not in self.node_of and is_variable(o)]


class CheckpointLoadStatus:
    """The status of restoring an object-based checkpoint (TF's `CheckpointLoadStatus`)."""

    def __init__(self, root, save_path, reader, graph_proto):
        self._root = root
        self._graph_proto = graph_proto
        self._restorer = _Restorer(save_path, reader)
        self._save_path = save_path

    def _match(self) -> _Match:
        return _Match(self._root, self._graph_proto)

    def assert_consumed(self):
        """Asserts every object in the checkpoint was matched, and every Python object in the
        dependency graph has a checkpointed value.

        Raises:
            AssertionError: naming the first unresolved checkpoint node or Python objects.
        """
        match = self._match()
        for node_id, node in enumerate(self._graph_proto.nodes):
            # As TF: only nodes holding values count (an object without values either does
            # not matter or has a child that holds one).
            if node.attributes and node_id not in match.by_node:
                raise AssertionError(f"Unresolved object in checkpoint {self._save_path}: "
                                     f"{_describe_node(node)}")
        return self.assert_existing_objects_matched()

    def assert_existing_objects_matched(self):
        """Asserts every Python object currently in the dependency graph matched a
        checkpointed object.

        Raises:
            AssertionError: naming the unmatched objects.
        """
        unmatched = self._match().unmatched_objects()
        if unmatched:
            raise AssertionError("Some Python objects were not bound to checkpointed values, "
                                 "likely due to changes in the Python program: "
                                 f"{[_describe(o) for o in unmatched]}")
        return self

    def assert_nontrivial_match(self):
        """Asserts something other than the root was matched (as TF, a Checkpoint's save
        counter counts).

        Raises:
            AssertionError: nothing else matched.
        """
        if len(self._match().by_node) <= 1:
            raise AssertionError("Nothing except the root object matched a checkpointed value. "
                                 "Typically this means that the checkpoint does not match the "
                                 f"Python program. Checkpoint: {self._save_path}")
        return self

    def expect_partial(self):
        """Silences warnings about unused checkpoint values; returns self."""
        return self

    def run_restore_ops(self, session=None) -> None:
        """Runs the restore ops of every matched variable (including ones created since
        `restore()`)."""
        session = session_or_default(session)
        _run(session, self._restorer.ops_for(self._match().variable_keys(session.graph)))

    def streaming_restore(self, session) -> int:
        """Restores the matched variables not restored by an earlier `streaming_restore` call
        (for Keras: variables created after `load_weights`, when a model builds later);
        returns how many were restored."""
        streamed = self.__dict__.setdefault("_streamed", set())
        pairs = [(v, k) for v, k in self._match().variable_keys(session.graph)
                 if id(v) not in streamed]
        _run(session, self._restorer.ops_for(pairs))
        streamed.update(id(v) for v, _ in pairs)
        return len(pairs)

    def initialize_or_restore(self, session=None) -> None:
        """Restores the matched variables and initializes the other variables of the
        dependency graph."""
        session = session_or_default(session)
        match = self._match()
        _run(session, self._restorer.ops_for(match.variable_keys(session.graph)))
        _initializers(session, [o for o in match.unmatched_objects()
                                if is_variable(o) and o.graph is session.graph])


class InitializationOnlyStatus:
    """`restore(None)`: nothing to restore; `initialize_or_restore` initializes variables."""

    def __init__(self, root):
        self._root = root

    def _fail(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being "
                             "restored.")

    def assert_consumed(self):
        self._fail()

    def assert_existing_objects_matched(self):
        self._fail()

    def assert_nontrivial_match(self):
        self._fail()

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None) -> None:
        """No-op (nothing to restore)."""

    def initialize_or_restore(self, session=None) -> None:
        """Runs the initializers of every variable in the dependency graph."""
        session = session_or_default(session)
        _initializers(session, graph_view.ObjectGraphView(self._root).variables())


class NameBasedSaverStatus:
    """Restoring a name-based (`tf.train.Saver`) checkpoint through the object API: variables
    are matched by their graph names."""

    def __init__(self, root, save_path, reader):
        self._root = root
        self._reader = reader
        self._restorer = _Restorer(save_path, reader)
        self._save_path = save_path

    def _pairs(self):
        found, missing = [], []
        for var in graph_view.ObjectGraphView(self._root).variables():
            target = found if self._reader.has_tensor(var.op.name) else missing
            target.append((var, var.op.name))
        return found, missing

    def assert_consumed(self):
        """Raises AssertionError naming variables without a value in the checkpoint."""
        _, missing = self._pairs()
        if missing:
            raise AssertionError(f"Some objects had attributes which were not restored from "
                                 f"{self._save_path}: {[name for _, name in missing]}")
        return self

    assert_existing_objects_matched = assert_consumed

    def assert_nontrivial_match(self):
        found, _ = self._pairs()
        if not found:
            raise AssertionError(f"No variable matched a name in {self._save_path}")
        return self

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None) -> None:
        """Restores every variable whose graph name is a key of the checkpoint."""
        session = session_or_default(session)
        found, missing = self._pairs()
        if missing:
            logging.warning("Variables not found in name-based checkpoint %s: %s",
                            self._save_path, [name for _, name in missing])
        _run(session, self._restorer.ops_for(found))

    def initialize_or_restore(self, session=None) -> None:
        session = session_or_default(session)
        found, missing = self._pairs()
        _run(session, self._restorer.ops_for(found))
        _initializers(session, [var for var, _ in missing])


def _describe(obj) -> str:
    if is_variable(obj):
        return f"<Variable '{obj.op.name}' shape={obj.get_shape()}>"
    return repr(obj) if len(repr(obj)) < 120 else f"<{type(obj).__name__}>"


def _describe_node(node) -> str:
    return f"values {[a.checkpoint_key for a in node.attributes]}"
