"""Fingerprint (`tf.fingerprint`): a FarmHash Fingerprint64 per row, as 8 little-endian bytes.

A row of numbers is hashed as its bytes (the NumPy/TF little-endian layout); a row holding one
string is that string's fingerprint; a row of several strings hashes the concatenation of their
fingerprints.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.hashing.farmhash import fingerprint64

__all__ = ["fingerprint"]

Fingerprint = define_op(
    "Fingerprint", inputs=["data: T", "method: string"], outputs=["fingerprint: uint8"],
    attrs=["T: type"], differentiable=False)


@Fingerprint.shape_fn
def _fingerprint_shape(data, method):
    data.with_rank_at_least(1)
    method.with_rank(0)
    return TensorShape([data[0].value if data.ndims is not None else None, 8])


def _le(value: int) -> bytes:
    return value.to_bytes(8, "little")


@Fingerprint.kernel
def _fingerprint_kernel(data, method):
    name = method.item() if hasattr(method, "item") else method
    name = name.decode() if isinstance(name, bytes) else str(name)
    if name != "farmhash64":
        raise errors.InvalidArgumentError(None, None, f"Unsupported fingerprint method: {name} "
                                          "(only 'farmhash64')")
    if np.ndim(data) < 1:
        raise errors.InvalidArgumentError(None, None, "data must have rank at least one, got "
                                          "a scalar")
    # (reshape by the row size: -1 is ambiguous for an empty batch)
    rows = data.reshape(data.shape[0], int(np.prod(data.shape[1:], dtype=np.int64)))
    if data.dtype == object:
        def row_hash(row):
            if len(row) == 1:
                return fingerprint64(bytes(row[0]))
            return fingerprint64(b"".join(_le(fingerprint64(bytes(v))) for v in row))
    else:
        rows = np.ascontiguousarray(rows.astype(rows.dtype.newbyteorder("<")))

        def row_hash(row):
            return fingerprint64(row.tobytes())
    out = b"".join(_le(row_hash(row)) for row in rows)
    return np.frombuffer(out, np.uint8).reshape(data.shape[0], 8).copy()


def fingerprint(data, method="farmhash64", name=None):
    """Fingerprints each row (`data[i]`) of `data` with FarmHash Fingerprint64.

    Args:
        data: a tensor of rank >= 1 (numbers or strings).
        method: "farmhash64", the only method.
        name: optional name.

    Returns:
        uint8 [data.shape[0], 8]: each row's 64-bit fingerprint, little-endian.
    """
    return Fingerprint(data, method, name=name)
