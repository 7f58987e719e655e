"""`tf.train.Saver`: save and restore variables through SaveV2/RestoreV2 ops in the graph.

Building a Saver adds, under its name scope ("save", "save_1", ...): a string filename tensor
(`save/Const`, fed with the path), a `SaveV2` op whose `save/control_dependency` output is the
path once written, and a `RestoreV2` op feeding one `Assign` per variable, grouped as
`save/restore_all`; with `sharded=True` one SaveV2 per device writes a temporary bundle that
`MergeV2Checkpoints` merges into the prefix. Save names are the variables' op names ("w",
"dense/kernel", "global_step") unless `var_list` is a dict.
"""

from __future__ import annotations

import collections
import os
import time
import uuid

import numpy as np

from tensorflux.distribute import values as values_lib
from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.device_spec import DeviceSpec
from tensorflux.framework.op_def import get_op_def
from tensorflux.framework.saveable import SaveableObject, SaveSpec
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.formats import atomic_files, bundle
from tensorflux.ops import array as array_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.io import checkpoint as io_ops
from tensorflux.ops.state import resource_variable_ops, variables
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state.partitioned import PartitionedVariable
from tensorflux.ops.state.variables import Variable
from tensorflux.ops.strings import conversion as string_ops
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import saver_pb2
from tensorflux.train import checkpoint_utils, training_util

__all__ = ["Saver", "SaveSpec", "SaveableObject", "BaseSaverBuilder", "BulkSaverBuilder"]

_VARIABLE_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "VarHandleOp")


class ReferenceVariableSaveable(SaveableObject):
    """A ref variable: saved from its ref tensor, restored with an Assign."""

    def __init__(self, var: Tensor, slice_spec: str, name: str):
        super().__init__(var, [SaveSpec(var, slice_spec, name, dtype=var.dtype.base_dtype)],
                         name)

    def restore(self, restored_tensors, restored_shapes):
        restored = restored_tensors[0]
        if restored_shapes is not None:
            restored = array_ops.reshape(restored, restored_shapes[0])
        return state_ops.assign(
            self.op, restored,
            validate_shape=restored_shapes is None and self.op.get_shape().is_fully_defined())


class ResourceVariableSaveable(SaveableObject):
    """A resource variable: saved from a read of its handle, restored with AssignVariableOp
    (same checkpoint names as a reference variable, so either restores the other)."""

    def __init__(self, handle: Tensor, slice_spec: str, name: str):

        dtype = handle.op.get_attr("dtype")
        with handle.graph.colocate_with(handle.op):
            value = resource_variable_ops.read_variable_op(handle, dtype)
        super().__init__(handle, [SaveSpec(value, slice_spec, name, dtype=dtype,
                                           device=handle.device)], name)

    def restore(self, restored_tensors, restored_shapes):

        restored = restored_tensors[0]
        if restored_shapes is not None:
            restored = array_ops.reshape(restored, restored_shapes[0])
        with self.op.graph.colocate_with(self.op.op):
            return resource_variable_ops.AssignVariableOp(self.op, restored)


class DistributedVariableSaveable(SaveableObject):
    """A variable with one component per device: saved once (from the primary, under the
    variable's name) and restored into every component."""

    def __init__(self, variable, name: str):
        self._parts = [_variable_saveable(convert_to_tensor(c, as_ref=True), "", name)
                       for c in variable.values]
        super().__init__(self._parts[0].op, self._parts[0].specs, name)

    def restore(self, restored_tensors, restored_shapes):
        return control_flow_ops.group(*(part.restore(restored_tensors, restored_shapes)
                                        for part in self._parts))


def _variable_saveable(tensor: Tensor, slice_spec: str, name: str) -> SaveableObject:
    if tensor.op.type == "VarHandleOp":
        return ResourceVariableSaveable(tensor, slice_spec, name)
    return ReferenceVariableSaveable(tensor, slice_spec, name)


def _is_variable_tensor(value) -> bool:
    return isinstance(value, Tensor) and value.op.type in _VARIABLE_OPS


