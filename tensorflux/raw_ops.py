"""`tf.raw_ops` (and `tf.compat.v1.raw_ops`): one keyword-only function per registered op,
named as the op (`tf.raw_ops.MatMul(a=x, b=y, transpose_b=True)`), built lazily from the op
registry (tensorflux/framework/raw_op.py)."""

from tensorflux import ops as _ops  # noqa: F401 - registers every op family
from tensorflux.framework import raw_op as _raw_op


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return _raw_op.raw_op(name)


def __dir__():
    return _raw_op.exposed_op_types()
