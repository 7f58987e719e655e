"""Checkpoint files: the `checkpoint` state file, reading bundles, and init_from_checkpoint.

The state file (default name `checkpoint`, in the checkpoints' directory) is a
`CheckpointState` protobuf in text format, as TensorFlow writes it; paths in it may be relative
to that directory. A checkpoint "exists" when its index file (`<prefix>.index`) does.
"""

from __future__ import annotations

import glob
import os
import re
import time

from google.protobuf import text_format

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.lib.formats import atomic_files, bundle
from tensorflux.ops.io import checkpoint as io_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state import variable_scope, variables
from tensorflux.platform import gfile
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import checkpoint_state_pb2, types_pb2

__all__ = ["NewCheckpointReader", "list_variables", "load_variable",
           "load_checkpoint", "latest_checkpoint", "get_checkpoint_state",
           "update_checkpoint_state", "generate_checkpoint_state_proto", "checkpoint_exists",
           "get_checkpoint_mtimes", "remove_checkpoint", "init_from_checkpoint",
           "wait_for_new_checkpoint", "checkpoints_iterator"]


# -- the checkpoint state file ---------------------------------------------------------------

def _state_filename(save_dir, latest_filename=None) -> str:
    return os.path.join(os.fspath(save_dir), latest_filename or "checkpoint")


def generate_checkpoint_state_proto(save_dir, model_checkpoint_path,
                                    all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None,
                                    last_preserved_timestamp=None):
    """Builds a CheckpointState; the newest path is appended to the list when missing (to the
    caller's list itself when one is given, as TF does).

    When `save_dir` is relative, relative paths are rewritten to be relative to it.
    """
    if isinstance(all_model_checkpoint_paths, list):
        paths = all_model_checkpoint_paths
    else:
        paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if all_model_checkpoint_timestamps and len(all_model_checkpoint_timestamps) != len(paths):
        raise ValueError(f"Checkpoint timestamps, if provided, must match checkpoint paths "
                         f"({len(all_model_checkpoint_timestamps)} vs {len(paths)})")
    if not os.path.isabs(save_dir):
        if not os.path.isabs(model_checkpoint_path):
            model_checkpoint_path = os.path.relpath(model_checkpoint_path, save_dir)
        paths = [p if os.path.isabs(p) else os.path.relpath(p, save_dir) for p in paths]
    state = checkpoint_state_pb2.CheckpointState(
        model_checkpoint_path=model_checkpoint_path, all_model_checkpoint_paths=paths,
        all_model_checkpoint_timestamps=list(all_model_checkpoint_timestamps or []))
    if last_preserved_timestamp is not None:
        state.last_preserved_timestamp = last_preserved_timestamp
    return state


