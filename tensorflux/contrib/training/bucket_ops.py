"""`tf.contrib.training.bucket` / `bucket_by_sequence_length`: queue-based lazy bucketing.

Contract (TF 1.15): each element is enqueued, by queue-runner threads, into the bucket queue
its `which_bucket` names (a PaddingFIFOQueue when `dynamic_pad`); one thread per bucket moves
full batches (`dequeue_many`, or `dequeue_up_to` with `allow_smaller_final_batch`) into a top
PaddingFIFOQueue whose elements are `(bucket id, batch...)`. The returned tensors dequeue one
batch: every row of a batch comes from the same bucket, padded (with `dynamic_pad`) to that
batch's longest element. When the input ends the bucket queues close, the remaining full
batches (and, with `allow_smaller_final_batch`, the partial ones) still come out, then the
top queue closes and the dequeue raises OutOfRangeError.
"""

from __future__ import annotations

import numbers

import numpy as np

from tensorflux import summary
from tensorflux.framework import dtypes, errors
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.data_flow import queues as data_flow_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.train import input as input_mod
from tensorflux.train.queue_runner import QueueRunner, add_queue_runner

__all__ = ["bucket", "bucket_by_sequence_length"]

_CLOSED = (errors.OutOfRangeError, errors.CancelledError)


def _batch_sizes(batch_size, num_buckets) -> list:
    if isinstance(batch_size, (list, tuple)):
        if len(batch_size) != num_buckets:
            raise ValueError("If batch_size is a list it must have num_buckets elements")
        return list(batch_size)
    return [batch_size] * num_buckets


def bucket(tensors, which_bucket, batch_size, num_buckets, num_threads=1, capacity=32,
           bucket_capacities=None, shapes=None, dynamic_pad=False,
           allow_smaller_final_batch=False, keep_input=True, shared_name=None, name=None):
    """Lazy bucketing of `tensors` into `num_buckets` queues chosen by `which_bucket`.

    Args:
        tensors: a list or dict of tensors (one element each).
        which_bucket: int32 scalar tensor in `[0, num_buckets)`.
        batch_size: a Python int, or a list of `num_buckets` ints (one per bucket).
        num_buckets: the number of buckets (a Python int >= 1).
        num_threads: enqueuing threads.
        capacity: capacity of the top queue (and of each bucket queue by default).
        bucket_capacities: a list of `num_buckets` capacities, one per bucket queue.
        shapes: element shapes (default: the tensors' static shapes).
        dynamic_pad: pad variable dimensions to each batch's longest element.
        allow_smaller_final_batch: the last batch of each bucket may be smaller.
        keep_input: bool scalar; elements for which it is False are dropped.
        shared_name: share the queues under this name (bucket i: `<name>_<i>`).
        name: a name scope.

    Returns:
        `(bucket, outputs)`: the int32 id of the batch's bucket and the batched tensors in
        the structure of `tensors`.

    Raises:
        ValueError: `num_buckets` < 1, or a per-bucket list of the wrong length.
    """
    if not isinstance(num_buckets, numbers.Integral) or num_buckets < 1:
        raise ValueError(f"num_buckets must be a positive integer, saw {num_buckets!r}")
    sizes = _batch_sizes(batch_size, num_buckets)
    if bucket_capacities is None:
        bucket_capacities = [capacity] * num_buckets
    if len(bucket_capacities) != num_buckets:
        raise ValueError(f"The list bucket_capacities ({bucket_capacities}) must have exactly "
                         f"num_buckets ({num_buckets}) elements.")
    tensor_list = input_mod._as_tensor_list(tensors)
    with _scope(name, "bucket") as scope:
        tensor_list = input_mod._validate(tensor_list)
        keep_input = input_mod._validate_keep_input(keep_input, False)
        tensor_list, sparse_info = input_mod._store_sparse_tensors(tensor_list, False)
        types = input_mod._dtypes([tensor_list])
        shapes = input_mod._shapes([tensor_list], shapes, False)
        which_bucket = convert_to_tensor(which_bucket, dtype=dtypes.int32, name="which_bucket")
        queue_cls = data_flow_ops.PaddingFIFOQueue if dynamic_pad else data_flow_ops.FIFOQueue
        bucket_queues = [
            queue_cls(capacity=bucket_capacities[i], dtypes=types, shapes=shapes,
                      shared_name=f"{shared_name}_{i}" if shared_name else None,
                      name=f"bucket_queue_{i}")
            for i in range(num_buckets)]
        static = sizes[0] if all(s == sizes[0] for s in sizes) and isinstance(
            sizes[0], numbers.Integral) and not allow_smaller_final_batch else None
        batch_shapes = [TensorShape([static]).concatenate(s) for s in bucket_queues[0].shapes]
        # A padding queue even without dynamic_pad: batch shapes may lack their first dim.
        top_queue = data_flow_ops.PaddingFIFOQueue(
            capacity=capacity, dtypes=[dtypes.int32] + types,
            shapes=[TensorShape([])] + batch_shapes, shared_name=shared_name,
            name="top_queue")
        chosen = data_flow_ops.QueueBase.from_list(which_bucket, bucket_queues)
        enqueue = input_mod._enqueue_op(chosen, tensor_list, False, keep_input)
        add_queue_runner(QueueRunner(
            bucket_queues[0], [enqueue] * num_threads,
            close_op=_group([q.close() for q in bucket_queues]),
            cancel_op=_group([q.close(cancel_pending_enqueues=True) for q in bucket_queues]),
            queue_closed_exception_types=_CLOSED))
        to_top = []
        for i, (queue, size) in enumerate(zip(bucket_queues, sizes)):
            read = (queue.dequeue_up_to(size, name=f"read_bucket_{i}")
                    if allow_smaller_final_batch
                    else queue.dequeue_many(size, name=f"read_bucket_{i}"))
            read = read if isinstance(read, (list, tuple)) else [read]
            to_top.append(top_queue.enqueue(
                [array_ops.constant(i, dtypes.int32)] + list(read),
                name=f"enqueue_from_bucket_{i}"))
        add_queue_runner(QueueRunner(
            bucket_queues[0], to_top, close_op=top_queue.close(),
            cancel_op=top_queue.close(cancel_pending_enqueues=True),
            queue_closed_exception_types=_CLOSED))
        for i, queue in enumerate(bucket_queues):
            summary.scalar(f"bucket/{scope.rstrip('/').replace('/', '_')}/bucket_{i}/size",
                           cast_ops.cast(queue.size(), dtypes.float32))
        dequeued = top_queue.dequeue(name="dequeue_top")
        which = dequeued[0]
        outputs = list(dequeued[1:])
        outputs = input_mod._restore_sparse_tensors(outputs, sparse_info)
        return which, input_mod._as_original_type(tensors, outputs)


