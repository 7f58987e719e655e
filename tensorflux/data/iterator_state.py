"""Saving an iterator's position: `SerializeIterator` / `DeserializeIterator` and
`tf.data.experimental.make_saveable_from_iterator`.

Design (values stay exact): an iterator's state is
  * the values its dataset captured at initialization (fed placeholders, constants),
  * the number of elements produced since that initialization,
  * the random seeds its unseeded random stages drew (in draw order; seeded stages need none),
plus the element types/shapes and the pipeline's stages (class names and plain arguments:
sizes, seeds, flags), to reject a state restored into
an iterator of another structure. The state is a scalar string tensor holding JSON (arrays as
dtype, shape and base64 bytes; never pickle).

`external_state_policy` (TF's enum: 0 warn, 1 ignore, 2 fail) decides what saving does when
a `map`-like function of the pipeline (its own stages, not datasets built inside an
`interleave` function) has random ops without any seed, whose values a restore cannot
replay: log a warning, nothing, or FailedPreconditionError naming the op. Other stateful ops
(`py_func`) are assumed deterministic.

What is re-computed on restore: the pipeline is re-initialized with the saved captured values
and seeds, and the saved number of elements is produced again and dropped. The restored
iterator then yields exactly what the uninterrupted one would have, for deterministic
pipelines (range, map, batch, repeat, interleave, seeded and unseeded shuffles, ...). Not
captured: random ops inside `map` functions without an op- or graph-level seed, generators
and files whose contents changed; skipping costs the time of producing those elements.
A resource the dataset captures (a lookup table used in `map`) is not saved: it is taken
from the iterator's current initialization, so such an iterator is restored after running its
initializer in the new session (FailedPreconditionError otherwise).
"""

from __future__ import annotations

import base64
import json

import numpy as np

from tensorflux.data.function import TracedFunction
from tensorflux.data.iterator_ops import IteratorResource, _lookup
from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.saveable import SaveableObject, SaveSpec
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.platform import tf_logging as logging

__all__ = ["make_saveable_from_iterator"]

_VERSION = 1

SerializeIterator = define_op(
    "SerializeIterator", inputs=["resource_handle: resource"], outputs=["serialized: string"],
    attrs=["external_state_policy: int = 0"], stateful=True, differentiable=False)
# `dataset_id` (tensorflux): the dataset to re-initialize on; -1: the iterator's last one.
DeserializeIterator = define_op(
    "DeserializeIterator", inputs=["resource_handle: resource", "serialized: string"],
    attrs=["dataset_id: int = -1"], stateful=True, differentiable=False)


@SerializeIterator.shape_fn
def _serialize_shape(resource_handle):
    return TensorShape([])


@DeserializeIterator.shape_fn
def _deserialize_shape(resource_handle, serialized):
    serialized.with_rank(0)
    return []


def _encode_array(value, name: str) -> dict:
    array = np.asarray(value)
    if array.dtype.kind in "OSU":
        items = [item.encode() if isinstance(item, str) else item for item in array.ravel()]
        if not all(isinstance(item, bytes) for item in items):
            raise errors.UnimplementedError(None, None, f"Cannot save the state of an iterator "
                                            f"whose dataset captures '{name}' (not a tensor "
                                            "value)")
        return {"dtype": "string", "shape": list(array.shape),
                "items": [base64.b64encode(item).decode() for item in items]}
    if array.dtype.kind not in "biufc":
        raise errors.UnimplementedError(None, None, f"Cannot save the state of an iterator "
                                        f"whose dataset captures '{name}' of type "
                                        f"{type(value).__name__} (resources are not saved)")
    return {"dtype": array.dtype.str, "shape": list(array.shape),
            "data": base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()}


def _decode_array(record: dict):
    shape = tuple(record["shape"])
    if record["dtype"] == "string":
        out = np.empty(len(record["items"]), dtype=object)
        out[:] = [base64.b64decode(item) for item in record["items"]]
        return out.reshape(shape)
    data = base64.b64decode(record["data"])
    return np.frombuffer(data, dtype=np.dtype(record["dtype"])).reshape(shape).copy()


def _shape_list(shape):
    return None if shape.dims is None else [d.value if hasattr(d, "value") else d
                                            for d in shape.dims]


def _structure(names, shapes) -> str:
    shapes = [_shape_list(TensorShape(s)) for s in shapes]
    return ", ".join(f"{n}{'[?]' if s is None else s}" for n, s in zip(names, shapes))


_SIMPLE = (bool, int, float, str, bytes, type(None))