def op_list_to_dict(op_list) -> dict:
    """{save name: variable or list of partitions} from a list of Variables/SaveableObjects."""

    if not isinstance(op_list, (list, tuple, set)):
        raise TypeError(f"Variables to save should be passed in a dict or a list: {op_list}")
    result: dict = {}
    for var in sorted(op_list, key=lambda x: x.name):
        if isinstance(var, SaveableObject):
            result[var.name] = var
            continue
        if isinstance(var, PartitionedVariable):
            if var.name in result:
                raise ValueError(f"At least two variables have the same name: {var.name}")
            result[var.name] = list(var)
            continue
        if isinstance(var, Variable) and var._get_save_slice_info() is not None:
            name = var._get_save_slice_info().full_name
            if name in result and not isinstance(result[name], list):
                raise ValueError(f"Mixing slices and non-slices with the same name: {name}")
            result.setdefault(name, []).append(var)
            continue
        tensor = convert_to_tensor(var, as_ref=True)
        if not _is_variable_tensor(tensor):
            raise TypeError(f"Variable to save is not a Variable: {var}")
        name = tensor.op.name
        if name in result:
            raise ValueError(f"At least two variables have the same name: {name}")
        result[name] = var
    return result


def _saveables_for(op, name: str):
    if not isinstance(name, str):
        raise TypeError(f"names_to_saveables must be a dict mapping string names to "
                        f"trackable operations. Name is not a string: {name}")

    if isinstance(op, SaveableObject):
        yield op
        return
    if isinstance(op, values_lib.DistributedVariable):
        yield DistributedVariableSaveable(op, name)
        return
    if isinstance(op, PartitionedVariable):
        op = list(op)
    if isinstance(op, (list, tuple)):
        for part in op:
            info = part._get_save_slice_info()
            if info is None:
                raise ValueError(f"Slices must all be slices: {part.name} is not")
            if info.full_name != name:
                raise ValueError(f"Slices must all be from the same tensor: {info.full_name} != "
                                 f"{name}")
            yield _variable_saveable(convert_to_tensor(part, as_ref=True), info.spec, name)
        return
    tensor = convert_to_tensor(op, as_ref=True)
    if not _is_variable_tensor(tensor):
        raise TypeError(f"names_to_saveables must be a dict mapping string names to "
                        f"Tensors/Variables. Not a variable: {tensor}")
    yield _variable_saveable(tensor, "", name)


def validate_and_slice_inputs(names_to_saveables) -> list:
    """The SaveableObjects to save, sorted by name; each variable appears once."""
    if not isinstance(names_to_saveables, dict):
        names_to_saveables = op_list_to_dict(names_to_saveables)
    saveables = []
    seen = set()
    for name, op in sorted(names_to_saveables.items(), key=lambda kv: kv[0]):
        for saveable in _saveables_for(op, name):
            key = id(saveable.op) if saveable.op is not None else None
            if key is not None and key in seen:
                raise ValueError(f"The same saveable will be restored with two names: "
                                 f"{saveable.name}")
            seen.add(key)
            saveables.append(saveable)
    return saveables


def _set_cpu0(device: str) -> str:
    return DeviceSpec.from_string(device).replace(device_type="CPU", device_index=0).to_string()


def _string_constant(values, name):
    return constant(np.array([v.encode() for v in values], dtype=object), dtypes.string,
                    name=name)


def _placeholder_with_default(graph, value, name):
    with graph.name_scope(name) as scope:
        if not isinstance(value, Tensor):
            value = constant(value, dtypes.string, name="input")
        return get_op_def("PlaceholderWithDefault")(value, dtype=dtypes.string,
                                                    shape=TensorShape([]), name=scope)


