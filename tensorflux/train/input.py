"""Queue-based input pipelines (TF1 `tf.train.*_input_producer`, `tf.train.batch` & co).

Producers fill a FIFOQueue with the elements of a tensor (filenames, indices, slices), once per
epoch, shuffled when asked; `num_epochs` is counted by a LOCAL variable (`count_up_to`), so the
enqueue raises OutOfRangeError after the last epoch, the queue runner closes the queue, and the
consumers see the end of input. Batchers run enqueue ops in queue-runner threads into a
(Padding)FIFOQueue or RandomShuffleQueue and dequeue `batch_size` elements at a time
(`dequeue_up_to` when `allow_smaller_final_batch`).

Every function adds its QueueRunner to the QUEUE_RUNNERS collection: call
`tf.train.start_queue_runners` before running the returned tensors.
"""

from __future__ import annotations

import numpy as np

from tensorflux import summary
from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import partition as partition_ops
from tensorflux.ops.array import slicing as slicing_ops
from tensorflux.ops.data_flow import queues as data_flow_ops
from tensorflux.ops.debug import logging as logging_ops
from tensorflux.ops.io.readers import matching_files
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.random import stateful as random_ops
from tensorflux.ops.sparse import core as sparse_ops
from tensorflux.ops.state.variables import Variable
from tensorflux.train.queue_runner import QueueRunner, add_queue_runner

__all__ = ["match_filenames_once", "limit_epochs", "input_producer", "string_input_producer",
           "range_input_producer", "slice_input_producer", "batch", "maybe_batch",
           "batch_join", "maybe_batch_join", "shuffle_batch", "maybe_shuffle_batch",
           "shuffle_batch_join", "maybe_shuffle_batch_join"]



def _local_variable(initial_value, name: str, validate_shape: bool = True):
    return Variable(initial_value, name=name, trainable=False, validate_shape=validate_shape,
                    collections=[GraphKeys.LOCAL_VARIABLES])


def _fraction_summary(name: str, numerator, denominator: int) -> None:
    """TF1's queue-fullness summary (a scalar in the SUMMARIES collection)."""

    summary.scalar(name, cast_ops.cast(numerator, dtypes.float32) * (1.0 / denominator))


def match_filenames_once(pattern, name=None):
    """A local variable holding the files that match `pattern`, computed at initialization.

    Run `tf.local_variables_initializer()` before reading it.
    """

    return _local_variable(lambda: matching_files(pattern), name=name or "matching_filenames",
                           validate_shape=False)