def _simple(value) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_simple(item) for item in value)
    return isinstance(value, _SIMPLE)


def _describe(stage) -> str:
    """`ClassName(arg=value, ...)` over the stage's plain Python arguments (sizes, seeds,
    flags; tensors and functions are left out)."""
    args = [f"{name.lstrip('_')}={value!r}" for name, value in sorted(vars(stage).items())
            if name not in ("_inputs", "_captures", "_types", "_shapes", "_template")
            and _simple(value)]
    return f"{type(stage).__name__}({', '.join(args)})"


def _pipeline(dataset) -> list:
    return [_describe(stage) for stage in dataset._walk()]


_POLICIES = {"warn": 0, "ignore": 1, "fail": 2}


def _unseeded_random_ops(dataset) -> list:
    found = []
    for stage in dataset._walk():
        for value in vars(stage).values():
            if isinstance(value, TracedFunction):
                found += [f"{op.name} ({op.type}) in the function '{value.name}'"
                          for op in value.graph.get_operations()
                          if "seed2" in op._attrs and op.get_attr("seed") == 0
                          and op.get_attr("seed2") == 0]
    return found


def serialize(resource: IteratorResource, policy: int = 0) -> bytes:
    """The JSON state of `resource` (see the module docstring).

    Raises:
        FailedPreconditionError: not initialized, or (policy 2, fail) a function of the
            pipeline has unseeded random ops.
    """
    dataset, values, produced, seeds = resource.state()
    if policy != 1:
        unseeded = _unseeded_random_ops(dataset)
        if unseeded and policy == 2:
            raise errors.FailedPreconditionError(
                None, None, f"Cannot save the state of iterator '{resource.name}': "
                f"{unseeded[0]} draws unseeded random values a restore cannot replay (set a "
                "graph or op seed, or external_state_policy='warn' / 'ignore')")
        if unseeded:
            logging.warning(f"Saving iterator '{resource.name}': {unseeded[0]} draws unseeded "
                            "random values; a restore will not replay them")
    captures = dataset._all_captures()
    state = {"version": _VERSION, "types": [t.name for t in resource.types],
             "shapes": [_shape_list(TensorShape(s)) for s in resource.shapes],
             "pipeline": _pipeline(dataset), "produced": produced, "seeds": seeds,
             "captures": [{"dtype": "resource"} if t.dtype.base_dtype == dtypes.resource
                          else _encode_array(values[t], t.name) for t in captures]}
    return json.dumps(state).encode()


def _parse(text, name: str) -> dict:
    try:
        state = json.loads(text)
    except (UnicodeDecodeError, ValueError):
        state = None
    if not isinstance(state, dict) or state.get("version") != _VERSION:
        raise errors.InvalidArgumentError(None, None, f"DeserializeIterator: the value restored "
                                          f"into iterator '{name}' is not a saved iterator "
                                          "state")
    return state


def deserialize(resource: IteratorResource, text, dataset=None) -> None:
    """Re-initializes `resource` from a state of `serialize`: same captured values and seeds,
    then skips the saved number of elements.

    Raises:
        InvalidArgumentError: not a state, or the state of an iterator of another element
            structure or pipeline (naming both).
        FailedPreconditionError: no dataset to restore on (an uninitialized iterator made by
            `Iterator.from_structure`).
    """
    state = _parse(text, resource.name)
    mine = _structure([t.name for t in resource.types], resource.shapes)
    saved = _structure(state["types"], state["shapes"])
    if [t.name for t in resource.types] != state["types"] or not all(
            TensorShape(s).is_compatible_with(TensorShape(m))
            for s, m in zip(state["shapes"], resource.shapes)):
        raise errors.InvalidArgumentError(None, None, f"Cannot restore iterator "
                                          f"'{resource.name}': the checkpoint holds the state "
                                          f"of an iterator producing ({saved}); this iterator "
                                          f"produces ({mine})")
    dataset = dataset if dataset is not None else resource.dataset
    if dataset is None:
        raise errors.FailedPreconditionError(None, None, f"Cannot restore iterator "
                                             f"'{resource.name}': it is not bound to a "
                                             "dataset; run its initializer first")
    if _pipeline(dataset) != state["pipeline"]:
        raise errors.InvalidArgumentError(None, None, f"Cannot restore iterator "
                                          f"'{resource.name}': the checkpoint holds the state "
                                          f"of the pipeline {state['pipeline']}; this iterator "
                                          f"reads {_pipeline(dataset)}")
    captures = dataset._all_captures()
    if len(captures) != len(state["captures"]):
        raise errors.InvalidArgumentError(None, None, f"Cannot restore iterator "
                                          f"'{resource.name}': the saved state has "
                                          f"{len(state['captures'])} captured values, the "
                                          f"dataset captures {len(captures)}")
    values = {}
    for tensor, record in zip(captures, state["captures"]):
        if record["dtype"] != "resource":
            values[tensor] = _decode_array(record)
        elif resource.dataset is dataset and tensor in resource.values:
            values[tensor] = resource.values[tensor]
        else:
            raise errors.FailedPreconditionError(
                None, None, f"Cannot restore iterator '{resource.name}': its dataset uses the "
                f"resource '{tensor.name}', taken from the current initialization; run the "
                "iterator's initializer before restoring")
    resource.initialize(dataset, values, seeds=state["seeds"], skip=int(state["produced"]))


