"""Collective ops: all-reduce, broadcast and all-gather among the members of a group.

TF's ops, names and attrs (TF 1.15): `CollectiveReduce` (merge_op Add/Mul/Min/Max, final_op
Id/Div), `CollectiveBcastSend` / `CollectiveBcastRecv`, `CollectiveGather`. A group is
`group_size` devices (one op per device per instance, sharing `group_key` and
`instance_key`); the devices meet through their task's executor (`exchange`): the
members' values go to the first member, which combines them and sends each its result.
Values equal the NumPy reduction in rank order (members sorted by device name). The kernels
are asynchronous: no thread waits for the other members.
"""

from __future__ import annotations

import functools

import numpy as np

from tensorflux.framework import dtypes as dtypes_mod
from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops.collective import exchange

__all__ = ["all_reduce", "broadcast_send", "broadcast_recv", "all_gather"]

_GROUP_ATTRS = ["group_size: int", "group_key: int", "instance_key: int"]

CollectiveReduce = define_op(
    "CollectiveReduce", inputs=["input: T"], outputs=["data: T"],
    attrs=["T: {float32, float16, float64, int32, int64}", *_GROUP_ATTRS,
           "merge_op: {'Min', 'Max', 'Mul', 'Add'}", "final_op: {'Id', 'Div'}",
           "subdiv_offsets: list(int)", "wait_for: list(int) = []"],
    stateful=True, differentiable=False)
CollectiveBcastSend = define_op(
    "CollectiveBcastSend", inputs=["input: T"], outputs=["data: T"],
    attrs=["T: {bool, float32, float16, float64, int32, int64}", *_GROUP_ATTRS,
           "shape: shape"], stateful=True, differentiable=False)
CollectiveBcastRecv = define_op(
    "CollectiveBcastRecv", outputs=["data: T"],
    attrs=["T: {bool, float32, float16, float64, int32, int64}", *_GROUP_ATTRS,
           "shape: shape"], stateful=True, differentiable=False)
CollectiveGather = define_op(
    "CollectiveGather", inputs=["input: T"], outputs=["data: T"],
    attrs=["T: {float32, float16, float64, int32, int64}", *_GROUP_ATTRS, "shape: shape"],
    stateful=True, differentiable=False)

_MERGE = {"Add": np.add, "Mul": np.multiply, "Min": np.minimum, "Max": np.maximum}


@CollectiveReduce.shape_fn
def _reduce_shape(input):  # noqa: A002 - TF's input name
    return input


@CollectiveBcastSend.shape_fn
def _send_shape(input):  # noqa: A002 - TF's input name
    return input


@CollectiveBcastRecv.shape_fn
def _recv_shape(*, shape):
    return as_shape(shape)


@CollectiveGather.shape_fn
def _gather_shape(input):  # noqa: A002 - TF's input name
    if input.ndims is None:
        return TensorShape(None)
    if input.ndims == 0:
        raise ValueError("CollectiveGather needs inputs of rank 1 or more; got a scalar")
    return TensorShape([None] + input.as_list()[1:])


# -- combining (on the group's first member) ------------------------------------------------

def _same_shapes(values, what: str) -> None:
    shapes = {v.shape for v in values}
    if len(shapes) > 1:
        raise errors.InvalidArgumentError(
            None, None, f"{what}: the members' tensors differ in shape "
            f"({', '.join(str(list(v.shape)) for v in values)} in rank order)")


def _reduce_combine(values, *, merge_op, final_op):
    _same_shapes(values, "CollectiveReduce")
    total = functools.reduce(_MERGE[merge_op], values[1:], values[0])
    total = np.asarray(total, dtype=values[0].dtype)
    if final_op == "Div":
        if np.issubdtype(total.dtype, np.integer):
            total = total // len(values)
        else:
            total = (total / np.asarray(len(values), total.dtype)).astype(total.dtype)
    return total


def _broadcast_combine(values):
    senders = [v for v in values if v is not None]
    if len(senders) != 1:
        raise errors.InternalError(
            None, None, f"Broadcast needs exactly one CollectiveBcastSend in the group; "
            f"{len(senders)} of {len(values)} members sent")
    return senders[0]


def _gather_combine(values):
    tails = {v.shape[1:] for v in values}
    if any(v.ndim == 0 for v in values) or len(tails) > 1:
        raise errors.InvalidArgumentError(
            None, None, "CollectiveGather: the members' tensors must agree in every dimension "
            f"but the first; got {[list(v.shape) for v in values]} in rank order")
    return np.concatenate(values, axis=0)


# -- kernels ----------------------------------------------------------------------------------

def _run(ctx, value, done, group_key, group_size, instance_key, combine) -> None:
    if group_size < 1:
        done(error=errors.InvalidArgumentError(
            None, None, f"group_size must be positive; got {group_size}"))
        return
    if group_size == 1:
        try:
            done(combine([value]))
        except errors.OpError as err:
            done(error=err)
        return

    def finished(error, result):
        if error is not None:
            done(error=error)
        else:
            done(result)

    device = ctx.device.name
    exchange.executor_for(device).run(device, group_key, group_size, instance_key, value,
                                      combine, finished, ctx.cancellation)