def _atomic_write(path: str, text: str) -> None:
    try:
        atomic_files.write_file(path, text)
    except OSError as err:  # TF's class (PermissionDeniedError, ...) naming the state file
        with gfile.status_errors(path):
            raise OSError(err.errno, err.strerror, path) from err


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None, save_relative_paths=False):
    """Atomically rewrites the state file in `save_dir` (TF1 `tf.train.update_checkpoint_state`).

    Args:
        save_dir: directory of the state file.
        model_checkpoint_path: the newest checkpoint prefix.
        all_model_checkpoint_paths: checkpoints still kept, oldest first.
        latest_filename: state file name (default "checkpoint").
        save_relative_paths: write paths relative to `save_dir`.

    Raises:
        RuntimeError: the state file would overwrite the checkpoint itself.
    """
    save_dir = os.fspath(save_dir)
    paths = list(all_model_checkpoint_paths or [])
    if save_relative_paths:
        def relative(p):
            return os.path.relpath(p, save_dir) if os.path.isabs(p) else p

        model_checkpoint_path = relative(model_checkpoint_path)
        paths = [relative(p) for p in paths]
    state = generate_checkpoint_state_proto(save_dir, model_checkpoint_path, paths,
                                            all_model_checkpoint_timestamps,
                                            last_preserved_timestamp)
    filename = _state_filename(save_dir, latest_filename)
    if filename == state.model_checkpoint_path:
        raise RuntimeError(f"Save path '{model_checkpoint_path}' conflicts with path used for "
                           "checkpoint state.  Please use a different save path.")
    _atomic_write(filename, text_format.MessageToString(state))


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState in `checkpoint_dir` (paths made absolute-or-joined), or None.

    A missing or unreadable state file gives None (with a warning when unreadable).

    Example:
        >>> tf.train.get_checkpoint_state("/tmp/model").all_model_checkpoint_paths
        ['/tmp/model/model.ckpt-3', '/tmp/model/model.ckpt-4']
    """
    checkpoint_dir = os.fspath(checkpoint_dir)
    filename = _state_filename(checkpoint_dir, latest_filename)
    if not os.path.isfile(filename):
        return None
    try:
        with open(filename, encoding="utf-8") as f:
            state = text_format.Parse(f.read(), checkpoint_state_pb2.CheckpointState())
    except (OSError, UnicodeDecodeError, text_format.ParseError) as err:
        logging.warning("%s: %s", type(err).__name__, err)
        logging.warning("%s: Checkpoint ignored", filename)
        return None
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")
    if not os.path.isabs(state.model_checkpoint_path):
        state.model_checkpoint_path = os.path.join(checkpoint_dir, state.model_checkpoint_path)
    for i, path in enumerate(state.all_model_checkpoint_paths):
        if not os.path.isabs(path):
            state.all_model_checkpoint_paths[i] = os.path.join(checkpoint_dir, path)
    return state


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The newest checkpoint prefix recorded in `checkpoint_dir` whose files exist, or None."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and state.model_checkpoint_path:
        prefix = state.model_checkpoint_path
        if glob.glob(glob.escape(prefix) + ".index") or glob.glob(glob.escape(prefix)):
            return prefix
        logging.error("Couldn't match files for checkpoint %s", prefix)
    return None


def checkpoint_exists(checkpoint_prefix) -> bool:
    """Whether a checkpoint (its `.index` file, or a file at the prefix itself) exists."""
    checkpoint_prefix = os.fspath(checkpoint_prefix)
    return bool(glob.glob(checkpoint_prefix + ".index") or glob.glob(checkpoint_prefix))


def get_checkpoint_mtimes(checkpoint_prefixes) -> list:
    """Modification times (seconds) of the checkpoints that exist among the prefixes."""
    mtimes = []
    for prefix in checkpoint_prefixes:
        for pattern in (os.fspath(prefix) + ".index", os.fspath(prefix)):
            found = glob.glob(pattern)
            if found:
                mtimes.append(os.stat(found[0]).st_mtime_ns / 1e9)
                break
    return mtimes


def meta_graph_filename(checkpoint_filename, meta_graph_suffix="meta") -> str:
    """'model.ckpt-10' -> 'model.ckpt-10.meta' (shard suffixes are dropped)."""
    base = re.sub(r"-[\d\?]+-of-\d+$", "", os.fspath(checkpoint_filename))
    return f"{base}.{meta_graph_suffix}"


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=2,
                      meta_graph_suffix="meta") -> None:
    """Deletes a checkpoint's index, data files and meta graph (missing files are fine)."""
    checkpoint_prefix = os.fspath(checkpoint_prefix)
    # The index goes first: a crash part way leaves no index leading to missing data.
    # A V1 request deletes the V2 files too: Saver(write_version=V1) writes V2 here.
    paths = [checkpoint_prefix + ".index"]
    paths += glob.glob(glob.escape(checkpoint_prefix) + ".data-?????-of-?????")
    paths += glob.glob(glob.escape(checkpoint_prefix) + ".data-?????-of-?????" +
                       atomic_files.MARK + "*")
    if checkpoint_format_version != 2:  # one file; sharded: a pattern ("m-?????-of-00002")
        paths += glob.glob(checkpoint_prefix) or [checkpoint_prefix]
    paths.append(meta_graph_filename(checkpoint_prefix, meta_graph_suffix))
    for path in paths:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


# -- reading checkpoints ---------------------------------------------------------------------