def limit_epochs(tensor, num_epochs=None, name=None):
    """Returns `tensor` for `num_epochs` evaluations, then raises OutOfRangeError.

    The count lives in a LOCAL variable named "epochs": initialize it with
    `tf.local_variables_initializer()`.
    """
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")

    with _scope(name, "limit_epochs") as scope:
        epochs = _local_variable(np.int64(0), name="epochs")
        counter = epochs.count_up_to(num_epochs)
        graph = graph_mod.get_default_graph()
        with graph.control_dependencies([counter]):
            return array_ops.identity(tensor, name=scope)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None,
                   cancel_op=None):
    """A FIFOQueue fed, by a QueueRunner, with the rows of `input_tensor` each epoch.

    Args:
        input_tensor: a tensor whose first dimension indexes the elements.
        element_shape: the shape of one element (when `input_tensor`'s is not fully known).
        num_epochs: stop (OutOfRangeError) after this many passes; None: forever.
        shuffle: shuffle the rows within each epoch.
        seed: the shuffle's seed.
        capacity: the queue's capacity.
        shared_name: share the queue across sessions under this name.
        summary_name: when given, a scalar summary of how full the queue is.
        name: a name scope.
        cancel_op: the runner's cancel op.

    Returns:
        The queue (dequeue from it, or pass it to a reader).

    Raises:
        ValueError: the element shape is not fully defined.
    """

    with _scope(name, "input_producer") as scope:
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(
            TensorShape(None) if element_shape is None else as_shape(element_shape))
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = data_flow_ops.FIFOQueue(capacity=capacity,
                                        dtypes=[input_tensor.dtype.base_dtype],
                                        shapes=[element_shape], shared_name=shared_name,
                                        name=scope)
        enqueue = queue.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            _fraction_summary(summary_name, queue.size(), capacity)
        return queue


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32,
                          shared_name=None, name=None, cancel_op=None):
    """A queue of strings (typically filenames) for readers (TF1 `string_input_producer`).

    Example:
        >>> filename_queue = tf.train.string_input_producer(["a.csv", "b.csv"], num_epochs=2)
        >>> key, line = tf.TextLineReader().read(filename_queue)

    Raises:
        ValueError: an empty Python list of strings.
        InvalidArgumentError: (at run time) an empty string tensor.
    """

    not_null_err = "string_input_producer requires a non-null input tensor"
    # A Python or NumPy collection (a Tensor or Variable, e.g. match_filenames_once, is checked
    # at run time by the Assert below).
    if isinstance(string_tensor, (list, tuple, np.ndarray)) and not len(string_tensor):
        raise ValueError(not_null_err)
    with _scope(name, "input_producer") as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        graph = graph_mod.get_default_graph()
        check = logging_ops.Assert(
            comparison_ops.greater(array_ops.size(string_tensor), 0), [not_null_err])
        with graph.control_dependencies([check]):
            string_tensor = array_ops.identity(string_tensor)
        return input_producer(string_tensor, element_shape=[], num_epochs=num_epochs,
                              shuffle=shuffle, seed=seed, capacity=capacity,
                              shared_name=shared_name, name=scope, cancel_op=cancel_op,
                              summary_name=f"fraction_of_{capacity}_full")


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """A queue of the integers 0 .. limit-1, each epoch (TF1 `range_input_producer`)."""

    with _scope(name, "input_producer") as scope:
        range_tensor = sequence_ops.range(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, f"fraction_of_{capacity}_full", scope)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """One row at a time of each tensor in `tensor_list`, rows kept together (TF1
    `slice_input_producer`).

    Returns:
        A list of tensors, the i-th being one row of `tensor_list[i]`.
    """

    with _scope(name, "input_producer"):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        first = tensor_list[0].shape._dim_list[0] if tensor_list[0].shape.rank else None
        for tensor in tensor_list[1:]:
            size = tensor.shape._dim_list[0] if tensor.shape.rank else None
            if first is not None and size is not None and size != first:
                raise ValueError(f"slice_input_producer: all tensors need the same first "
                                 f"dimension, got {first} and {size} ({tensor.name})")
        range_size = array_ops.shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [slicing_ops.gather(t, index) for t in tensor_list]


# -- batching ----------------------------------------------------------------------------------

def _as_tensor_list(tensors) -> list:
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors)]
    if isinstance(tensors, (list, tuple)):
        return list(tensors)
    return [tensors]


def _as_original_type(original, dequeued):
    if isinstance(original, dict):
        if not isinstance(dequeued, (list, tuple)):
            dequeued = [dequeued]
        return {k: dequeued[i] for i, k in enumerate(sorted(original))}
    return dequeued


def _validate(tensor_list) -> list:
    tensor_list = [t if isinstance(t, SparseTensor) else convert_to_tensor(t)
                   for t in tensor_list]
    if not tensor_list:
        raise ValueError("Expected at least one tensor in batch().")
    return tensor_list


