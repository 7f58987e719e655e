"""What a `tf.train.Saver` saves: `SaveSpec` (one tensor and its checkpoint name) and
`SaveableObject` (specs plus how to restore them).

They live below the op families so that an op family can make its resources saveable (a
mutable lookup table exports its keys and values) without importing `train`: the family adds
its SaveableObject to the SAVEABLE_OBJECTS collection and the Saver finds it there.
"""

from __future__ import annotations

from tensorflux.framework import dtypes

__all__ = ["SaveSpec", "SaveableObject"]


class SaveSpec:
    """One tensor to save: its value, slice spec ("" for whole) and checkpoint name."""

    def __init__(self, tensor, slice_spec: str, name: str, dtype=None, device=None):
        self.tensor = tensor
        self.slice_spec = slice_spec
        self.name = name
        self.dtype = dtypes.as_dtype(dtype) if dtype is not None else tensor.dtype.base_dtype
        self.device = device if device is not None else tensor.device


class SaveableObject:
    """Something the Saver saves as `specs` and restores with `restore(tensors, shapes)`."""

    def __init__(self, op, specs, name: str):
        self.op = op
        self.specs = specs
        self.name = name

    @property
    def device(self) -> str:
        return self.specs[0].device

    def restore(self, restored_tensors, restored_shapes):
        """The op restoring this object from `restored_tensors` (one per spec).

        Raises:
            TypeError: a subclass that does not define it.
        """
        raise TypeError(f"{type(self).__name__} must define restore()")
