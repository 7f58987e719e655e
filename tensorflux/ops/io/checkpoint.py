"""Checkpoint ops: SaveV2, RestoreV2, MergeV2Checkpoints and the sharded-filename helpers.

They read and write tensor bundles (`lib.formats.bundle`: a data file plus an index with a
CRC32C per tensor, committed atomically). `shape_and_slices` entries are "" for whole tensors
or TF's slice syntax "full_shape slice" (e.g. "4 3 0,2:-", rows 0-1 of a [4, 3] tensor): a
SaveV2 op assembles the slices it receives into whole tensors, and RestoreV2 reads a slice of
a saved whole tensor. Corruption is a DataLossError; a missing key a NotFoundError naming it.
"""

from __future__ import annotations

import os

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.formats import bundle

__all__ = []


def _text(value) -> str:
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _texts(values, what: str, expected: int | None = None) -> list:
    array = np.asarray(values)
    if array.ndim != 1:
        raise errors.InvalidArgumentError(
            None, None, f"{what} must be a vector, got shape {list(array.shape)}")
    if expected is not None and array.size != expected:
        raise errors.InvalidArgumentError(
            None, None, f"{what} has {array.size} entries; expected {expected} (one per tensor)")
    return [_text(v) for v in array]


def parse_slice_spec(spec: str):
    """'4 3 0,2:-' -> ((4, 3), (slice(0, 2), slice(None))); '' -> (None, None)."""
    spec = spec.strip()
    if not spec:
        return None, None
    parts = spec.split(" ")
    try:
        full = tuple(int(p) for p in parts[:-1])
        extents = parts[-1].split(":")
        if len(extents) != len(full):
            raise ValueError("rank mismatch")
        index = []
        for extent, dim in zip(extents, full):
            if extent == "-":
                index.append(slice(None))
                continue
            start, length = (int(x) for x in extent.split(","))
            if start < 0 or length < 0 or start + length > dim:
                raise ValueError("extent out of range")
            index.append(slice(start, start + length))
    except ValueError as err:
        raise errors.InvalidArgumentError(
            None, None, f"Malformed shape_and_slices entry {spec!r} ({err}); expected "
            "'dim0 dim1 ... start,length:-:...'") from None
    return full, tuple(index)


# -- SaveV2 ----------------------------------------------------------------------------------

SaveV2 = define_op(
    "SaveV2", inputs=["prefix: string", "tensor_names: string", "shape_and_slices: string",
                      "tensors: dtypes"],
    attrs=["dtypes: list(type)"], stateful=True, differentiable=False)


@SaveV2.shape_fn
def _save_v2_shape(prefix, tensor_names, shape_and_slices, tensors):
    if not prefix.is_compatible_with(TensorShape([])):
        raise ValueError(f"prefix must be a scalar, got shape {prefix}")
    for what, shape in (("tensor_names", tensor_names), ("shape_and_slices", shape_and_slices)):
        if not shape.is_compatible_with(TensorShape([len(tensors)])):
            raise ValueError(f"{what} must be a vector of {len(tensors)} names, got {shape}")
    return []


def _assemble(name: str, parts: list) -> np.ndarray:
    """Whole tensor from (full_shape, index, value) slices that must tile it exactly."""
    full = parts[0][0]
    result = np.zeros(full, dtype=np.asarray(parts[0][2]).dtype)
    covered = 0
    for shape, index, value in parts:
        if shape != full:
            raise errors.InvalidArgumentError(
                None, None, f"Slices of tensor '{name}' disagree on its full shape: {full} vs "
                f"{shape}")
        if result[index].shape != np.shape(value):
            raise errors.InvalidArgumentError(
                None, None, f"Slice of tensor '{name}' has shape {list(np.shape(value))}; its "
                f"spec selects {list(result[index].shape)}")
        result[index] = value
        covered += np.size(value)
    if covered != result.size:
        raise errors.InvalidArgumentError(
            None, None, f"The slices saved for tensor '{name}' cover {covered} of its "
            f"{result.size} elements; a checkpoint stores whole tensors")
    return result