def _store_sparse_tensors(tensor_list, enqueue_many, shared_maps=None):
    """Replaces SparseTensors by int64 handles into a SparseTensorsMap (queues hold dense
    tensors only); returns the new list and, per position, (map op, rank) or None."""

    stored, info = [], []
    for i, tensor in enumerate(tensor_list):
        if not isinstance(tensor, SparseTensor):
            stored.append(tensor)
            info.append(None)
            continue
        rank = tensor.dense_shape.shape.with_rank(1)._dim_list[0]
        if rank is None:
            raise ValueError(f"SparseTensor {tensor!r} needs a dense_shape of known length to "
                             "be batched")
        if enqueue_many and rank < 2:
            raise ValueError(f"SparseTensor must have rank > 1 when enqueue_many: {tensor!r}")
        shared = shared_maps[i] if shared_maps is not None else None
        op = (sparse_ops.AddManySparseToTensorsMap if enqueue_many
              else sparse_ops.AddSparseToTensorsMap)
        handles = op(tensor.indices, tensor.values, tensor.dense_shape,
                     shared_name=shared.name if shared is not None else "")
        stored.append(handles)
        info.append((shared if shared is not None else handles.op,
                     rank - 1 if enqueue_many else rank))
    return stored, info


def _restore_sparse_tensors(dequeued, info):
    if not any(info):
        return dequeued
    single = not isinstance(dequeued, (list, tuple))
    items = [dequeued] if single else list(dequeued)
    for i, meta in enumerate(info):
        if meta is not None:
            map_op, rank = meta
            items[i] = sparse_ops.take_many_sparse_from_tensors_map(map_op, items[i], rank)
    return items[0] if single else items


def _validate_join(tensor_list_list) -> list:
    lists = [_validate(_as_tensor_list(tl)) for tl in tensor_list_list]
    if not lists:
        raise ValueError("Expected at least one input in batch_join().")
    return lists


def _store_sparse_join(tensor_list_list, enqueue_many):
    """`_store_sparse_tensors` for each list, all sharing the first list's maps."""
    first, info = _store_sparse_tensors(tensor_list_list[0], enqueue_many)
    stored = [first]
    for tensor_list in tensor_list_list[1:]:
        kinds = [isinstance(t, SparseTensor) for t in tensor_list]
        if kinds != [meta is not None for meta in info]:
            raise ValueError(f"Inconsistent SparseTensors list: {tensor_list_list[0]} vs. "
                             f"{tensor_list}")
        shared = [meta[0] if meta else None for meta in info]
        more, _ = _store_sparse_tensors(tensor_list, enqueue_many, shared)
        stored.append(more)
    return stored, info


def _validate_keep_input(keep_input, enqueue_many):
    keep_input = convert_to_tensor(keep_input, dtype=dtypes.bool_)
    rank = keep_input.shape.rank
    if rank is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and rank == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if rank > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    return keep_input


def _dtypes(tensor_list_list) -> list:
    types = [t.dtype.base_dtype for t in tensor_list_list[0]]
    for other in tensor_list_list[1:]:
        theirs = [t.dtype.base_dtype for t in other]
        if theirs != types:
            raise TypeError(f"Expected types {[t.name for t in types]}, got "
                            f"{[t.name for t in theirs]}")
    return types


def _shapes(tensor_list_list, shapes, enqueue_many) -> list:
    if shapes is not None:
        return [as_shape(s) for s in shapes]
    count = len(tensor_list_list[0])
    for other in tensor_list_list[1:]:
        if len(other) != count:
            raise ValueError(f"Expected {count} tensors, got {len(other)}")
    merged = []
    for i in range(count):
        shape = TensorShape(None)
        for tensors in tensor_list_list:
            own = tensors[i].shape
            if enqueue_many:
                own = own.with_rank_at_least(1)[1:]
            shape = shape.merge_with(own)
        merged.append(shape)
    return merged


def _enqueue_op(queue, tensor_list, enqueue_many, keep_input):
    """An enqueue of `tensor_list`, filtered by `keep_input` unless it is constant True."""

    keep = constant_value(keep_input)
    if keep is not None and np.ndim(keep) == 0 and bool(keep):
        fn = queue.enqueue_many if enqueue_many else queue.enqueue
        return fn(tensor_list)
    if keep_input.shape.rank == 0:
        # One element or none: a one-row batch split by the predicate (no control flow).
        tensor_list = [array_ops.expand_dims(t, 0) for t in tensor_list]
        keep_input = array_ops.reshape(keep_input, [1])
    select = cast_ops.cast(keep_input, dtypes.int32)
    kept = [partition_ops.dynamic_partition(t, select, num_partitions=2)[1] for t in tensor_list]
    return queue.enqueue_many(kept)


