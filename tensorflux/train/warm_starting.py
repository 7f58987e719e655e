"""`tf.train.warm_start` and `tf.train.VocabInfo`: initialize variables from a checkpoint.

Warm-starting rewires variable initializers (as `init_from_checkpoint` does): running
`tf.global_variables_initializer()` afterwards loads each selected variable from the
checkpoint tensor of the same name, or of the name `var_name_to_prev_var_name` gives. A
variable with a `VocabInfo` is remapped along its vocabulary axis: row (or column) `i` of the
new variable takes the old row of the same vocabulary token, and rows of new tokens and of
the OOV buckets take the values of `backup_initializer` (zeros by default). The token mapping
is read from the vocabulary files (one token per line) when `warm_start` is called; the
checkpoint values are read when the initializer runs.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.ops import array as array_ops
from tensorflux.ops.io import checkpoint as io_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.platform import gfile
from tensorflux.platform import tf_logging as logging
from tensorflux.train import checkpoint_utils

__all__ = ["VocabInfo", "warm_start"]


class VocabInfo(collections.namedtuple("VocabInfo", [
        "new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab", "old_vocab_size",
        "backup_initializer", "axis"])):
    """How to remap a vocabulary-indexed variable when warm-starting it.

    Fields: `new_vocab` / `old_vocab` (vocabulary file paths, one token per line),
    `new_vocab_size` (tokens of `new_vocab` used), `num_oov_buckets` (extra rows after them),
    `old_vocab_size` (tokens of `old_vocab` used; -1 for all), `backup_initializer` (values
    of rows with no old counterpart; zeros by default), `axis` (0: rows are the vocabulary,
    e.g. an embedding; 1: columns are, e.g. an output layer).

    Example: `tf.train.VocabInfo("new.txt", 100, 1, "old.txt")`.
    """

    def __new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab, old_vocab_size=-1,
                backup_initializer=None, axis=0):
        if axis not in (0, 1):
            raise ValueError(f"The only supported values for the axis argument are 0 and 1. "
                             f"Provided axis: {axis}")
        return super().__new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                               old_vocab_size, backup_initializer, axis)

    @property
    def axis_name(self) -> str:
        return "rows" if self.axis == 0 else "columns"


def _is_variable(value) -> bool:
    return hasattr(value, "_as_graph_element") and hasattr(value, "initializer")


def _grouped_variables(vars_to_warm_start) -> dict:
    """{op name: variable} of the variables selected by `vars_to_warm_start`."""
    graph = graph_mod.get_default_graph()
    if vars_to_warm_start is None or isinstance(vars_to_warm_start, str):
        found = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope=vars_to_warm_start)
    elif isinstance(vars_to_warm_start, (list, tuple)):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            found = []
            for pattern in vars_to_warm_start:
                found += graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope=pattern)
        elif all(_is_variable(v) for v in vars_to_warm_start):
            found = list(vars_to_warm_start)
        else:
            raise ValueError(f"If `vars_to_warm_start` is a list, it must be all `Variable` "
                             f"or all `str`.  Given types are "
                             f"{[type(v) for v in vars_to_warm_start]}")
    else:
        raise ValueError(f"Unrecognized type for `vars_to_warm_start`: "
                         f"{type(vars_to_warm_start)}")
    return {var.op.name: var for var in found}


def _read_vocab(path, size: int, what: str) -> list:
    with gfile.GFile(path, "r") as handle:
        tokens = [line.rstrip("\r\n") for line in handle]
    if size is not None and size >= 0:
        if size > len(tokens):
            raise ValueError(f"{what} size {size} is larger than the {len(tokens)} tokens of "
                             f"{path}")
        tokens = tokens[:size]
    return tokens


def _vocab_mapping(info: VocabInfo) -> np.ndarray:
    """For each new index (vocabulary then OOV buckets), the old index or -1."""
    if info.new_vocab_size is None or info.new_vocab_size <= 0:
        raise ValueError(f"Invalid new_vocab_size in VocabInfo: {info.new_vocab_size}")
    new = _read_vocab(info.new_vocab, info.new_vocab_size, "new_vocab")
    old = _read_vocab(info.old_vocab, info.old_vocab_size, "old_vocab")
    old_index = {}
    for i, token in enumerate(old):
        old_index.setdefault(token, i)
    mapping = [old_index.get(token, -1) for token in new]
    mapping += [-1] * int(info.num_oov_buckets)
    return np.asarray(mapping, dtype=np.int64)


def _remapped_initializer(var, ckpt_file, tensor_name, info: VocabInfo, old_shape):
    """Rewires `var`'s initializer to the checkpoint tensor remapped by `info`."""

    shape = var.get_shape().as_list()
    if len(shape) != 2 or None in shape or len(old_shape) != 2:
        raise ValueError(f"Warm-starting {var.op.name} with a vocabulary needs a 2-D variable "
                         f"and checkpoint tensor, got {shape} and {list(old_shape)}")
    axis = info.axis
    mapping = _vocab_mapping(info)
    if shape[axis] != len(mapping):
        raise ValueError(f"Variable {var.op.name} has {shape[axis]} {info.axis_name} but the "
                         f"VocabInfo gives {len(mapping)} (new_vocab_size + num_oov_buckets)")
    if shape[1 - axis] != old_shape[1 - axis]:
        raise ValueError(f"Variable {var.op.name} shape {shape} and checkpoint tensor "
                         f"{tensor_name} shape {list(old_shape)} differ outside the "
                         f"vocabulary axis")
    if mapping.size and mapping.max() >= old_shape[axis]:
        raise ValueError(f"old_vocab of {var.op.name} has more tokens than the "
                         f"{old_shape[axis]} {info.axis_name} of checkpoint tensor "
                         f"{tensor_name}")
    graph = graph_mod.get_default_graph()
    base = var.dtype.base_dtype
    with graph.name_scope(f"warm_start/{var.op.name}"):
        restored = io_ops.restore_v2(ckpt_file, [tensor_name], [""], [base])[0]
        restored.set_shape(old_shape)
        picked = array_ops.gather(restored, np.maximum(mapping, 0), axis=axis)
        initializer = info.backup_initializer or init_ops.zeros_initializer()
        backup = initializer(shape, dtype=base)
        present = (mapping >= 0).reshape((-1, 1) if axis == 0 else (1, -1))
        value = select_ops.where_v2(present, picked, backup)
    with graph.colocate_with(var.op):
        if getattr(var, "_is_resource_variable", False):
            var._initializer_op = var.assign(value, read_value=False)
        else:
            var._initializer_op = state_ops.assign(var._ref(), value).op
    var._initial_value = value


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
               var_name_to_prev_var_name=None):
    """Makes the initializers of selected variables load them from a checkpoint.

    Args:
        ckpt_to_initialize_from: a checkpoint prefix or a directory with a `checkpoint` file.
        vars_to_warm_start: a regex over TRAINABLE_VARIABLES names (default all of them); a
            list of regexes over GLOBAL_VARIABLES; a list of variables; or None (only the
            variables in `var_name_to_vocab_info`).
        var_name_to_vocab_info: {variable op name: VocabInfo} for remapped variables.
        var_name_to_prev_var_name: {variable op name: checkpoint tensor name} for renamed
            variables (default: the same name).

    Raises:
        ValueError: an entry of the two maps names no selected variable, a checkpoint tensor
            is missing or has another shape, or `vars_to_warm_start` has a bad type.

    Example:
        >>> tf.train.warm_start("/tmp/prev_model", vars_to_warm_start="dense/.*",
        ...                     var_name_to_prev_var_name={"dense/kernel": "old/kernel"})
    """
    grouped = _grouped_variables(vars_to_warm_start)
    vocab_infos = dict(var_name_to_vocab_info or {})
    prev_names = dict(var_name_to_prev_var_name or {})
    ckpt_file = checkpoint_utils._checkpoint_filename(ckpt_to_initialize_from)
    if ckpt_file is None:
        raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory "
                         f"{ckpt_to_initialize_from}")
    shapes = checkpoint_utils.load_checkpoint(ckpt_file).get_variable_to_shape_map()
    used_prev, used_vocab = set(), set()
    count = 0
    for name in sorted(grouped):
        var = grouped[name]
        prev = prev_names.get(name)
        if prev:
            used_prev.add(name)
        tensor_name = prev or name
        info = vocab_infos.get(name)
        if info:
            used_vocab.add(name)
            if tensor_name not in shapes:
                raise ValueError(f"Tensor {tensor_name} is not found in {ckpt_file} "
                                 f"checkpoint {sorted(shapes)}")
            _remapped_initializer(var, ckpt_file, tensor_name, info, shapes[tensor_name])
            count += 1
        elif vars_to_warm_start:
            checkpoint_utils.init_from_checkpoint(ckpt_file, {tensor_name: var})
            count += 1
    unused_prev = sorted(set(prev_names) - used_prev)
    if unused_prev:
        raise ValueError(f"You provided the following variables in var_name_to_prev_var_name "
                         f"that were not used: {unused_prev}.  Perhaps you misspelled them?  "
                         f"Here is the list of viable variable names: {sorted(grouped)}")
    unused_vocab = sorted(set(vocab_infos) - used_vocab)
    if unused_vocab:
        raise ValueError(f"You provided the following variables in var_name_to_vocab_info "
                         f"that were not used: {unused_vocab}.  Perhaps you misspelled them?  "
                         f"Here is the list of viable variable names: {sorted(grouped)}")
    logging.info("Warm-started %d variables.", count)