@SaveV2.kernel
def _save_v2_kernel(prefix, tensor_names, shape_and_slices, *tensors):
    names = _texts(tensor_names, "tensor_names", len(tensors))
    specs = _texts(shape_and_slices, "shape_and_slices", len(tensors))
    whole: dict = {}
    sliced: dict = {}
    for name, spec, value in zip(names, specs, tensors):
        full, index = parse_slice_spec(spec)
        if name in whole or (full is None and name in sliced):
            raise errors.InvalidArgumentError(
                None, None, f"Tensor '{name}' is saved twice in one SaveV2 op")
        if full is None:
            whole[name] = value
        else:
            sliced.setdefault(name, []).append((full, index, value))
    for name, parts in sliced.items():
        whole[name] = _assemble(name, parts)
    bundle.write_bundle(_text(prefix), whole)


def save_v2(prefix, tensor_names, shape_and_slices, tensors, name=None):
    """Saves `tensors` under `tensor_names` to the bundle at `prefix` (TF's `io_ops.save_v2`)."""
    return SaveV2(prefix, list(tensor_names), list(shape_and_slices), list(tensors), name=name)


# -- RestoreV2 -------------------------------------------------------------------------------

RestoreV2 = define_op(
    "RestoreV2", inputs=["prefix: string", "tensor_names: string", "shape_and_slices: string"],
    outputs=["tensors: dtypes"], attrs=["dtypes: list(type)"], stateful=True,
    differentiable=False)


@RestoreV2.shape_fn(value_inputs=("shape_and_slices",))
def _restore_v2_shape(prefix, tensor_names, shape_and_slices, *, dtypes):
    shapes = [TensorShape(None)] * len(dtypes)
    if shape_and_slices is not None and np.size(shape_and_slices) == len(dtypes):
        for i, spec in enumerate(np.asarray(shape_and_slices).reshape(-1)):
            try:
                full, index = parse_slice_spec(_text(spec))
            except errors.InvalidArgumentError as err:
                raise ValueError(err.message) from None
            if full is not None:
                shapes[i] = TensorShape(np.empty(full, dtype=np.bool_)[index].shape)
    return [shapes]


@RestoreV2.kernel(factory=True)
def _restore_v2_kernel(dtypes):
    expected = [d.base_dtype for d in dtypes]

    def restore(prefix, tensor_names, shape_and_slices):
        names = _texts(tensor_names, "tensor_names", len(expected))
        specs = _texts(shape_and_slices, "shape_and_slices", len(expected))
        results = []
        with bundle.BundleReader(_text(prefix)) as reader:
            for name, spec, dtype in zip(names, specs, expected):
                if not reader.has_tensor(name):
                    raise errors.NotFoundError(None, None,
                                               f"Key {name} not found in checkpoint")
                enum, shape = reader.get_dtype_and_shape(name)
                if enum != dtype.as_datatype_enum:
                    raise errors.InvalidArgumentError(
                        None, None, f"tensor_name = {name}; expected dtype {dtype.name} does "
                        f"not equal original dtype {_dtype_name(enum)}")
                value = reader.get_tensor(name)
                full, index = parse_slice_spec(spec)
                if full is not None:
                    if tuple(shape) != full:
                        raise errors.InvalidArgumentError(
                            None, None, f"tensor_name = {name}; shape in shape_and_slice spec "
                            f"{list(full)} does not match the shape stored in checkpoint: "
                            f"{list(shape)}")
                    value = np.ascontiguousarray(value[index])
                results.append(value)
        return results[0] if len(results) == 1 else tuple(results)

    return restore


def _dtype_name(enum: int) -> str:
    try:
        return dtypes.as_dtype(enum).name
    except (TypeError, ValueError, KeyError):
        return f"DataType({enum})"


def restore_v2(prefix, tensor_names, shape_and_slices, dtypes, name=None):
    """Restores tensors from the bundle at `prefix`; returns a list (TF's `io_ops.restore_v2`)."""
    result = RestoreV2(prefix, list(tensor_names), list(shape_and_slices), dtypes=list(dtypes),
                       name=name)
    return result if isinstance(result, list) else [result]


