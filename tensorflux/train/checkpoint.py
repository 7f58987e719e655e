"""`tf.train.Checkpoint`: object-based checkpoints (graph mode, as TF 1.13-1.15 run them).

A Checkpoint saves the variables reachable from the objects given to it (variables,
optimizers with their slots and non-slot variables, Keras models and layers, other
checkpoints and trackables) under keys derived from the attribute path to each variable
(see `tracking.graph_view`), plus the object graph itself under `_CHECKPOINTABLE_OBJECT_GRAPH`.
Restoring matches objects by those paths, not by graph names, so a program may rename its
variables or build them in another order and still restore.

Example:
    >>> ckpt = tf.train.Checkpoint(model=model, optimizer=optimizer)
    >>> path = ckpt.save("/tmp/run/ckpt", session=sess)        # "/tmp/run/ckpt-1"
    >>> ckpt.restore(tf.train.latest_checkpoint("/tmp/run")).run_restore_ops(sess)
"""

from __future__ import annotations

import os
import weakref

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops.array import constants as array_constants
from tensorflux.ops.io import checkpoint as io_ops
from tensorflux.ops.state import variables
from tensorflux.ops.state.variables import Variable
from tensorflux.protos import trackable_object_graph_pb2
from tensorflux.train import checkpoint_restore, checkpoint_utils
from tensorflux.train import saver as saver_mod
from tensorflux.train.tracking import graph_view
from tensorflux.train.tracking.base import AutoTrackable, is_trackable

__all__ = ["Checkpoint", "CheckpointableSaver", "read_object_graph",
           "saver_restore_by_object_graph"]


def read_object_graph(reader):
    """The `TrackableObjectGraph` of an object-based checkpoint, or None for a name-based
    one (`reader` is a `CheckpointReader`)."""
    if not reader.has_tensor(graph_view.OBJECT_GRAPH_KEY):
        return None
    graph_proto = trackable_object_graph_pb2.TrackableObjectGraph()
    graph_proto.ParseFromString(reader.get_tensor(graph_view.OBJECT_GRAPH_KEY))
    return graph_proto


def saver_restore_by_object_graph(saver, sess, save_path) -> bool:
    """Restores `saver`'s variables from an object-based checkpoint by mapping their graph
    names to checkpoint keys through its object graph; False for a name-based checkpoint.

    Raises:
        NotFoundError: a variable's name is in neither the checkpoint nor its object graph.
    """
    reader = checkpoint_utils.NewCheckpointReader(save_path)
    graph_proto = read_object_graph(reader)
    if graph_proto is None:
        return False
    keys = {attribute.full_name: attribute.checkpoint_key
            for node in graph_proto.nodes for attribute in node.attributes}
    var_list = saver._var_list
    if var_list is None:  # a Saver from a SaverDef (imported meta graph): every variable
        with sess.graph.as_default():
            var_list = variables._all_saveable_objects()
    if not isinstance(var_list, dict):
        var_list = saver_mod.op_list_to_dict(var_list)
    remapped = {}
    for name, var in var_list.items():
        key = name if reader.has_tensor(name) else keys.get(name)
        if key is None:
            raise errors.NotFoundError(
                None, None, f"Restoring from checkpoint failed: the variable '{name}' is "
                f"neither a key of the object-based checkpoint {save_path} nor a name in its "
                "object graph.")
        remapped[key] = var
    signature = tuple(sorted((k, id(v)) for k, v in remapped.items()))
    cached = getattr(saver, "_tfx_object_graph_saver", None)
    if cached is None or cached[0] != signature:
        with sess.graph.as_default():
            cached = (signature, saver_mod.Saver(var_list=remapped, name="object_graph_restore"))
        saver._tfx_object_graph_saver = cached
    cached[1].restore(sess, save_path)
    return True