@SerializeIterator.kernel(factory=True)
def _serialize_factory(external_state_policy):
    if external_state_policy not in (0, 1, 2):
        raise errors.InvalidArgumentError(None, None, f"SerializeIterator: "
                                          f"external_state_policy must be 0, 1 or 2, got "
                                          f"{external_state_policy}")

    def kernel(resource_handle):
        if not isinstance(resource_handle, IteratorResource):
            raise errors.InvalidArgumentError(None, None, "SerializeIterator: resource_handle "
                                              "is not an iterator")
        out = np.empty((), dtype=object)
        out[()] = serialize(resource_handle, external_state_policy)
        return out

    return kernel


@DeserializeIterator.kernel(factory=True)
def _deserialize_factory(dataset_id):
    entry = _lookup(dataset_id) if dataset_id >= 0 else None

    def kernel(resource_handle, serialized):
        if not isinstance(resource_handle, IteratorResource):
            raise errors.InvalidArgumentError(None, None, "DeserializeIterator: "
                                              "resource_handle is not an iterator")
        text = np.asarray(serialized, dtype=object).item()
        deserialize(resource_handle, text, entry.dataset if entry is not None else None)

    return kernel


class _IteratorSaveable(SaveableObject):
    """An iterator's state (`<name>_STATE`, a string), restored with DeserializeIterator."""

    def __init__(self, handle, name, policy="fail"):
        state = SerializeIterator(handle, external_state_policy=_POLICIES[policy],
                                  name=f"{handle.op.name}_serialize")
        super().__init__(handle, [SaveSpec(state, "", f"{name}_STATE")], name)

    def restore(self, restored_tensors, restored_shapes):
        handle = self.op
        dataset_id = getattr(handle.op, "_tfx_dataset_id", -1)
        op = DeserializeIterator(handle, restored_tensors[0], dataset_id=dataset_id,
                                 name=f"{handle.op.name}_deserialize")
        op._tfx_dataset_entry = getattr(handle.op, "_tfx_dataset_entry", None)
        return op


def saveable_for_handle(handle, external_state_policy="fail") -> SaveableObject:
    """The SaveableObject of an iterator resource handle (a tensor of `GLOBAL_ITERATORS`)."""
    return _IteratorSaveable(handle, handle.op.name, external_state_policy)


def make_saveable_from_iterator(iterator, external_state_policy="fail"):
    """A SaveableObject of `iterator`'s position, for `tf.train.Saver` (add it to the
    SAVEABLE_OBJECTS collection or pass it in `var_list`).

    Restoring re-initializes the iterator on its dataset with the saved captured values and
    random seeds and produces again (and drops) the elements it had produced.

    Example:
        >>> saveable = tf.data.experimental.make_saveable_from_iterator(it)
        >>> tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS, saveable)

    Args:
        iterator: a tf.data Iterator.
        external_state_policy: "fail" (default), "warn" or "ignore": what saving does when
            a function of the pipeline draws unseeded random values (see the module).

    Raises:
        TypeError: `iterator` is not a tf.data Iterator.
        ValueError: a bad `external_state_policy`.
    """
    handle = getattr(iterator, "_handle", None)
    if handle is None or getattr(handle, "dtype", None) is None:
        raise TypeError(f"make_saveable_from_iterator() expects a tf.data Iterator, got "
                        f"{iterator!r}")
    if external_state_policy not in _POLICIES:
        raise ValueError(f"make_saveable_from_iterator(): external_state_policy must be "
                         f"'fail', 'warn' or 'ignore', got {external_state_policy!r}")
    return saveable_for_handle(handle, external_state_policy)