# -- MergeV2Checkpoints ----------------------------------------------------------------------

MergeV2Checkpoints = define_op(
    "MergeV2Checkpoints", inputs=["checkpoint_prefixes: string", "destination_prefix: string"],
    attrs=["delete_old_dirs: bool = True"], stateful=True, differentiable=False)


@MergeV2Checkpoints.shape_fn
def _merge_v2_checkpoints_shape(checkpoint_prefixes, destination_prefix):
    if not destination_prefix.is_compatible_with(TensorShape([])):
        raise ValueError(f"destination_prefix must be a scalar, got shape {destination_prefix}")
    return []


def _remove_bundle(prefix: str, delete_old_dirs: bool) -> None:
    for path in (bundle.index_filename(prefix), bundle.data_filename(prefix)):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
    if delete_old_dirs:
        try:
            os.rmdir(os.path.dirname(prefix) or ".")
        except OSError:
            pass  # not empty, or not ours to remove


@MergeV2Checkpoints.kernel
def _merge_v2_checkpoints_kernel(checkpoint_prefixes, destination_prefix, *, delete_old_dirs):
    sources = _texts(checkpoint_prefixes, "checkpoint_prefixes")
    destination = _text(destination_prefix)
    merged: dict = {}
    for source in sources:
        with bundle.BundleReader(source) as reader:
            for key in reader.keys():
                if key in merged:
                    raise errors.InvalidArgumentError(
                        None, None, f"Tensor '{key}' appears in more than one shard being "
                        f"merged into {destination}")
                merged[key] = reader.get_tensor(key)
    bundle.write_bundle(destination, merged)
    for source in sources:
        if os.path.abspath(source) != os.path.abspath(destination):
            _remove_bundle(source, delete_old_dirs)


def merge_v2_checkpoints(checkpoint_prefixes, destination_prefix, delete_old_dirs=True,
                         name=None):
    """Merges the bundles at `checkpoint_prefixes` into one at `destination_prefix`."""
    return MergeV2Checkpoints(checkpoint_prefixes, destination_prefix,
                              delete_old_dirs=delete_old_dirs, name=name)


# -- sharded file names ----------------------------------------------------------------------

ShardedFilename = define_op(
    "ShardedFilename", inputs=["basename: string", "shard: int32", "num_shards: int32"],
    outputs=["filename: string"], differentiable=False)


@ShardedFilename.shape_fn
def _sharded_filename_shape(basename, shard, num_shards):
    return TensorShape([])


def _check_scalars(op, **values):
    for name, value in values.items():
        if np.ndim(value) != 0:
            raise errors.InvalidArgumentError(
                None, None, f"{op}: {name} must be a scalar, got shape {list(np.shape(value))}")


@ShardedFilename.kernel
def _sharded_filename_kernel(basename, shard, num_shards):
    _check_scalars("ShardedFilename", basename=basename, shard=shard, num_shards=num_shards)
    return np.asarray(f"{_text(basename)}-{int(shard):05d}-of-{int(num_shards):05d}".encode(),
                      dtype=object)


ShardedFilespec = define_op(
    "ShardedFilespec", inputs=["basename: string", "num_shards: int32"],
    outputs=["filename: string"], differentiable=False)


@ShardedFilespec.shape_fn
def _sharded_filespec_shape(basename, num_shards):
    return TensorShape([])


@ShardedFilespec.kernel
def _sharded_filespec_kernel(basename, num_shards):
    _check_scalars("ShardedFilespec", basename=basename, num_shards=num_shards)
    return np.asarray(f"{_text(basename)}-?????-of-{int(num_shards):05d}".encode(), dtype=object)


def sharded_filename(basename, shard, num_shards, name=None):
    return ShardedFilename(basename, shard, num_shards, name=name)


def sharded_filespec(basename, num_shards, name=None):
    return ShardedFilespec(basename, num_shards, name=name)
