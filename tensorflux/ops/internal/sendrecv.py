"""Ops the runtime inserts: `_Arg` for feeds, and `_Send`/`_Recv` on cross-device edges.

A `_Send` hands its input to the step's rendezvous under its key and never blocks; a `_Recv`
is an asynchronous kernel that completes when the matching value arrives (or the step aborts).
"""

from __future__ import annotations

from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape

Arg = define_op("_Arg", outputs=["output: T"], attrs=["T: type", "index: int >= 0"],
                differentiable=False)


@Arg.shape_fn
def _arg_shape():
    return TensorShape(None)


Retval = define_op("_Retval", inputs=["input: T"], attrs=["T: type", "index: int >= 0"],
                   differentiable=False)


@Retval.shape_fn
def _retval_shape(input):
    return []


Send = define_op(
    "_Send", inputs=["tensor: T"],
    attrs=["T: type", "tensor_name: string", "send_device: string",
           "send_device_incarnation: int", "recv_device: string",
           "client_terminal: bool = False"],
    stateful=True, differentiable=False)


@Send.shape_fn
def _send_shape(tensor):
    return []


@Send.kernel(ctx=True, factory=True)
def _send_kernel(tensor_name, send_device, send_device_incarnation, recv_device):
    def send(ctx, value):
        key = ctx.rendezvous.make_key(send_device, send_device_incarnation, recv_device,
                                      tensor_name, ctx.frame_iter)
        dead = value is ctx.DEAD
        ctx.rendezvous.send(key, None if dead else value, dead)

    return send


Recv = define_op(
    "_Recv", outputs=["tensor: tensor_type"],
    attrs=["tensor_type: type", "tensor_name: string", "send_device: string",
           "send_device_incarnation: int", "recv_device: string",
           "client_terminal: bool = False"],
    stateful=True, differentiable=False)


@Recv.shape_fn
def _recv_shape():
    return TensorShape(None)


@Recv.kernel(asynchronous=True, factory=True)
def _recv_kernel(tensor_name, send_device, send_device_incarnation, recv_device):
    def recv(ctx, done):
        key = ctx.rendezvous.make_key(send_device, send_device_incarnation, recv_device,
                                      tensor_name, ctx.frame_iter)

        def arrived(error, value, is_dead):
            if error is not None:
                done(error=error)
            else:
                done(value, is_dead=is_dead)

        ctx.rendezvous.recv_async(key, arrived)

    return recv
