"""`InputSpec` (TF 1.15's `tf.layers.InputSpec`, the same class as `tf.keras.layers.InputSpec`):
what inputs a layer accepts, checked before each call."""

from __future__ import annotations

__all__ = ["InputSpec"]


class InputSpec:
    """What a layer accepts: dtype, full `shape`, rank (`ndim`, `min_ndim`, `max_ndim`) and
    fixed sizes of some `axes` ({axis: size})."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None):
        self.dtype = dtype
        self.shape = shape
        self.ndim = len(shape) if shape is not None else ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = dict(axes or {})

    def get_config(self) -> dict:
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim,
                "max_ndim": self.max_ndim, "min_ndim": self.min_ndim, "axes": self.axes}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self) -> str:
        parts = [f"{k}={v}" for k, v in (("dtype", self.dtype), ("shape", self.shape),
                                         ("ndim", self.ndim), ("max_ndim", self.max_ndim),
                                         ("min_ndim", self.min_ndim),
                                         ("axes", self.axes or None)) if v]
        return f"InputSpec({', '.join(parts)})"