class CheckpointReader:
    """Reads the tensors of one checkpoint (TF1 `tf.train.NewCheckpointReader`).

    Example:
        >>> reader = tf.train.NewCheckpointReader("/tmp/model.ckpt-4")
        >>> reader.get_variable_to_shape_map()
        {'w': [2, 3], 'global_step': []}
    """

    def __init__(self, prefix):
        self._prefix = os.fspath(prefix)
        if not bundle.bundle_exists(self._prefix):
            raise errors.NotFoundError(
                None, None, "Unsuccessful TensorSliceReader constructor: Failed to find any "
                f"matching files for {self._prefix}")
        self._reader = bundle.BundleReader(self._prefix)

    def has_tensor(self, name) -> bool:
        return self._reader.has_tensor(name)

    def get_tensor(self, name):
        """The saved value of `name` (a NumPy array; bytes objects for strings).

        Raises:
            NotFoundError: no tensor `name` in the checkpoint.
            DataLossError: its bytes fail their checksum.
        """
        if not self._reader.has_tensor(name):
            raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint")
        value = self._reader.get_tensor(name)
        return value[()] if value.ndim == 0 and value.dtype == object else value

    def get_variable_to_shape_map(self) -> dict:
        return {k: list(self._reader.get_dtype_and_shape(k)[1]) for k in self._reader.keys()}

    def get_variable_to_dtype_map(self) -> dict:
        return {k: dtypes.as_dtype(self._reader.get_dtype_and_shape(k)[0])
                for k in self._reader.keys()}

    def debug_string(self) -> bytes:
        lines = []
        for key in self._reader.keys():
            enum, shape = self._reader.get_dtype_and_shape(key)
            dims = ",".join(str(d) for d in shape)
            lines.append(f"{key} ({types_pb2.DataType.Name(enum)}) [{dims}]\n")
        return "".join(lines).encode()

    def close(self) -> None:
        self._reader.close()

    def __del__(self):
        reader = getattr(self, "_reader", None)
        if reader is not None:
            reader.close()


def NewCheckpointReader(filepattern) -> CheckpointReader:  # noqa: N802 - TF1 name
    """A reader for the checkpoint at prefix `filepattern`.

    Raises:
        NotFoundError: there is no checkpoint at the prefix.
        DataLossError: its index is corrupted.
    """
    return CheckpointReader(filepattern)


def _checkpoint_filename(ckpt_dir_or_file) -> str:
    ckpt_dir_or_file = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(ckpt_dir_or_file):
        return latest_checkpoint(ckpt_dir_or_file)
    return ckpt_dir_or_file


def load_checkpoint(ckpt_dir_or_file) -> CheckpointReader:
    """A reader for a checkpoint prefix, or for the latest checkpoint of a directory."""
    filename = _checkpoint_filename(ckpt_dir_or_file)
    if filename is None:
        raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory "
                         f"{ckpt_dir_or_file}")
    return NewCheckpointReader(filename)


