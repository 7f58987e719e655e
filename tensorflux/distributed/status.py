"""OpErrors <-> `StatusProto` (code, message, op name, task) across service boundaries."""

from __future__ import annotations

from tensorflux.framework import errors


def to_status(proto, error: BaseException | None, task: str = "") -> None:
    """Fills a StatusProto from an exception (OK when None)."""
    if error is None:
        proto.code = errors.OK
        return
    if isinstance(error, errors.OpError):
        proto.code = error.error_code
        proto.message = error.message
        op = error.op
        if op is not None:
            proto.op_name = getattr(op, "name", "") or ""
    else:
        proto.code = errors.INTERNAL
        proto.message = f"{type(error).__name__}: {error}"
    proto.task = getattr(error, "_tfx_task", "") or task


def raise_if_error(proto, where: str = "") -> None:
    """Raises the OpError a non-OK StatusProto describes, naming the remote task."""
    if proto.code == errors.OK:
        return
    message = proto.message
    if proto.task and proto.task not in message:
        message = f"{message}\n\t(on task {proto.task})"
    elif where and where not in message:
        message = f"{message}\n\t({where})"
    error = errors.exception_type_from_error_code(proto.code)(None, None, message)
    error._tfx_task = proto.task
    error._tfx_annotated = True
    raise error


def from_status(proto):
    try:
        raise_if_error(proto)
    except errors.OpError as err:
        return err
    return None
