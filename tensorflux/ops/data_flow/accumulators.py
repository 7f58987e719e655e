"""Gradient accumulators: `tf.ConditionalAccumulator` and `tf.SparseConditionalAccumulator`.

Contract: an accumulator sums the gradients applied with a `local_step` not older than its
global step (staler ones are dropped, as in synchronous replication); `take_grad(n)` waits,
without holding a thread, until `n` gradients have been accumulated, returns their mean (or sum)
and resets the sum, advancing the global step by one. Sparse accumulators keep rows (sorted,
unique indices) and average each row over the gradients that touched it.

`take_grad` is an asynchronous kernel; it is cancelled with its step (deadline, failure,
Session.close), leaving the accumulated gradients in place.
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops.math import casting as cast_ops
from tensorflux.platform import producer_gate, tf_logging

__all__ = ["ConditionalAccumulatorBase", "ConditionalAccumulator",
           "SparseConditionalAccumulator"]


class _Accumulator:
    """Shared state machine: staleness, counting, and the waiting takers."""

    kind = "ConditionalAccumulator"

    def __init__(self, name, dtype, shape, reduction_type):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.reduction_type = reduction_type
        self.global_step = 0
        self.count = 0
        self._lock = threading.Lock()
        self._takers: deque = deque()

    def describe(self) -> str:
        return f"{self.kind} '{self.name}'"

    def apply(self, local_step: int, *gradient) -> None:
        ready = []
        with self._lock:
            if local_step < self.global_step:
                tf_logging.vlog(1, "%s: dropping a stale gradient (local step %d < global step "
                                "%d)", self.describe(), local_step, self.global_step)
                return
            self._add(*gradient)
            self.count += 1
            self._serve(ready)
        _run(ready)

    def take(self, ctx, num_required: int, done) -> None:
        if num_required <= 0:
            done(error=errors.InvalidArgumentError(
                None, None, f"Argument num_required must be positive, but was {num_required}"))
            return
        taker = [num_required, done, ctx.cancellation, None]
        ready = []
        with self._lock:
            self._takers.append(taker)
            self._serve(ready)
            if taker[1] is not None:
                token = ctx.cancellation.register(lambda error: self._cancel(taker))
                if token is None:
                    self._takers.remove(taker)
                    ready.append((taker[1], None, errors.CancelledError(
                        None, None, "TakeGrad operation was cancelled")))
                    taker[1] = None
                else:
                    taker[3] = token
                    # a blocked take lets input producers run (set before any serve)
                    producer_gate.consumer_blocked()
                    taker[1] = producer_gate.unblocking(taker[1])
        _run(ready)

    def set_global_step(self, step: int) -> None:
        with self._lock:
            if step < self.global_step:
                tf_logging.warning("%s: new global step %d is lower than the current one %d",
                                   self.describe(), step, self.global_step)
            self.global_step = int(step)

    def close_resource(self) -> None:
        with self._lock:
            takers = list(self._takers)
            self._takers.clear()
        for taker in takers:
            if taker[1] is not None:
                done, taker[1] = taker[1], None
                done(error=errors.CancelledError(None, None, f"TakeGrad operation was "
                                                 f"cancelled: {self.describe()} was closed."))

    def _cancel(self, taker) -> None:
        with self._lock:
            if taker[1] is None:
                return
            done, taker[1] = taker[1], None
            if taker in self._takers:
                self._takers.remove(taker)
        done(error=errors.CancelledError(None, None, "TakeGrad operation was cancelled"))

    def _serve(self, ready: list) -> None:
        while self._takers and self.count >= self._takers[0][0]:
            taker = self._takers.popleft()
            if taker[3] is not None and not taker[2].deregister(taker[3]):
                continue  # its cancellation is already under way and will report
            try:
                result = self._result()
            except errors.OpError as err:
                ready.append((taker[1], None, err))
            else:
                ready.append((taker[1], result, None))
            taker[1] = None
            self._reset()
            self.count = 0
            self.global_step += 1


class DenseAccumulator(_Accumulator):
    def __init__(self, name, dtype, shape, reduction_type):
        super().__init__(name, dtype, shape, reduction_type)
        self._sum = None

    def _add(self, gradient) -> None:
        gradient = np.asarray(gradient)
        if self.shape.rank is not None and not self.shape.is_compatible_with(gradient.shape):
            raise errors.InvalidArgumentError(
                None, None, f"{self.describe()}: shape of the gradient {list(gradient.shape)} "
                f"is incompatible with the accumulator's shape {self.shape}")
        if self._sum is not None and self._sum.shape != gradient.shape:
            raise errors.InvalidArgumentError(
                None, None, f"{self.describe()}: shape mismatch: expected "
                f"{list(self._sum.shape)}, got {list(gradient.shape)}")
        if self._sum is None:
            self._sum = gradient.astype(self.dtype.as_numpy_dtype, copy=True)
        else:
            self._sum += gradient

    def _result(self):
        if self.reduction_type == "SUM":
            return self._sum.copy()
        return (self._sum / self.count).astype(self.dtype.as_numpy_dtype)

    def _reset(self) -> None:
        self._sum = None


class SparseAccumulator(_Accumulator):
    kind = "SparseConditionalAccumulator"

    def __init__(self, name, dtype, shape, reduction_type):
        super().__init__(name, dtype, shape, reduction_type)
        self._reset()

    def _reset(self) -> None:
        self._indices = np.empty(0, np.int64)
        self._values = None
        self._counts = np.empty(0, np.int64)
        self._dense_shape = None

    def _add(self, indices, values, shape, has_known_shape) -> None:
        indices = np.asarray(indices, np.int64).reshape(-1)
        values = np.asarray(values)
        if values.ndim < 1 or values.shape[0] != len(indices):
            raise errors.InvalidArgumentError(
                None, None, f"{self.describe()}: gradient has {len(indices)} indices but values "
                f"of shape {list(values.shape)}")
        if has_known_shape:
            dense = [int(d) for d in np.asarray(shape).reshape(-1)]
            if len(dense) != values.ndim or dense[1:] != list(values.shape[1:]):
                raise errors.InvalidArgumentError(
                    None, None, f"{self.describe()}: gradient values of shape "
                    f"{list(values.shape)} do not match the gradient shape {dense}")
            if self.shape.rank is not None and not self.shape.is_compatible_with(dense):
                raise errors.InvalidArgumentError(
                    None, None, f"{self.describe()}: shape of the gradient {dense} is "
                    f"incompatible with the accumulator's shape {self.shape}")
            self._dense_shape = dense
        if self._values is not None and self._values.shape[1:] != values.shape[1:]:
            raise errors.InvalidArgumentError(
                None, None, f"{self.describe()}: gradient rows of shape "
                f"{list(values.shape[1:])} do not match earlier ones "
                f"{list(self._values.shape[1:])}")
        merged = np.union1d(self._indices, indices)
        sums = np.zeros((len(merged),) + values.shape[1:], self.dtype.as_numpy_dtype)
        counts = np.zeros(len(merged), np.int64)
        if self._values is not None:
            where = np.searchsorted(merged, self._indices)
            sums[where] = self._values
            counts[where] = self._counts
        where = np.searchsorted(merged, indices)
        np.add.at(sums, where, values)
        np.add.at(counts, where, 1)
        self._indices, self._values, self._counts = merged, sums, counts

    def _result(self):
        if self._values is None:
            raise errors.InvalidArgumentError(None, None, f"{self.describe()}: no gradient "
                                              "was accumulated")
        values = self._values.copy()
        if self.reduction_type == "MEAN":
            scale = self._counts.reshape((-1,) + (1,) * (values.ndim - 1))
            values = (values / scale).astype(self.dtype.as_numpy_dtype)
        if self.shape.rank is not None and self.shape.is_fully_defined():
            shape = self.shape.as_list()
        elif self._dense_shape is not None:
            shape = self._dense_shape
        else:
            shape = [-1] + list(values.shape[1:])
        return self._indices.copy(), values, np.asarray(shape, np.int64)


def _run(ready: list) -> None:
    for done, result, error in ready:
        if error is not None:
            done(error=error)
        else:
            done(result)


# -- ops ------------------------------------------------------------------------------------

_ACC_ATTRS = ["dtype: numbertype", "shape: shape", "container: string = ''",
              "shared_name: string = ''", "reduction_type: {'MEAN', 'SUM'} = 'MEAN'"]

ResourceConditionalAccumulator = define_op(
    "ResourceConditionalAccumulator", outputs=["handle: resource"], attrs=_ACC_ATTRS,
    stateful=True, differentiable=False)
SparseConditionalAccumulatorOp = define_op(
    "SparseConditionalAccumulator", outputs=["handle: Ref(string)"], attrs=_ACC_ATTRS,
    stateful=True, differentiable=False)


def _scalar(*args, **_):
    return TensorShape([])


ResourceConditionalAccumulator.shape_fn(_scalar)
SparseConditionalAccumulatorOp.shape_fn(_scalar)


def _accumulator_factory(cls):
    def factory(dtype, shape, container, shared_name, reduction_type, node_name):
        name = shared_name or node_name

        def kernel(ctx):
            return ctx.resource_mgr.lookup_or_create(
                container, name, lambda: cls(name, dtype, shape, reduction_type))

        return kernel

    return factory


ResourceConditionalAccumulator.kernel(ctx=True, factory=True)(
    _accumulator_factory(DenseAccumulator))
SparseConditionalAccumulatorOp.kernel(ctx=True, factory=True)(
    _accumulator_factory(SparseAccumulator))

ResourceAccumulatorApplyGradient = define_op(
    "ResourceAccumulatorApplyGradient",
    inputs=["handle: resource", "local_step: int64", "gradient: dtype"],
    attrs=["dtype: numbertype"], stateful=True, differentiable=False)
ResourceAccumulatorNumAccumulated = define_op(
    "ResourceAccumulatorNumAccumulated", inputs=["handle: resource"],
    outputs=["num_accumulated: int32"], stateful=True, differentiable=False)
ResourceAccumulatorSetGlobalStep = define_op(
    "ResourceAccumulatorSetGlobalStep", inputs=["handle: resource", "new_global_step: int64"],
    stateful=True, differentiable=False)
ResourceAccumulatorTakeGradient = define_op(
    "ResourceAccumulatorTakeGradient", inputs=["handle: resource", "num_required: int32"],
    outputs=["average: dtype"], attrs=["dtype: numbertype"], stateful=True,
    differentiable=False)
AccumulatorNumAccumulated = define_op(
    "AccumulatorNumAccumulated", inputs=["handle: Ref(string)"],
    outputs=["num_accumulated: int32"], stateful=True, differentiable=False)
AccumulatorSetGlobalStep = define_op(
    "AccumulatorSetGlobalStep", inputs=["handle: Ref(string)", "new_global_step: int64"],
    stateful=True, differentiable=False)
SparseAccumulatorApplyGradient = define_op(
    "SparseAccumulatorApplyGradient",
    inputs=["handle: Ref(string)", "local_step: int64", "gradient_indices: int64",
            "gradient_values: dtype", "gradient_shape: int64"],
    attrs=["dtype: numbertype", "has_known_shape: bool"], stateful=True, differentiable=False)
SparseAccumulatorTakeGradient = define_op(
    "SparseAccumulatorTakeGradient", inputs=["handle: Ref(string)", "num_required: int32"],
    outputs=["indices: int64", "values: dtype", "shape: int64"], attrs=["dtype: numbertype"],
    stateful=True, differentiable=False)


def _no_outputs(*args, **_):
    return []


ResourceAccumulatorApplyGradient.shape_fn(_no_outputs)
ResourceAccumulatorSetGlobalStep.shape_fn(_no_outputs)
AccumulatorSetGlobalStep.shape_fn(_no_outputs)
SparseAccumulatorApplyGradient.shape_fn(_no_outputs)
ResourceAccumulatorNumAccumulated.shape_fn(_scalar)
AccumulatorNumAccumulated.shape_fn(_scalar)


@ResourceAccumulatorTakeGradient.shape_fn
def _take_shape(handle, num_required):
    num_required.with_rank(0)
    return TensorShape(None)


@SparseAccumulatorTakeGradient.shape_fn
def _sparse_take_shape(handle, num_required):
    num_required.with_rank(0)
    return [TensorShape([None]), TensorShape(None), TensorShape([None])]


@ResourceAccumulatorApplyGradient.kernel(ctx=True)
def _apply_kernel(ctx, handle, local_step, gradient):
    handle.apply(int(local_step), gradient)


@SparseAccumulatorApplyGradient.kernel(ctx=True)
def _sparse_apply_kernel(ctx, handle, local_step, indices, values, shape, *, has_known_shape):
    handle.apply(int(local_step), indices, values, shape, has_known_shape)


def _num_accumulated_kernel(ctx, handle):
    return np.int32(handle.count)


def _set_global_step_kernel(ctx, handle, step):
    handle.set_global_step(int(step))


ResourceAccumulatorNumAccumulated.kernel(ctx=True)(_num_accumulated_kernel)
AccumulatorNumAccumulated.kernel(ctx=True)(_num_accumulated_kernel)
ResourceAccumulatorSetGlobalStep.kernel(ctx=True)(_set_global_step_kernel)
AccumulatorSetGlobalStep.kernel(ctx=True)(_set_global_step_kernel)


def _take_kernel(ctx, handle, num_required, done):
    handle.take(ctx, int(num_required), done)


ResourceAccumulatorTakeGradient.kernel(asynchronous=True)(_take_kernel)
SparseAccumulatorTakeGradient.kernel(asynchronous=True)(_take_kernel)


# -- Python classes -------------------------------------------------------------------------

def _int64(value):
    return cast_ops.cast(convert_to_tensor(value), dtypes.int64)


class ConditionalAccumulatorBase:
    """Common API of the accumulators: `num_accumulated`, `set_global_step`."""

    def __init__(self, dtype, shape, accumulator_ref):
        self._dtype = dtypes.as_dtype(dtype)
        self._shape = as_shape(shape) if shape is not None else TensorShape(None)
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name

    @property
    def accumulator_ref(self):
        return self._accumulator_ref

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self):
        return self._dtype

    def num_accumulated(self, name=None):
        """The number of gradients accumulated since the last take (int32 scalar)."""
        op = ResourceAccumulatorNumAccumulated if self._is_resource else \
            AccumulatorNumAccumulated
        return op(self._accumulator_ref, name=name)

    def set_global_step(self, new_global_step, name=None):
        """Sets the step that `local_step`s are compared with (staler gradients are dropped)."""
        op = ResourceAccumulatorSetGlobalStep if self._is_resource else AccumulatorSetGlobalStep
        return op(self._accumulator_ref, _int64(new_global_step), name=name)


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Aggregates dense gradients; `take_grad(n)` returns the mean of `n` or more of them.

    Example:
        >>> acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
        >>> apply = acc.apply_grad(grad, local_step=step)
        >>> average = acc.take_grad(num_workers)
    """

    _is_resource = True

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        ref = ResourceConditionalAccumulator(
            dtype=dtype, shape=as_shape(shape) if shape is not None else TensorShape(None),
            shared_name=shared_name or "", reduction_type=reduction_type, name=name)
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad, local_step=0, name=None):
        """Adds `grad` unless `local_step` is older than the accumulator's global step.

        Raises:
            ValueError: `grad`'s shape is incompatible with the accumulator's.
        """
        grad = convert_to_tensor(grad, dtype=self._dtype)
        if not grad.shape.is_compatible_with(self._shape):
            raise ValueError(f"Shapes {grad.shape} and {self._shape} are incompatible "
                             f"(apply_grad to ConditionalAccumulator '{self._name}')")
        return ResourceAccumulatorApplyGradient(self._accumulator_ref, _int64(local_step), grad,
                                                name=name)

    def take_grad(self, num_required, name=None):
        """Waits for `num_required` gradients; returns their mean and resets the sum."""
        out = ResourceAccumulatorTakeGradient(self._accumulator_ref, num_required,
                                              dtype=self._dtype, name=name)
        out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Aggregates sparse (IndexedSlices) gradients row by row.

    Example:
        >>> acc = tf.SparseConditionalAccumulator(tf.float32, shape=[1000, 16])
        >>> apply = acc.apply_indexed_slices_grad(embedding_grad, local_step=step)
        >>> grad = acc.take_indexed_slices_grad(num_workers)
    """

    _is_resource = False

    def __init__(self, dtype, shape=None, shared_name=None,
                 name="sparse_conditional_accumulator", reduction_type="MEAN"):
        ref = SparseConditionalAccumulatorOp(
            dtype=dtype, shape=as_shape(shape) if shape is not None else TensorShape(None),
            shared_name=shared_name or "", reduction_type=reduction_type, name=name)
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        """Adds an IndexedSlices gradient (see `apply_grad`)."""
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step,
                               name=name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """Adds rows `grad_values` at `grad_indices` (of a tensor of `grad_shape`)."""
        values = convert_to_tensor(grad_values, dtype=self._dtype)
        if self._shape.rank is not None and values.shape.rank is not None:
            if not values.shape[1:].is_compatible_with(self._shape[1:]):
                raise ValueError(f"Shapes {values.shape} and {self._shape} are incompatible "
                                 f"(apply_grad to SparseConditionalAccumulator '{self._name}')")
        shape = _int64([] if grad_shape is None else grad_shape)
        return SparseAccumulatorApplyGradient(
            self._accumulator_ref, _int64(local_step), _int64(grad_indices), values, shape,
            has_known_shape=grad_shape is not None, name=name)

    def take_grad(self, num_required, name=None):
        """Waits for `num_required` gradients; returns (indices, values, shape)."""
        return SparseAccumulatorTakeGradient(self._accumulator_ref, num_required,
                                             dtype=self._dtype, name=name)

    def take_indexed_slices_grad(self, num_required, name=None):
        """Like `take_grad`, as an IndexedSlices."""
        out = self.take_grad(num_required, name=name)
        return IndexedSlices(out.values, out.indices, out.shape)
