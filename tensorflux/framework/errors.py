"""TensorFlow's status classes: every runtime failure is an `OpError` with a code.

An `OpError` carries the failing `op` (an Operation when known), its `node_def`, the numeric
`error_code` (TensorFlow's `error_codes.proto` values) and a message that says what was expected
and what came. The message of an error raised by a kernel also names the op and the file:line of
the user code that created it.
"""

from __future__ import annotations

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failed TensorFlow operation: `op`, `node_def`, `error_code` and `message`."""

    error_code_default = UNKNOWN

    def __init__(self, node_def=None, op=None, message: str = "", error_code: int | None = None):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = self.error_code_default if error_code is None else error_code
        self.experimental_payloads = {}

    @property
    def message(self) -> str:
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        if self._node_def is None and self._op is not None:
            return getattr(self._op, "node_def", None)
        return self._node_def

    @property
    def error_code(self) -> int:
        return self._error_code

    def __str__(self) -> str:
        return self._message

    def __reduce__(self):
        return (type(self), (None, None, self._message, self._error_code))


def _status_class(class_name: str, code: int, doc: str) -> type:
    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        OpError.__init__(self, node_def, op, message, code)

    return type(class_name, (OpError,), {
        "__init__": __init__, "__doc__": doc, "error_code_default": code,
    })


CancelledError = _status_class("CancelledError", CANCELLED, "The step or operation was cancelled.")
UnknownError = _status_class("UnknownError", UNKNOWN, "An error with no better class.")
InvalidArgumentError = _status_class(
    "InvalidArgumentError", INVALID_ARGUMENT, "An op received an invalid argument.")
DeadlineExceededError = _status_class(
    "DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired before the op completed.")
NotFoundError = _status_class("NotFoundError", NOT_FOUND, "A requested entity was not found.")
AlreadyExistsError = _status_class(
    "AlreadyExistsError", ALREADY_EXISTS, "An entity that we tried to create already exists.")
PermissionDeniedError = _status_class(
    "PermissionDeniedError", PERMISSION_DENIED, "The caller may not run the operation.")
ResourceExhaustedError = _status_class(
    "ResourceExhaustedError", RESOURCE_EXHAUSTED, "Some resource has been exhausted.")
FailedPreconditionError = _status_class(
    "FailedPreconditionError", FAILED_PRECONDITION,
    "The system is not in a state to run the op (e.g. an uninitialized variable).")
AbortedError = _status_class("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _status_class(
    "OutOfRangeError", OUT_OF_RANGE, "Iterated past the valid range (e.g. a closed, empty queue).")
UnimplementedError = _status_class(
    "UnimplementedError", UNIMPLEMENTED, "The operation is not implemented or supported.")
InternalError = _status_class("InternalError", INTERNAL, "An internal invariant was broken.")
UnavailableError = _status_class(
    "UnavailableError", UNAVAILABLE, "The runtime is currently unavailable (e.g. a dead task).")
DataLossError = _status_class("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")
UnauthenticatedError = _status_class(
    "UnauthenticatedError", UNAUTHENTICATED, "The request lacks valid credentials.")

_CODE_TO_CLASS = {
    cls.error_code_default: cls
    for cls in (CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError,
                NotFoundError, AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError,
                FailedPreconditionError, AbortedError, OutOfRangeError, UnimplementedError,
                InternalError, UnavailableError, DataLossError, UnauthenticatedError)
}


def exception_type_from_error_code(error_code: int) -> type:
    """Returns the OpError subclass for a numeric status code."""
    return _CODE_TO_CLASS.get(error_code, UnknownError)


def error_code_from_exception_type(cls: type) -> int:
    """Returns the numeric status code of an OpError subclass."""
    return getattr(cls, "error_code_default", UNKNOWN)


def make_error(error_code: int, message: str, op=None, node_def=None) -> OpError:
    """Builds the OpError subclass for `error_code`."""
    return exception_type_from_error_code(error_code)(node_def, op, message)


class raise_exception_on_not_ok_status:  # noqa: N801 - TF1 spelling
    """TF1 compatibility context manager; errors are raised directly here, so it does nothing."""

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
