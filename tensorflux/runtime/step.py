"""What a kernel sees of its step (`ctx`), and how kernel failures become OpErrors."""

from __future__ import annotations

import re
import zlib

from tensorflux.framework import errors

DEAD = type("Dead", (), {"__repr__": lambda self: "<dead>", "__slots__": ()})()


class StepContext:
    """Per-step, per-partition context handed to stateful and asynchronous kernels.

    `frame_iter` is "frame_id:iter" for the loop iteration the kernel runs in ("0:0" outside
    loops); `child(frame_id, iteration)` makes the context of a loop iteration.
    """

    DEAD = DEAD

    __slots__ = ("step_id", "device", "resource_mgr", "rendezvous", "cancellation",
                 "frame_iter", "session", "options", "incarnation", "trace", "node",
                 "__dict__")

    def __init__(self, step_id: int, device, rendezvous, cancellation, session=None,
                 options=None, frame_iter: str = "0:0"):
        self.step_id = step_id
        self.device = device
        self.resource_mgr = device.resource_mgr if device is not None else None
        self.incarnation = device.incarnation if device is not None else 0
        self.rendezvous = rendezvous
        self.cancellation = cancellation
        self.session = session
        self.options = options
        self.frame_iter = frame_iter
        self.trace = None
        self.node = None

    def child(self, frame_id: int, iteration: int) -> StepContext:
        ctx = StepContext(self.step_id, self.device, self.rendezvous, self.cancellation,
                          self.session, self.options, f"{frame_id}:{iteration}")
        return ctx

    def run_function(self, function, args) -> list:
        """Runs `function` (a `DefinedFunction` or a library name) on this step's device as a
        sub-step; returns its outputs (see `runtime/function_call.py`)."""
        # cycle: function_call builds executors, which import this module.
        from tensorflux.runtime import function_call

        return function_call.run_function(self, function, args)

    def submit_blocking(self, fn) -> None:
        """Runs `fn()` on the process's pool for work that may block (a Python callback, a
        wait), never on an executor's kernel pool; kernels reach threads only through here."""
        # cycle: runtime.executor imports this module (at import time)
        from tensorflux.runtime.executor import shared_pool

        shared_pool().submit(fn)

    @property
    def device_name(self) -> str:
        return self.device.name if self.device is not None else ""


def frame_id_of(path: str) -> int:
    """A stable id for a frame instance path, equal in every partition."""
    return zlib.crc32(path.encode()) or 1


_PYTHON_TO_STATUS = (
    (MemoryError, errors.ResourceExhaustedError),
    # A kernel's file system errors, as TF's Env reports them (a path that is not there, a
    # permission refused, ...); other OSErrors have no better class than UnknownError.
    (FileNotFoundError, errors.NotFoundError),
    (PermissionError, errors.PermissionDeniedError),
    (FileExistsError, errors.AlreadyExistsError),
    ((IsADirectoryError, NotADirectoryError), errors.FailedPreconditionError),
    (OSError, errors.UnknownError),
    ((ValueError, TypeError, IndexError, KeyError, ZeroDivisionError, OverflowError,
      FloatingPointError, UnicodeError), errors.InvalidArgumentError),
)


_BROADCAST_RE = re.compile(r"operands could not be broadcast together with shapes "
                           r"\(([\d,]*)\) \(([\d,]*)\)")


def _python_error_message(err: BaseException) -> str:
    """A kernel's Python error as TF words it: NumPy's broadcast failure of two operands is
    TF's "Incompatible shapes: [2] vs. [3]"."""
    match = _BROADCAST_RE.search(str(err)) if isinstance(err, ValueError) else None
    if match:
        x, y = ([int(d) for d in group.split(",") if d] for group in match.groups())
        return f"Incompatible shapes: {x} vs. {y}"
    return f"{type(err).__name__}: {err}"


def node_error(node, err: BaseException) -> errors.OpError:
    """Wraps a kernel failure as an OpError naming the node and its creating source line."""
    if isinstance(err, errors.OpError):
        if getattr(err, "_tfx_annotated", False):
            return err
        cls = type(err)
        message = err.message
    else:
        cls = errors.InternalError
        for py_types, status in _PYTHON_TO_STATUS:
            if isinstance(err, py_types):
                cls = status
                break
        message = _python_error_message(err)
    where = node.where() if node is not None else "<unknown>"
    name = node.name if node is not None else "<unknown>"
    op_type = node.op if node is not None else "?"
    text = f"{message}\n\t [[node {name} ({op_type}) defined at {where}]]"
    op = node.source_op if node is not None else None
    wrapped = cls(None, op, text)
    wrapped._tfx_annotated = True
    wrapped.__cause__ = err
    return wrapped
