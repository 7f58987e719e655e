"""The TPU program functions of `tf.tpu` / `tf.contrib.tpu`: `bfloat16_scope` works on the
CPU (bfloat16 variables are stored as float32 and read as bfloat16, as on TPUs); the
transforms that compile a computation for TPU cores raise NotImplementedError."""

from __future__ import annotations

import contextlib

from tensorflux.framework import dtypes
from tensorflux.ops import math as math_ops
from tensorflux.ops.state import variable_scope

__all__ = ["bfloat16_scope", "rewrite", "shard", "replicate", "batch_parallel",
           "initialize_system", "shutdown_system", "outside_compilation",
           "cross_replica_sum", "core"]


def _bfloat16_getter(getter, name, *args, **kwargs):
    wants_bf16 = dtypes.as_dtype(kwargs.get("dtype") or dtypes.float32) == dtypes.bfloat16
    if wants_bf16:
        kwargs["dtype"] = dtypes.float32
    var = getter(name, *args, **kwargs)
    return math_ops.cast(var, dtypes.bfloat16) if wants_bf16 else var


@contextlib.contextmanager
def bfloat16_scope(name=""):
    """A variable scope in which bfloat16 variables are float32 variables read as bfloat16."""
    with variable_scope.variable_scope(name, custom_getter=_bfloat16_getter) as scope:
        yield scope


def _needs_tpu(what):
    def fail(*args, **kwargs):
        raise NotImplementedError(
            f"tf.tpu.{what} compiles a computation for TPU cores, and tensorflux has no TPUs: "
            f"call the computation directly, or use TPUEstimator(use_tpu=False).")

    fail.__name__ = what
    fail.__doc__ = f"Raises NotImplementedError: `tf.tpu.{what}` needs TPU cores."
    return fail


rewrite = _needs_tpu("rewrite")
shard = _needs_tpu("shard")
replicate = _needs_tpu("replicate")
batch_parallel = _needs_tpu("batch_parallel")
initialize_system = _needs_tpu("initialize_system")
shutdown_system = _needs_tpu("shutdown_system")
outside_compilation = _needs_tpu("outside_compilation")
cross_replica_sum = _needs_tpu("cross_replica_sum")


def core(num):
    """The device name of TPU core `num` (a name; no such device exists here)."""
    return f"device:TPU_REPLICATED_CORE:{num}"