def load_variable(ckpt_dir_or_file, name):
    """The saved value of variable `name` (a trailing ':0' is ignored)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file) -> list:
    """Sorted `(name, shape)` pairs of the tensors in a checkpoint.

    Example:
        >>> tf.train.list_variables("/tmp/model")
        [('global_step', []), ('w', [2, 3])]
    """
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


# -- init_from_checkpoint --------------------------------------------------------------------

def _set_checkpoint_initializer(variable, ckpt_file, tensor_name) -> None:
    graph = graph_mod.get_default_graph()
    base = variable.dtype.base_dtype
    with graph.device(variable.device):
        restored = io_ops.restore_v2(ckpt_file, [tensor_name], [""], [base],
                                     name="checkpoint_initializer")[0]
    restored.set_shape(variable.shape)
    with graph.colocate_with(variable.op):
        if getattr(variable, "_is_resource_variable", False):
            variable._initializer_op = variable.assign(restored, read_value=False)
        else:
            variable._initializer_op = state_ops.assign(variable._ref(), restored).op
    variable._initial_value = restored


def init_from_checkpoint(ckpt_dir_or_file, assignment_map) -> None:
    """Makes variables' initializers load values from a checkpoint (TF1 semantics).

    `assignment_map` (a dict or a list of (key, value) pairs, so one checkpoint tensor can
    initialize several variables) maps checkpoint names to variables or `get_variable` names
    (`{"old/w": "new/w"}` or `{"old/w": var}`) or scopes (`{"old_scope/": "new_scope/"}`,
    `{"/": "scope/"}`); their initializers then run RestoreV2 instead of their initial value.

    Raises:
        ValueError: a named tensor is missing from the checkpoint, shapes differ, or a scope
            maps to a non-scope.
    """

    ckpt_file = _checkpoint_filename(ckpt_dir_or_file)
    if ckpt_file is None:
        raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory "
                         f"{ckpt_dir_or_file}")
    reader = load_checkpoint(ckpt_file)
    shapes = reader.get_variable_to_shape_map()
    store = variable_scope._get_default_variable_store()._vars

    def assign_one(variable, tensor_name):
        if tensor_name not in shapes:
            raise ValueError(f"Tensor {tensor_name} is not found in {ckpt_file} checkpoint "
                             f"{sorted(shapes)}")
        if not variable.shape.is_compatible_with(shapes[tensor_name]):
            raise ValueError(f"Shape of variable {variable.name} ({variable.shape}) doesn't "
                             f"match with shape of tensor {tensor_name} "
                             f"({shapes[tensor_name]}) from checkpoint reader.")
        _set_checkpoint_initializer(variable, ckpt_file, tensor_name)

    pairs = assignment_map.items() if hasattr(assignment_map, "items") else assignment_map
    for tensor_name, current in sorted(pairs, key=lambda kv: kv[0]):
        if isinstance(current, variables.Variable):
            assign_one(current, tensor_name)
            continue
        if current in store:
            if tensor_name.endswith("/"):
                tensor_name = tensor_name + current.rsplit("/", 1)[-1]
            assign_one(store[current], tensor_name)
            continue
        if not tensor_name.endswith("/"):
            raise ValueError(f"Assignment map with scope only name {current} should map to "
                             f"scope only {tensor_name}. Should be 'scope/': 'other_scope/'.")
        scopes = current[:current.rindex("/")] if "/" in current else ""
        for var_name in sorted(store):
            if scopes and not var_name.startswith(scopes + "/"):
                continue
            suffix = var_name[len(scopes):]
            if current != "/":
                suffix = suffix[1:]
            full = suffix if tensor_name == "/" else tensor_name + suffix
            assign_one(store[var_name], full.rstrip("/"))


def wait_for_new_checkpoint(checkpoint_dir, last_checkpoint=None, seconds_to_sleep=1,
                            timeout=None):
    """Polls `checkpoint_dir` until its latest checkpoint differs from `last_checkpoint`.

    Returns:
        The new checkpoint prefix, or None when `timeout` seconds pass first.
    """
    logging.info("Waiting for new checkpoint at %s", checkpoint_dir)
    stop_time = time.time() + timeout if timeout is not None else None
    while True:
        checkpoint_path = latest_checkpoint(checkpoint_dir)
        if checkpoint_path is not None and checkpoint_path != last_checkpoint:
            logging.info("Found new checkpoint at %s", checkpoint_path)
            return checkpoint_path
        if stop_time is not None and time.time() + seconds_to_sleep > stop_time:
            return None
        time.sleep(seconds_to_sleep)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new checkpoint prefix of `checkpoint_dir` as it appears.

    Args:
        checkpoint_dir: the directory whose `checkpoint` state file is watched.
        min_interval_secs: at least this many seconds between two yields.
        timeout: seconds to wait for a new checkpoint before giving up (None: forever).
        timeout_fn: called on each timeout; the iterator ends when it returns True, and goes
            on waiting otherwise. Without it the iterator ends at the first timeout.

    Example:
        >>> for path in tf.train.checkpoints_iterator("/tmp/model", timeout=60):
        ...     evaluate(path)
    """
    checkpoint_path = None
    while True:
        new_path = wait_for_new_checkpoint(checkpoint_dir, checkpoint_path, timeout=timeout)
        if new_path is None:
            if not timeout_fn:
                logging.info("Timed-out waiting for a checkpoint.")
                return
            if timeout_fn():
                return
            continue
        start = time.time()
        checkpoint_path = new_path
        yield checkpoint_path
        remaining = start + min_interval_secs - time.time()
        if remaining > 0:
            time.sleep(remaining)