class BaseSaverBuilder:
    """Builds the save and restore ops of a Saver (TF1's builder; see the module doc)."""

    SaveSpec = SaveSpec
    SaveableObject = SaveableObject

    def __init__(self, write_version=saver_pb2.SaverDef.V2):
        self._write_version = write_version

    def save_op(self, filename_tensor, saveables):
        specs = [spec for saveable in saveables for spec in saveable.specs]
        graph = graph_mod.get_default_graph()
        with graph.name_scope("SaveV2") as scope:
            names = _string_constant([s.name for s in specs], "tensor_names")
            slices = _string_constant([s.slice_spec for s in specs], "shape_and_slices")
            return io_ops.SaveV2(filename_tensor, names, slices, [s.tensor for s in specs],
                                 name=scope)

    def bulk_restore(self, filename_tensor, saveables, preferred_shard, restore_sequentially):
        specs = [spec for saveable in saveables for spec in saveable.specs]
        graph = graph_mod.get_default_graph()
        with graph.device("/device:CPU:0"), graph.name_scope("RestoreV2") as scope:
            names = _string_constant([s.name for s in specs], "tensor_names")
            slices = _string_constant([s.slice_spec for s in specs], "shape_and_slices")
            result = io_ops.RestoreV2(filename_tensor, names, slices,
                                      dtypes=[s.dtype for s in specs], name=scope)
        return result if isinstance(result, list) else [result]

    def sharded_filename(self, filename_tensor, shard, num_shards):
        return io_ops.sharded_filename(filename_tensor, shard, num_shards)

    def _AddSaveOps(self, filename_tensor, saveables):  # noqa: N802 - TF1 name

        save = self.save_op(filename_tensor, saveables)
        return control_flow_ops.with_dependencies([save], filename_tensor)

    def _AddRestoreOps(self, filename_tensor, saveables, restore_sequentially, reshape,  # noqa: N802
                       preferred_shard=-1, name="restore_all"):
        tensors = self.bulk_restore(filename_tensor, saveables, preferred_shard,
                                    restore_sequentially)
        assigns = []
        index = 0
        for saveable in saveables:
            shapes = None
            if reshape:
                shapes = []
                for spec in saveable.specs:
                    shape = spec.tensor.get_shape()
                    shapes.append(shape.as_list() if shape.is_fully_defined()
                                  else array_ops.shape(spec.tensor))
            count = len(saveable.specs)
            assigns.append(saveable.restore(tensors[index:index + count], shapes))
            index += count
        return control_flow_ops.group(*assigns, name=name)

    def _GroupByDevices(self, saveables):  # noqa: N802 - TF1 name
        per_device = collections.defaultdict(list)
        for saveable in saveables:
            devices = {DeviceSpec.from_string(s.device).to_string() for s in saveable.specs}
            if len(devices) != 1:
                raise ValueError(f"All tensors of a saveable object must be on the same "
                                 f"device: {saveable.name}")
            per_device[devices.pop()].append(saveable)
        return sorted(per_device.items(), key=lambda kv: kv[0])

    def _AddShardedSaveOps(self, filename_tensor, per_device):  # noqa: N802 - TF1 name

        graph = graph_mod.get_default_graph()
        with graph.device("/device:CPU:0"):
            suffix = constant(f"_temp_{uuid.uuid4().hex}/part", dtypes.string)
            tmp_prefix = string_ops.string_join([filename_tensor, suffix])
        num_shards = constant(len(per_device), dtypes.int32, name="num_shards")
        saves = []
        prefixes = []
        last_device = ""
        for shard, (device, saveables) in enumerate(per_device):
            last_device = device
            with graph.device(_set_cpu0(device)):
                prefix = self.sharded_filename(tmp_prefix, shard, num_shards)
                prefixes.append(prefix)
                saves.append(self._AddSaveOps(prefix, saveables))
        with graph.control_dependencies([s.op for s in saves]):
            with graph.device(_set_cpu0(last_device)):
                packed = concat_ops.stack(prefixes, name="MergeV2Checkpoints/checkpoint_prefixes")
                merge = io_ops.merge_v2_checkpoints(packed, filename_tensor,
                                                    delete_old_dirs=True)
                with graph.control_dependencies([merge]):
                    return array_ops.identity(filename_tensor)

    def _AddShardedRestoreOps(self, filename_tensor, per_device, restore_sequentially,  # noqa: N802
                              reshape):
        graph = graph_mod.get_default_graph()
        restores = []
        for shard, (device, saveables) in enumerate(per_device):
            with graph.device(device):
                restores.append(self._AddRestoreOps(filename_tensor, saveables,
                                                    restore_sequentially, reshape,
                                                    preferred_shard=shard,
                                                    name="restore_shard"))
        return control_flow_ops.group(*restores, name="restore_all")

    def _build_internal(self, names_to_saveables, reshape=False, sharded=False, max_to_keep=5,
                        keep_checkpoint_every_n_hours=10000.0, name=None,
                        restore_sequentially=False, filename="model", build_save=True,
                        build_restore=True):
        if not build_save or not build_restore:
            raise ValueError("save and restore operations need to be built together when "
                             "eager execution is not enabled.")
        saveables = validate_and_slice_inputs(names_to_saveables)
        if max_to_keep is None:
            max_to_keep = 0
        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or "save"):
            filename_tensor = _placeholder_with_default(graph, filename or "model", "filename")
            filename_tensor = _placeholder_with_default(graph, filename_tensor, "Const")
            if sharded:
                per_device = self._GroupByDevices(saveables)
                save_tensor = self._AddShardedSaveOps(filename_tensor,
                                                      _slices_together(per_device))
                restore_op = self._AddShardedRestoreOps(filename_tensor, per_device,
                                                        restore_sequentially, reshape)
            else:
                save_tensor = self._AddSaveOps(filename_tensor, saveables)
                restore_op = self._AddRestoreOps(filename_tensor, saveables,
                                                 restore_sequentially, reshape)
        return saver_pb2.SaverDef(
            filename_tensor_name=filename_tensor.name, save_tensor_name=save_tensor.name,
            restore_op_name=restore_op.name, max_to_keep=max_to_keep, sharded=sharded,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            version=self._write_version)

    def build(self, names_to_saveables, reshape=False, sharded=False, max_to_keep=5,
              keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
              filename="model"):
        return self._build_internal(names_to_saveables, reshape, sharded, max_to_keep,
                                    keep_checkpoint_every_n_hours, name, restore_sequentially,
                                    filename)


