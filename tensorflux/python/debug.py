"""`tensorflow.python.debug` (tfdbg), as far as tensorflux provides it.

Programs of the TF 1.x era import it unconditionally and wrap their session only behind a
flag (`if FLAGS.debug: sess = tf_debug.LocalCLIDebugWrapperSession(sess)`), so the module
imports and its tensor filter works; the debugger's wrappers and hooks (an interactive
terminal UI, dumps of every intermediate tensor, a TensorBoard debugger stream) are not
provided: constructing one raises UnimplementedError naming it and what to use instead.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework.errors import UnimplementedError

__all__ = ["has_inf_or_nan", "LocalCLIDebugWrapperSession", "LocalCLIDebugHook",
           "DumpingDebugWrapperSession", "DumpingDebugHook", "TensorBoardDebugWrapperSession",
           "TensorBoardDebugHook", "GrpcDebugWrapperSession", "GrpcDebugHook"]

_INSTEAD = ("tensorflux has no tfdbg; to find where values go bad use tf.add_check_numerics_ops"
            "() or tf.debugging.check_numerics, and RunOptions(trace_level=FULL_TRACE) with "
            "tf.profiler for per-op timing")


def has_inf_or_nan(datum, tensor):
    """tfdbg's filter: whether a dumped tensor holds an inf or NaN (False for non-float
    values and for uninitialized tensors, given as None)."""
    del datum
    if tensor is None or not isinstance(tensor, np.ndarray):
        return False
    if not (np.issubdtype(tensor.dtype, np.floating)
            or np.issubdtype(tensor.dtype, np.complexfloating)):
        return False
    return bool(np.any(np.isnan(tensor)) or np.any(np.isinf(tensor)))


def _not_provided(name):
    class NotProvided:
        def __init__(self, *args, **kwargs):
            raise UnimplementedError(None, None, f"tf_debug.{name} is not provided: "
                                     f"{_INSTEAD}.")

    NotProvided.__name__ = NotProvided.__qualname__ = name
    NotProvided.__doc__ = f"tfdbg's {name}: not provided (raises UnimplementedError)."
    return NotProvided


LocalCLIDebugWrapperSession = _not_provided("LocalCLIDebugWrapperSession")
LocalCLIDebugHook = _not_provided("LocalCLIDebugHook")
DumpingDebugWrapperSession = _not_provided("DumpingDebugWrapperSession")
DumpingDebugHook = _not_provided("DumpingDebugHook")
TensorBoardDebugWrapperSession = _not_provided("TensorBoardDebugWrapperSession")
TensorBoardDebugHook = _not_provided("TensorBoardDebugHook")
GrpcDebugWrapperSession = _not_provided("GrpcDebugWrapperSession")
GrpcDebugHook = _not_provided("GrpcDebugHook")