class CheckpointableSaver:
    """Saves and restores the objects reachable from `root` (TF's `TrackableSaver`)."""

    def __init__(self, root):
        self._root = root
        self._save_ops: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def save(self, file_prefix, session) -> str:
        """Writes the checkpoint `file_prefix`; returns it.

        Raises:
            ValueError: no session.
            FailedPreconditionError: a variable is not initialized (named).
        """
        session = checkpoint_restore.session_or_default(session)
        file_prefix = os.fspath(file_prefix)
        with session.graph.as_default():
            view = graph_view.ObjectGraphView(self._root)
            graph_proto, keyed = view.serialize()
            save_op, prefix, graph_tensor = self._save_op(session.graph, keyed)
        session.run(save_op, {prefix: file_prefix,
                              graph_tensor: graph_proto.SerializeToString()})
        return file_prefix

    def _save_op(self, graph, keyed: dict):
        signature = tuple(sorted((key, id(var)) for key, var in keyed.items()))
        cached = self._save_ops.get(graph)
        if cached is not None and cached[0] == signature:
            return cached[1]
        for key, var in keyed.items():
            if var.graph is not graph:
                raise ValueError(f"Cannot save {key}: the variable {var.op.name} is not in the "
                                 "session's graph.")
        with graph.name_scope("save_checkpoint"):
            prefix = array_constants.placeholder(dtypes.string, shape=[], name="prefix")
            graph_tensor = array_constants.placeholder(dtypes.string, shape=[],
                                                       name="object_graph")
            names, tensors = [], []
            for key in sorted(keyed):
                var = keyed[key]
                saveable = saver_mod._variable_saveable(convert_to_tensor(var, as_ref=True),
                                                        "", key)
                names.append(key)
                tensors.append(saveable.specs[0].tensor)
            names.append(graph_view.OBJECT_GRAPH_KEY)
            tensors.append(graph_tensor)
            save_op = io_ops.save_v2(prefix, names, [""] * len(names), tensors)
        self._save_ops[graph] = (signature, (save_op, prefix, graph_tensor))
        return save_op, prefix, graph_tensor

    def restore(self, save_path):
        """A load status for `save_path` (None: initialization only).

        Raises:
            NotFoundError: there is no checkpoint at `save_path`.
        """
        if save_path is None:
            return checkpoint_restore.InitializationOnlyStatus(self._root)
        save_path = os.fspath(save_path)
        reader = checkpoint_utils.NewCheckpointReader(save_path)
        graph_proto = read_object_graph(reader)
        if graph_proto is None:
            return checkpoint_restore.NameBasedSaverStatus(self._root, save_path, reader)
        return checkpoint_restore.CheckpointLoadStatus(self._root, save_path, reader,
                                                       graph_proto)


class Checkpoint(AutoTrackable):
    """Groups trackable objects for saving and restoring (TF1 `tf.train.Checkpoint`).

    Args:
        **kwargs: dependencies by name: variables, optimizers, Keras models and layers,
            other Checkpoints or trackables (lists and dicts of them too).

    Raises:
        ValueError: a value is not trackable.
    """

    def __init__(self, **kwargs):
        object.__setattr__(self, "_tfx_save_counter", None)
        object.__setattr__(self, "_tfx_save_assign", weakref.WeakKeyDictionary())
        object.__setattr__(self, "_tfx_saver", CheckpointableSaver(self))
        for name, value in sorted(kwargs.items(), key=lambda item: item[0]):
            if not is_trackable(value):
                raise ValueError(f"`Checkpoint` was expecting a trackable object (an object "
                                 f"derived from `TrackableBase`), got {value!r} for "
                                 f"'{name}'.")
            setattr(self, name, value)

    def _maybe_create_save_counter(self):
        graph = graph_mod.get_default_graph()
        counter = self._tfx_save_counter
        if counter is None or counter.graph is not graph:
            with graph.name_scope(None), graph.device("/cpu:0"):
                counter = Variable(0, dtype=dtypes.int64, trainable=False,
                                   name="save_counter")
            object.__setattr__(self, "_tfx_save_counter", counter)
            self._track_trackable(counter, "save_counter", overwrite=True)
            return counter, True
        return counter, False

    @property
    def save_counter(self):
        """An int64 variable counting `save()` calls (created on first use)."""
        return self._maybe_create_save_counter()[0]

    def write(self, file_prefix, session=None) -> str:
        """Writes a checkpoint at exactly `file_prefix` (no counter, no state file)."""
        return self._tfx_saver.save(file_prefix, session)

    def _increment_save_counter(self, session) -> int:
        session = checkpoint_restore.session_or_default(session)
        with session.graph.as_default():
            counter, created = self._maybe_create_save_counter()
            if created:
                session.run(counter.initializer)
            assign = self._tfx_save_assign.get(counter.graph)
            if assign is None or assign[0] is not counter:
                with counter.graph.name_scope(None):
                    assign = (counter, counter.assign_add(1, read_value=True))
                self._tfx_save_assign[counter.graph] = assign
        return int(session.run(assign[1]))

    def save(self, file_prefix, session=None) -> str:
        """Saves to `"<file_prefix>-<n>"`, n the incremented `save_counter`, and records it in
        the directory's `checkpoint` state file; returns that path.

        Raises:
            ValueError: no session.
        """
        session = checkpoint_restore.session_or_default(session)
        number = self._increment_save_counter(session)
        file_prefix = os.fspath(file_prefix)
        path = self.write(f"{file_prefix}-{number}", session=session)
        checkpoint_utils.update_checkpoint_state(
            os.path.dirname(file_prefix), path, [path], save_relative_paths=True)
        return path

    def restore(self, save_path):
        """Restores the objects from `save_path` (None: nothing, `initialize_or_restore`
        initializes); returns a load status whose `run_restore_ops(session)` assigns the
        values.

        Raises:
            NotFoundError: there is no checkpoint at `save_path`.
        """
        status = self._tfx_saver.restore(save_path)
        if save_path is not None:
            self._maybe_create_save_counter()
        return status