def _group(ops):
    return control_flow_ops.group(*ops)


def bucket_by_sequence_length(input_length, tensors, batch_size, bucket_boundaries,
                              num_threads=1, capacity=32, bucket_capacities=None, shapes=None,
                              dynamic_pad=False, allow_smaller_final_batch=False,
                              keep_input=True, shared_name=None, name=None):
    """`bucket` by length: bucket i holds `boundaries[i-1] <= input_length < boundaries[i]`.

    Args:
        input_length: int32 scalar, the element's sequence length.
        tensors: a list or dict of tensors (one element each).
        batch_size: a Python int, or one per bucket (`len(bucket_boundaries) + 1`).
        bucket_boundaries: strictly increasing Python ints.
        (the other arguments as in `bucket`.)

    Returns:
        `(lengths, outputs)`: the int32 `input_length` of each row and the batched tensors.

    Raises:
        TypeError: `bucket_boundaries` is not a list of Python integers.
        ValueError: `bucket_boundaries` is not strictly increasing.
    """
    tensor_list = input_mod._as_tensor_list(tensors)
    if not isinstance(bucket_boundaries, (list, tuple)):
        raise TypeError(f"bucket_boundaries must be a list or tuple, but received: "
                        f"{bucket_boundaries}")
    if not all(isinstance(b, numbers.Integral) for b in bucket_boundaries):
        raise TypeError("bucket_boundaries must be a list or tuple of integers, but received: "
                        f"{list(bucket_boundaries)}")
    if any(a >= b for a, b in zip(bucket_boundaries[:-1], bucket_boundaries[1:])):
        raise ValueError(f"Buckets must contain sequential increasing lengths: "
                         f"{list(bucket_boundaries)}")
    with _scope(name, "bucket_by_sequence_length") as scope:
        input_length = convert_to_tensor(input_length, dtype=dtypes.int32, name="input_length")
        lows = array_ops.constant([np.iinfo(np.int32).min] + list(bucket_boundaries),
                                  dtypes.int32)
        highs = array_ops.constant(list(bucket_boundaries) + [np.iinfo(np.int32).max],
                                   dtypes.int32)
        inside = math_ops.logical_and(math_ops.less_equal(lows, input_length),
                                      math_ops.less(input_length, highs))
        which = cast_ops.cast(math_ops.reduce_min(array_ops.where(inside)), dtypes.int32)
        if shapes is not None:
            shapes = [TensorShape([])] + list(shapes)
        _, dequeued = bucket(
            [input_length] + tensor_list, which, batch_size, len(bucket_boundaries) + 1,
            num_threads=num_threads, capacity=capacity, bucket_capacities=bucket_capacities,
            shapes=shapes, dynamic_pad=dynamic_pad,
            allow_smaller_final_batch=allow_smaller_final_batch, keep_input=keep_input,
            shared_name=shared_name, name=scope.rstrip("/").split("/")[-1] + "_bucket")
        return dequeued[0], input_mod._as_original_type(tensors, list(dequeued[1:]))