@CollectiveReduce.kernel(asynchronous=True)
def _reduce_kernel(ctx, value, done, *, group_size, group_key, instance_key, merge_op,
                   final_op):
    combine = functools.partial(_reduce_combine, merge_op=merge_op, final_op=final_op)
    _run(ctx, np.asarray(value), done, group_key, group_size, instance_key, combine)


def _checked_shape(value, shape, what: str) -> None:
    declared = as_shape(shape)
    if declared.ndims is not None and not declared.is_compatible_with(value.shape):
        raise errors.InvalidArgumentError(
            None, None, f"{what}: the tensor has shape {list(value.shape)}, the op declares "
            f"{declared}")


@CollectiveBcastSend.kernel(asynchronous=True)
def _bcast_send_kernel(ctx, value, done, *, group_size, group_key, instance_key, shape):
    value = np.asarray(value)
    try:
        _checked_shape(value, shape, "CollectiveBcastSend")
    except errors.OpError as err:
        done(error=err)
        return
    _run(ctx, value, done, group_key, group_size, instance_key, _broadcast_combine)


@CollectiveBcastRecv.kernel(asynchronous=True)
def _bcast_recv_kernel(ctx, done, *, T, group_size, group_key, instance_key, shape):
    dtype = dtypes_mod.as_dtype(T).as_numpy_dtype

    def received(result=None, error=None, **kwargs):
        if error is not None:
            done(error=error)
            return
        try:
            _checked_shape(result, shape, "CollectiveBcastRecv")
        except errors.OpError as err:
            done(error=err)
            return
        done(np.asarray(result, dtype=dtype))

    _run(ctx, None, received, group_key, group_size, instance_key, _broadcast_combine)


@CollectiveGather.kernel(asynchronous=True)
def _gather_kernel(ctx, value, done, *, group_size, group_key, instance_key, shape):
    _run(ctx, np.asarray(value), done, group_key, group_size, instance_key, _gather_combine)


# -- wrappers (TF's `collective_ops` module) --------------------------------------------------

def _check_group_size(group_size, what: str, minimum: int = 1) -> None:
    if group_size < minimum:
        raise ValueError(f"Parameter group_size to {what} must be at least {minimum}.")


def all_reduce(t, group_size, group_key, instance_key, merge_op, final_op,
               subdiv_offsets=(0,), name=None):
    """Reduces `t` over the group (TF's `collective_ops.all_reduce`).

    Args:
        t: the tensor of this member.
        group_size, group_key, instance_key: the group and the instance (ints).
        merge_op: "Add", "Mul", "Min" or "Max".
        final_op: "Id" or "Div" (divide by group_size).
        subdiv_offsets: kept for TF's signature (ring subdivisions).

    Returns:
        The reduced tensor, equal on every member.

    Raises:
        ValueError: group_size < 1, or an unknown merge_op / final_op.
    """
    _check_group_size(group_size, "all_reduce")
    return CollectiveReduce(convert_to_tensor(t), group_size=group_size, group_key=group_key,
                            instance_key=instance_key, merge_op=merge_op, final_op=final_op,
                            subdiv_offsets=list(subdiv_offsets), name=name)


def broadcast_send(t, shape, dtype, group_size, group_key, instance_key, name=None):
    """Sends `t` to the other members (each runs `broadcast_recv`); returns `t`.

    Raises:
        ValueError: group_size < 2, or `t` differs from the declared shape or dtype.
    """
    _check_group_size(group_size, "broadcast_send", 2)
    t = convert_to_tensor(t)
    if not t.shape.is_compatible_with(as_shape(shape)):
        raise ValueError("Shape of broadcast_send tensor not equal to declared shape")
    if t.dtype.base_dtype != dtypes_mod.as_dtype(dtype).base_dtype:
        raise ValueError("Type of broadcast_send tensor not equal to declared type")
    return CollectiveBcastSend(t, shape=as_shape(shape), group_size=group_size,
                               group_key=group_key, instance_key=instance_key, name=name)


def broadcast_recv(shape, dtype, group_size, group_key, instance_key, name=None):
    """The tensor the group's `broadcast_send` member sends.

    Raises:
        ValueError: group_size < 2.
    """
    _check_group_size(group_size, "broadcast_recv", 2)
    return CollectiveBcastRecv(T=dtypes_mod.as_dtype(dtype).base_dtype, shape=as_shape(shape),
                               group_size=group_size, group_key=group_key,
                               instance_key=instance_key, name=name)


def all_gather(t, group_size, group_key, instance_key, name=None):
    """The members' `t` concatenated along the first dimension, in rank order.

    Raises:
        ValueError: group_size < 1.
    """
    _check_group_size(group_size, "all_gather")
    t = convert_to_tensor(t)
    return CollectiveGather(t, shape=t.shape, group_size=group_size, group_key=group_key,
                            instance_key=instance_key, name=name)