def _enqueue(queue, tensor_list, threads, enqueue_many, keep_input) -> None:
    ops = [_enqueue_op(queue, tensor_list, enqueue_many, keep_input)] * threads
    add_queue_runner(QueueRunner(queue, ops))


def _enqueue_join(queue, tensor_list_list, enqueue_many, keep_input) -> None:
    ops = [_enqueue_op(queue, tl, enqueue_many, keep_input) for tl in tensor_list_list]
    add_queue_runner(QueueRunner(queue, ops))


def _shuffle_summary(queue, capacity, min_after_dequeue) -> None:
    over = math_ops.maximum(0, queue.size() - min_after_dequeue)
    _fraction_summary(f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full",
                      over, max(1, capacity - min_after_dequeue))


def _dequeue(queue, batch_size, allow_smaller_final_batch, name):
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def _batch(tensors, batch_size, keep_input, num_threads=1, capacity=32, enqueue_many=False,
           shapes=None, dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
           name=None):
    tensor_list = _as_tensor_list(tensors)
    with _scope(name, "batch") as scope:
        tensor_list = _validate(tensor_list)
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        tensor_list, sparse_info = _store_sparse_tensors(tensor_list, enqueue_many)
        types = _dtypes([tensor_list])
        shapes = _shapes([tensor_list], shapes, enqueue_many)
        queue_cls = data_flow_ops.PaddingFIFOQueue if dynamic_pad else data_flow_ops.FIFOQueue
        queue = queue_cls(capacity=capacity, dtypes=types, shapes=shapes,
                          shared_name=shared_name)
        _enqueue(queue, tensor_list, num_threads, enqueue_many, keep_input)
        _fraction_summary(f"fraction_of_{capacity}_full", queue.size(), capacity)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        dequeued = _restore_sparse_tensors(dequeued, sparse_info)
        return _as_original_type(tensors, dequeued)


def _batch_join(tensors_list, batch_size, keep_input, capacity=32, enqueue_many=False,
                shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                shared_name=None, name=None):
    tensor_list_list = _validate_join(tensors_list)
    with _scope(name, "batch_join") as scope:
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        tensor_list_list, sparse_info = _store_sparse_join(tensor_list_list, enqueue_many)
        types = _dtypes(tensor_list_list)
        shapes = _shapes(tensor_list_list, shapes, enqueue_many)
        queue_cls = data_flow_ops.PaddingFIFOQueue if dynamic_pad else data_flow_ops.FIFOQueue
        queue = queue_cls(capacity=capacity, dtypes=types, shapes=shapes,
                          shared_name=shared_name)
        _enqueue_join(queue, tensor_list_list, enqueue_many, keep_input)
        _fraction_summary(f"fraction_of_{capacity}_full", queue.size(), capacity)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        dequeued = _restore_sparse_tensors(dequeued, sparse_info)
        return _as_original_type(tensors_list[0], dequeued)


def _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input, num_threads=1,
                   seed=None, enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                   shared_name=None, name=None):
    tensor_list = _as_tensor_list(tensors)
    with _scope(name, "shuffle_batch") as scope:
        tensor_list = _validate(tensor_list)
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        tensor_list, sparse_info = _store_sparse_tensors(tensor_list, enqueue_many)
        types = _dtypes([tensor_list])
        shapes = _shapes([tensor_list], shapes, enqueue_many)
        queue = data_flow_ops.RandomShuffleQueue(
            capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed, dtypes=types,
            shapes=shapes, shared_name=shared_name)
        _enqueue(queue, tensor_list, num_threads, enqueue_many, keep_input)
        _shuffle_summary(queue, capacity, min_after_dequeue)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        dequeued = _restore_sparse_tensors(dequeued, sparse_info)
        return _as_original_type(tensors, dequeued)