BulkSaverBuilder = BaseSaverBuilder


def _slices_together(per_device) -> list:
    """Save groups with every slice of a partitioned variable in the group of its first slice.

    NOTE: a bundle holds whole tensors, so one SaveV2 op must see all slices of a tensor; the
    other slices travel to it (restores still run on each slice's own device).
    """
    home: dict = {}
    for device, saveables in per_device:
        for saveable in saveables:
            if saveable.specs[0].slice_spec:
                home.setdefault(saveable.name, device)
    regrouped = collections.defaultdict(list)
    for device, saveables in per_device:
        for saveable in saveables:
            target = home.get(saveable.name, device) if saveable.specs[0].slice_spec else device
            regrouped[target].append(saveable)
    return sorted(regrouped.items(), key=lambda kv: kv[0])


def _wrap_restore_error(err, what):
    message = (f"Restoring from checkpoint failed. This is most likely due to {what} from the "
               "checkpoint. Please ensure that you have not altered the graph expected based "
               f"on the checkpoint. Original error:\n\n{err.message}")
    return type(err)(err.node_def, err.op, message)


class Saver:
    """Saves and restores variables (TF1 `tf.train.Saver`).

    Contract: `save` writes `<save_path>[-<global_step>]` atomically (an index and a data
    file), records it in the `checkpoint` state file of its directory, and deletes the oldest
    checkpoints beyond `max_to_keep` (except one every `keep_checkpoint_every_n_hours`);
    `restore` assigns every variable from the checkpoint, failing with NotFoundError naming a
    missing variable or InvalidArgumentError naming one whose shape or dtype differs.

    Crash safety: a save never loses the previous checkpoint, and the state file only ever
    names complete checkpoints. In order: stale temporary files of killed saves in the
    directory are finished or removed (`bundle.recover_directory`); the bundle is committed
    (data and index, each under a temporary name then renamed; see `lib/bundle.py` for why
    the index and data a reader finds always belong together, also when the same prefix is
    overwritten); the `.meta` file is written to a temporary name and renamed; only then is
    the `checkpoint` state file replaced (atomically) and are checkpoints beyond
    `max_to_keep` deleted (index first). A kill at any point leaves `latest_checkpoint`
    naming a complete, restorable checkpoint with its `.meta` (the new one or the previous).

    Example:
        >>> saver = tf.train.Saver(max_to_keep=3)
        >>> path = saver.save(sess, "/tmp/model.ckpt", global_step=step)
        >>> saver.restore(sess, tf.train.latest_checkpoint("/tmp"))
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=saver_pb2.SaverDef.V2, pad_step_number=False,
                 save_relative_paths=False, filename=None):
        if defer_build and var_list:
            raise ValueError("If `var_list` is provided then build cannot be deferred. Either "
                             "set defer_build=False or var_list=None.")
        if write_version != saver_pb2.SaverDef.V2:
            logging.warning("Only the V2 checkpoint format is written; write_version=%s is "
                            "treated as V2.", write_version)
            write_version = saver_pb2.SaverDef.V2
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._restore_sequentially = restore_sequentially
        self.saver_def = saver_def
        self._builder = builder
        self._is_built = False
        self._allow_empty = allow_empty
        self._is_empty = None
        self._write_version = write_version
        self._pad_step_number = pad_step_number
        self._filename = filename
        self._last_checkpoints: list = []
        self._checkpoints_to_be_deleted: list = []
        self._save_relative_paths = save_relative_paths
        self._next_checkpoint_time = time.time() + keep_checkpoint_every_n_hours * 3600
        if not defer_build:
            self.build()
        if self.saver_def:
            self._check_saver_def()
            self._write_version = self.saver_def.version

    def build(self) -> None:
        """Builds the save/restore ops (needed before `save` when `defer_build` was set)."""
        if self._is_built:
            return
        self._is_built = True
        if not self.saver_def:
            if self._builder is None:
                self._builder = BulkSaverBuilder(self._write_version)
            if self._var_list is None:
                self._var_list = variables._all_saveable_objects()
            if not self._var_list:
                if self._allow_empty:
                    self._is_empty = True
                    return
                raise ValueError("No variables to save")
            self._is_empty = False
            self.saver_def = self._builder._build_internal(
                self._var_list, reshape=self._reshape, sharded=self._sharded,
                max_to_keep=self._max_to_keep,
                keep_checkpoint_every_n_hours=self._keep_checkpoint_every_n_hours,
                name=self._name, restore_sequentially=self._restore_sequentially,
                filename=self._filename)
        elif self._name:
            prefix = self._name.rstrip("/") + "/"
            self.saver_def.filename_tensor_name = prefix + self.saver_def.filename_tensor_name
            self.saver_def.save_tensor_name = prefix + self.saver_def.save_tensor_name
            self.saver_def.restore_op_name = prefix + self.saver_def.restore_op_name
        self._check_saver_def()
        self._next_checkpoint_time = (time.time() +
                                      self.saver_def.keep_checkpoint_every_n_hours * 3600)

    def _check_saver_def(self) -> None:
        if not isinstance(self.saver_def, saver_pb2.SaverDef):
            raise ValueError(f"saver_def must be a saver_pb2.SaverDef: {self.saver_def}")
        if not self.saver_def.save_tensor_name:
            raise ValueError(f"saver_def must specify the save_tensor_name: {self.saver_def}")
        if not self.saver_def.restore_op_name:
            raise ValueError(f"saver_def must specify the restore_op_name: {self.saver_def}")

    def as_saver_def(self):
        """The SaverDef proto naming this saver's filename tensor, save tensor and restore op."""
        return self.saver_def

    def to_proto(self, export_scope=None):
        return self.saver_def

    @staticmethod
    def from_proto(saver_def, import_scope=None):
        return Saver(saver_def=saver_def, name=import_scope)

    # -- bookkeeping of kept checkpoints ------------------------------------------------------

    @property
    def last_checkpoints(self) -> list:
        """Prefixes of the checkpoints not yet deleted, oldest first."""
        return [path for path, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints) -> None:
        """Replaces the kept list (these are never deleted: their time is +inf)."""
        if not isinstance(last_checkpoints, list):
            raise TypeError("last_checkpoints must be a list")
        self._last_checkpoints = [(path, np.inf) for path in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time) -> None:
        """Replaces the kept list with `(prefix, timestamp)` pairs."""
        if not isinstance(last_checkpoints_with_time, list):
            raise TypeError("last_checkpoints_with_time must be a list")
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths) -> None:
        """Rebuilds the kept list from existing checkpoints and their file times."""
        pairs = []
        for path in checkpoint_paths:
            mtime = checkpoint_utils.get_checkpoint_mtimes([path])
            if mtime:
                pairs.append((path, mtime[0]))
        self.set_last_checkpoints_with_time(pairs)

    def _record_last_checkpoint(self, path: str) -> None:
        if not self.saver_def.max_to_keep:
            return
        self._last_checkpoints = [p for p in self._last_checkpoints if p[0] != path]
        self._last_checkpoints.append((path, time.time()))
        if len(self._last_checkpoints) > self.saver_def.max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix="meta") -> None:
        if not self._checkpoints_to_be_deleted:
            return
        path, stamp = self._checkpoints_to_be_deleted.pop(0)
        if stamp > self._next_checkpoint_time:
            self._next_checkpoint_time += self.saver_def.keep_checkpoint_every_n_hours * 3600
            return
        try:
            checkpoint_utils.remove_checkpoint(path, self.saver_def.version, meta_graph_suffix)
        except OSError as err:
            logging.warning("Ignoring: %s", err)

    # -- save and restore -------------------------------------------------------------------

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Saves the variables; returns the checkpoint prefix written (None if empty).

        Args:
            sess: the Session holding the values.
            save_path: checkpoint prefix ("/tmp/model.ckpt").
            global_step: appended as "-<step>" (an int, or a tensor/variable read in `sess`).
            latest_filename: name of the state file (default "checkpoint").
            meta_graph_suffix: suffix of the meta graph file.
            write_meta_graph: also write `<prefix>.meta` (when the meta graph exporter exists).
            write_state: update the state file and apply `max_to_keep`.

        Raises:
            TypeError: `sess` is not a session.
            ValueError: bad `latest_filename` (the directory of `save_path` is created if
                needed, as TF's SaveV2 does).
            FailedPreconditionError: a variable is not initialized (named).
        """
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        if latest_filename is None:
            latest_filename = "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fspath(save_path)
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                global_step = training_util.global_step(sess, global_step)
            step = f"{int(global_step):08d}" if self._pad_step_number else str(int(global_step))
            checkpoint_file = f"{save_path}-{step}"
        else:
            checkpoint_file = save_path
            if os.path.basename(save_path) == latest_filename and not self._sharded:
                raise ValueError(f"'latest_filename' collides with 'save_path': "
                                 f"'{latest_filename}' and '{save_path}'")
        if (not hasattr(sess, "run") or not hasattr(sess, "graph")
                or getattr(sess, "_tfx_session_wrapper", False)):
            # As TF 1.x: a MonitoredSession is no Session (save with its hooks or a raw session).
            raise TypeError(f"'sess' must be a Session; {sess}")
        parent = os.path.dirname(save_path)
        model_checkpoint_path = None
        # The meta graph is built now and written after the bundle is committed, both before
        # the state file names the checkpoint (see "Crash safety" in the class docstring).
        meta = self._meta_graph(sess, strip_default_attrs) if write_meta_graph else None
        if parent and os.path.isdir(parent):
            with atomic_files.directory_lock(parent):
                bundle.recover_directory(parent)
        if not self._is_empty:
            try:
                written = sess.run(self.saver_def.save_tensor_name,
                                   {self.saver_def.filename_tensor_name: checkpoint_file})
            except (errors.FailedPreconditionError, errors.NotFoundError) as err:
                if parent and not os.path.isdir(parent):
                    raise ValueError(f"Parent directory of {save_path} doesn't exist, can't "
                                     "save.") from err
                raise
            model_checkpoint_path = written.decode() if isinstance(written, bytes) \
                else str(written)
            if meta is not None:
                self._write_meta_graph(meta, checkpoint_file, meta_graph_suffix)
                meta = None
            if write_state:
                self._record_last_checkpoint(model_checkpoint_path)
                checkpoint_utils.update_checkpoint_state(
                    parent, model_checkpoint_path, self.last_checkpoints,
                    latest_filename=latest_filename,
                    save_relative_paths=self._save_relative_paths)
                self._maybe_delete_old_checkpoints(meta_graph_suffix)
        if meta is not None:
            self._write_meta_graph(meta, checkpoint_file, meta_graph_suffix)
        return model_checkpoint_path

    def _meta_graph(self, sess, strip_default_attrs):
        """The MetaGraphDef a save writes next to its checkpoint (not written yet)."""
        # cycle: train.meta_graph imports this module (at import time)
        from tensorflux.train import meta_graph

        with sess.graph.as_default():
            return meta_graph.export_meta_graph(saver_def=self.saver_def,
                                                strip_default_attrs=strip_default_attrs)

    @staticmethod
    def _write_meta_graph(meta, checkpoint_file, suffix) -> None:
        filename = checkpoint_utils.meta_graph_filename(checkpoint_file, suffix)
        directory = os.path.dirname(filename)
        if directory:
            os.makedirs(directory, exist_ok=True)
        atomic_files.write_file(filename, meta.SerializeToString())

    def export_meta_graph(self, filename=None, collection_list=None, as_text=False,
                          export_scope=None, clear_devices=False, clear_extras=False,
                          strip_default_attrs=False, save_debug_info=False):
        """Writes the graph with this saver's SaverDef (needs `tensorflux.train.meta_graph`)."""
        # cycle: train.meta_graph imports this module (at import time)
        from tensorflux.train import meta_graph

        return meta_graph.export_meta_graph(
            filename=filename, saver_def=self.saver_def, collection_list=collection_list,
            as_text=as_text, export_scope=export_scope, clear_devices=clear_devices,
            clear_extras=clear_extras, strip_default_attrs=strip_default_attrs)

    def restore(self, sess, save_path) -> None:
        """Restores every variable of this saver from the checkpoint at `save_path`.

        Raises:
            ValueError: `save_path` is None or not a checkpoint.
            NotFoundError: a variable is missing from the checkpoint (named).
            InvalidArgumentError: a variable's shape or dtype differs (named).
            DataLossError: the checkpoint is corrupted.
        """
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if not checkpoint_utils.checkpoint_exists(save_path):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        logging.info("Restoring parameters from %s", save_path)
        try:
            sess.run(self.saver_def.restore_op_name,
                     {self.saver_def.filename_tensor_name: save_path})
        except errors.NotFoundError as err:
            # cycle: train.checkpoint builds on this module (saveables)
            from tensorflux.train import checkpoint as object_checkpoint

            # As TF 1.15: an object-based checkpoint is restored through its object graph's
            # graph names (`full_name`) -> checkpoint keys.
            if object_checkpoint.saver_restore_by_object_graph(self, sess, save_path):
                return
            raise _wrap_restore_error(err, "a Variable name or other graph key that is "
                                      "missing") from None
        except errors.InvalidArgumentError as err:
            raise _wrap_restore_error(err, "a mismatch between the current graph and the "
                                      "graph") from None