def _shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input,
                        seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    tensor_list_list = _validate_join(tensors_list)
    with _scope(name, "shuffle_batch_join") as scope:
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        tensor_list_list, sparse_info = _store_sparse_join(tensor_list_list, enqueue_many)
        types = _dtypes(tensor_list_list)
        shapes = _shapes(tensor_list_list, shapes, enqueue_many)
        queue = data_flow_ops.RandomShuffleQueue(
            capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed, dtypes=types,
            shapes=shapes, shared_name=shared_name)
        _enqueue_join(queue, tensor_list_list, enqueue_many, keep_input)
        _shuffle_summary(queue, capacity, min_after_dequeue)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        dequeued = _restore_sparse_tensors(dequeued, sparse_info)
        return _as_original_type(tensors_list[0], dequeued)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches `tensors` through a FIFOQueue filled by `num_threads` queue-runner threads.

    Args:
        tensors: a list or dict of tensors (one element, or a batch when `enqueue_many`).
        batch_size: the number of elements per batch.
        num_threads: the number of enqueuing threads.
        capacity: the queue's capacity.
        enqueue_many: each tensor is a batch of elements.
        shapes: element shapes (default: the tensors' static shapes).
        dynamic_pad: pad variable dimensions (a PaddingFIFOQueue) to each batch's largest.
        allow_smaller_final_batch: the last batch may be smaller (dequeue_up_to).
        shared_name: share the queue under this name.
        name: a name scope.

    Returns:
        Batched tensors in the structure of `tensors` (a single tensor for a one-element list).

    Example:
        >>> images, labels = tf.train.batch([image, label], batch_size=32)
    """
    return _batch(tensors, batch_size, True, num_threads, capacity, enqueue_many, shapes,
                  dynamic_pad, allow_smaller_final_batch, shared_name, name)


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32,
                enqueue_many=False, shapes=None, dynamic_pad=False,
                allow_smaller_final_batch=False, shared_name=None, name=None):
    """Like `batch`, enqueuing only the elements for which `keep_input` is True."""
    return _batch(tensors, batch_size, keep_input, num_threads, capacity, enqueue_many, shapes,
                  dynamic_pad, allow_smaller_final_batch, shared_name, name)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches from several tensor lists, one enqueuing thread each (TF1 `batch_join`)."""
    return _batch_join(tensors_list, batch_size, True, capacity, enqueue_many, shapes,
                       dynamic_pad, allow_smaller_final_batch, shared_name, name)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False,
                     shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                     shared_name=None, name=None):
    """Like `batch_join`, enqueuing only the elements for which `keep_input` is True."""
    return _batch_join(tensors_list, batch_size, keep_input, capacity, enqueue_many, shapes,
                       dynamic_pad, allow_smaller_final_batch, shared_name, name)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """Batches `tensors` in random order through a RandomShuffleQueue.

    `min_after_dequeue` elements stay buffered (until the input ends) so that batches mix
    well; `capacity` bounds the buffer.

    Example:
        >>> x, y = tf.train.shuffle_batch([x1, y1], batch_size=32, capacity=1000,
        ...                               min_after_dequeue=500, num_threads=2)
    """
    return _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, True, num_threads,
                          seed, enqueue_many, shapes, allow_smaller_final_batch, shared_name,
                          name)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                        num_threads=1, seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    """Like `shuffle_batch`, enqueuing only the elements for which `keep_input` is True."""
    return _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                          num_threads, seed, enqueue_many, shapes, allow_smaller_final_batch,
                          shared_name, name)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """Shuffled batches from several tensor lists, one enqueuing thread each."""
    return _shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, True,
                               seed, enqueue_many, shapes, allow_smaller_final_batch,
                               shared_name, name)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input,
                             seed=None, enqueue_many=False, shapes=None,
                             allow_smaller_final_batch=False, shared_name=None, name=None):
    """Like `shuffle_batch_join`, enqueuing only the elements for which `keep_input` is
    True."""
    return _shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue,
                               keep_input, seed, enqueue_many, shapes,
                               allow_smaller_final_batch, shared_name, name)
