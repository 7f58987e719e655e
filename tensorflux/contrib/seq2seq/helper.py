"""Decoding helpers: how a decoder samples ids and feeds its next inputs.

`initialize() -> (finished, next_inputs)`; `sample(time, outputs, state) -> sample_ids`;
`next_inputs(time, outputs, state, sample_ids) -> (finished, next_inputs, state)`. Once every
batch entry has finished, helpers feed placeholder inputs (zeros or the start embedding)
instead of reading past the data.
"""

from __future__ import annotations

import abc

from tensorflux.framework import dtypes, nest, scopes
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.data_flow import tensor_array_class as tensor_array_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.ops.random import stateful as random_ops

__all__ = ["Helper", "CustomHelper", "TrainingHelper", "GreedyEmbeddingHelper",
           "SampleEmbeddingHelper", "InferenceHelper", "ScheduledEmbeddingTrainingHelper",
           "ScheduledOutputTrainingHelper"]


def transpose_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...] (static shape kept)."""
    x = convert_to_tensor(x)
    rank = x.get_shape().ndims
    if rank is None:
        raise ValueError(f"Expected a tensor of known rank, got {x.name}")
    if rank < 2:
        return x
    result = shape_ops.transpose(x, [1, 0] + list(range(2, rank)))
    dims = x.get_shape().as_list()
    result.set_shape([dims[1], dims[0]] + dims[2:])
    return result


def _unstack_ta(inp):
    return tensor_array_ops.TensorArray(
        dtype=inp.dtype, size=shape_ops.shape(inp)[0],
        element_shape=inp.get_shape()[1:]).unstack(inp)


def _embedding_fn(embedding):
    if callable(embedding):
        return embedding
    return lambda ids: nn_impl.embedding_lookup(embedding, ids)  # variables: sparse grads


class Helper(abc.ABC):
    """The helper interface a `BasicDecoder` drives."""

    @property
    @abc.abstractmethod
    def batch_size(self):
        ...

    @property
    @abc.abstractmethod
    def sample_ids_shape(self):
        ...

    @property
    @abc.abstractmethod
    def sample_ids_dtype(self):
        ...

    @abc.abstractmethod
    def initialize(self, name=None):
        ...

    @abc.abstractmethod
    def sample(self, time, outputs, state, name=None):
        ...

    @abc.abstractmethod
    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        ...


class CustomHelper(Helper):
    """A helper from three functions: initialize_fn(), sample_fn(time, outputs, state) and
    next_inputs_fn(time, outputs, state, sample_ids)."""

    def __init__(self, initialize_fn, sample_fn, next_inputs_fn, sample_ids_shape=None,
                 sample_ids_dtype=None):
        self._initialize_fn = initialize_fn
        self._sample_fn = sample_fn
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = None
        self._sample_ids_shape = TensorShape(sample_ids_shape or [])
        self._sample_ids_dtype = sample_ids_dtype or dtypes.int32

    @property
    def batch_size(self):
        if self._batch_size is None:
            raise ValueError("batch_size accessed before initialize was called")
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return self._sample_ids_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_ids_dtype

    def initialize(self, name=None):
        with scopes.name_scope(name, f"{type(self).__name__}Initialize"):
            finished, next_inputs = self._initialize_fn()
            if self._batch_size is None:
                self._batch_size = shape_ops.size(finished)
            return finished, next_inputs

    def sample(self, time, outputs, state, name=None):
        with scopes.name_scope(name, f"{type(self).__name__}Sample"):
            return self._sample_fn(time=time, outputs=outputs, state=state)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with scopes.name_scope(name, f"{type(self).__name__}NextInputs"):
            return self._next_inputs_fn(time=time, outputs=outputs, state=state,
                                        sample_ids=sample_ids)


class TrainingHelper(Helper):
    """Teacher forcing: reads the next input from `inputs` ([batch, time, ...], or
    [time, batch, ...] with `time_major`); an entry is finished at its `sequence_length`."""

    def __init__(self, inputs, sequence_length, time_major=False, name=None):
        with scopes.name_scope(name, "TrainingHelper", [inputs, sequence_length]):
            inputs = nest.map_structure(convert_to_tensor, inputs)
            if not time_major:
                inputs = nest.map_structure(transpose_batch_time, inputs)
            self._input_tas = nest.map_structure(_unstack_ta, inputs)
            self._sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
            if self._sequence_length.dtype.base_dtype != dtypes.int32:
                self._sequence_length = cast_ops.cast(self._sequence_length, dtypes.int32)
            if self._sequence_length.get_shape().ndims != 1:
                raise ValueError(f"Expected sequence_length to be a vector, but received "
                                 f"shape: {self._sequence_length.get_shape()}")
            self._zero_inputs = nest.map_structure(
                lambda inp: array_ops.zeros_like(inp[0, :]), inputs)
            self._batch_size = shape_ops.size(self._sequence_length)

    @property
    def inputs(self):
        return self._input_tas

    @property
    def sequence_length(self):
        return self._sequence_length

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return TensorShape([])

    @property
    def sample_ids_dtype(self):
        return dtypes.int32

    def _read(self, time, finished):
        all_finished = reduction_ops.reduce_all(finished)
        return control_flow_ops.cond(
            all_finished, lambda: self._zero_inputs,
            lambda: nest.map_structure(lambda ta: ta.read(time), self._input_tas))

    def initialize(self, name=None):
        with scopes.name_scope(name, "TrainingHelperInitialize"):
            finished = comparison_ops.equal(0, self._sequence_length)
            return finished, self._read(0, finished)

    def sample(self, time, outputs, state, name=None):
        with scopes.name_scope(name, "TrainingHelperSample", [time, outputs]):
            return cast_ops.cast(reduction_ops.argmax(outputs, axis=-1), dtypes.int32)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with scopes.name_scope(name, "TrainingHelperNextInputs", [time, outputs, state]):
            next_time = time + 1
            finished = comparison_ops.greater_equal(next_time, self._sequence_length)
            return finished, self._read(next_time, finished), state


class GreedyEmbeddingHelper(Helper):
    """Feeds the embedding of the argmax of each step's outputs; an entry is finished when it
    emits `end_token`."""

    def __init__(self, embedding, start_tokens, end_token):
        self._embedding_fn = _embedding_fn(embedding)
        self._start_tokens = convert_to_tensor(start_tokens, dtype=dtypes.int32,
                                               name="start_tokens")
        self._end_token = convert_to_tensor(end_token, dtype=dtypes.int32, name="end_token")
        if self._start_tokens.get_shape().ndims != 1:
            raise ValueError("start_tokens must be a vector")
        if self._end_token.get_shape().ndims != 0:
            raise ValueError("end_token must be a scalar")
        self._batch_size = shape_ops.size(self._start_tokens)
        self._start_inputs = self._embedding_fn(self._start_tokens)

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return TensorShape([])

    @property
    def sample_ids_dtype(self):
        return dtypes.int32

    def initialize(self, name=None):
        finished = pad_ops.tile([False], [self._batch_size])
        return finished, self._start_inputs

    def sample(self, time, outputs, state, name=None):
        if not isinstance(outputs, Tensor):
            raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")
        return cast_ops.cast(reduction_ops.argmax(outputs, axis=-1), dtypes.int32)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        finished = comparison_ops.equal(sample_ids, self._end_token)
        all_finished = reduction_ops.reduce_all(finished)
        next_inputs = control_flow_ops.cond(all_finished, lambda: self._start_inputs,
                                            lambda: self._embedding_fn(sample_ids))
        return finished, next_inputs, state


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """Like GreedyEmbeddingHelper, but samples ids from softmax(outputs / temperature)."""

    def __init__(self, embedding, start_tokens, end_token, softmax_temperature=None,
                 seed=None):
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature = softmax_temperature
        self._seed = seed

    def sample(self, time, outputs, state, name=None):
        if not isinstance(outputs, Tensor):
            raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")
        logits = outputs if self._softmax_temperature is None \
            else outputs / self._softmax_temperature
        ids = random_ops.multinomial(logits, 1, seed=self._seed, output_dtype=dtypes.int32)
        return shape_ops.reshape(ids, [-1])


class InferenceHelper(Helper):
    """Feeds `next_inputs_fn(sample_ids)` where ids are `sample_fn(outputs)`; finishes when
    `end_fn(sample_ids)` is true."""

    def __init__(self, sample_fn, sample_shape, sample_dtype, start_inputs, end_fn,
                 next_inputs_fn=None):
        self._sample_fn = sample_fn
        self._end_fn = end_fn
        self._sample_shape = TensorShape(sample_shape)
        self._sample_dtype = sample_dtype
        self._next_inputs_fn = next_inputs_fn
        self._start_inputs = convert_to_tensor(start_inputs, name="start_inputs")
        self._batch_size = shape_ops.shape(self._start_inputs)[0]

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return self._sample_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_dtype

    def initialize(self, name=None):
        return pad_ops.tile([False], [self._batch_size]), self._start_inputs

    def sample(self, time, outputs, state, name=None):
        return self._sample_fn(outputs)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        next_inputs = sample_ids if self._next_inputs_fn is None \
            else self._next_inputs_fn(sample_ids)
        return self._end_fn(sample_ids), next_inputs, state


class ScheduledEmbeddingTrainingHelper(TrainingHelper):
    """Scheduled sampling (Bengio et al. 2015): each entry's next input is, with probability
    `sampling_probability`, the embedding of an id sampled from the outputs, else the
    ground-truth input. `sample` returns -1 where it did not sample."""

    def __init__(self, inputs, sequence_length, embedding, sampling_probability,
                 time_major=False, seed=None, scheduling_seed=None, name=None):
        with scopes.name_scope(name, "ScheduledEmbeddingSamplingWrapper",
                               [sampling_probability]):
            self._embedding_fn = _embedding_fn(embedding)
            self._sampling_probability = convert_to_tensor(sampling_probability,
                                                           name="sampling_probability")
            if self._sampling_probability.get_shape().ndims not in (0, 1):
                raise ValueError(f"sampling_probability must be either a scalar or a vector. "
                                 f"saw shape: {self._sampling_probability.get_shape()}")
            self._seed = seed
            self._scheduling_seed = scheduling_seed
            super().__init__(inputs, sequence_length, time_major=time_major, name=name)

    def sample(self, time, outputs, state, name=None):
        with scopes.name_scope(name, "ScheduledEmbeddingTrainingHelperSample",
                               [time, outputs, state]):
            probability = cast_ops.cast(self._sampling_probability, dtypes.float32)
            draw = random_ops.random_uniform(shape_ops.expand_dims(self.batch_size, 0),
                                             seed=self._scheduling_seed)
            select = comparison_ops.less(draw, probability)
            ids = shape_ops.reshape(random_ops.multinomial(outputs, 1, seed=self._seed,
                                                           output_dtype=dtypes.int32), [-1])
            return select_ops.where(select, ids, array_ops.fill(
                shape_ops.expand_dims(self.batch_size, 0), -1))

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with scopes.name_scope(name, "ScheduledEmbeddingTrainingHelperNextInputs",
                               [time, outputs, state, sample_ids]):
            finished, base_inputs, state = super().next_inputs(time, outputs, state,
                                                               sample_ids)
            sampled = comparison_ops.greater(sample_ids, -1)

            def maybe_sample():
                embedded = self._embedding_fn(math_ops.maximum(sample_ids, 0))
                return select_ops.where(sampled, embedded, base_inputs)

            next_inputs = control_flow_ops.cond(reduction_ops.reduce_all(finished),
                                                lambda: base_inputs, maybe_sample)
            return finished, next_inputs, state


class ScheduledOutputTrainingHelper(TrainingHelper):
    """Scheduled sampling on outputs: with probability `sampling_probability` an entry's next
    input is its own output (through `next_inputs_fn` when given, then concatenated with
    `auxiliary_inputs` of the next step), else the ground-truth input (inputs and auxiliary
    inputs concatenated). `sample` returns the 0/1 decisions."""

    def __init__(self, inputs, sequence_length, sampling_probability, time_major=False,
                 seed=None, next_inputs_fn=None, auxiliary_inputs=None, name=None):
        with scopes.name_scope(name, "ScheduledOutputTrainingHelper", [sampling_probability]):
            self._sampling_probability = convert_to_tensor(sampling_probability,
                                                           name="sampling_probability")
            if self._sampling_probability.get_shape().ndims not in (0, 1):
                raise ValueError(f"sampling_probability must be either a scalar or a vector. "
                                 f"saw shape: {self._sampling_probability.get_shape()}")
            if auxiliary_inputs is None:
                full_inputs = inputs
                self._auxiliary_tas = None
            else:
                inputs = nest.map_structure(convert_to_tensor, inputs)
                auxiliary_inputs = nest.map_structure(convert_to_tensor, auxiliary_inputs)
                full_inputs = nest.map_structure(lambda x, y: concat_ops.concat([x, y], -1),
                                                 inputs, auxiliary_inputs)
                if not time_major:
                    auxiliary_inputs = nest.map_structure(transpose_batch_time,
                                                          auxiliary_inputs)
                self._auxiliary_tas = nest.map_structure(_unstack_ta, auxiliary_inputs)
            self._seed = seed
            self._next_inputs_fn = next_inputs_fn
            super().__init__(full_inputs, sequence_length, time_major=time_major, name=name)

    def sample(self, time, outputs, state, name=None):
        with scopes.name_scope(name, "ScheduledOutputTrainingHelperSample",
                               [time, outputs, state]):
            draw = random_ops.random_uniform(shape_ops.expand_dims(self.batch_size, 0),
                                             seed=self._seed)
            probability = cast_ops.cast(self._sampling_probability, dtypes.float32)
            return cast_ops.cast(comparison_ops.less(draw, probability), dtypes.int32)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with scopes.name_scope(name, "ScheduledOutputTrainingHelperNextInputs",
                               [time, outputs, state, sample_ids]):
            finished, base_inputs, state = super().next_inputs(time, outputs, state,
                                                               sample_ids)
            sampled = cast_ops.cast(sample_ids, dtypes.bool_)

            def maybe_sample():
                fed = outputs if self._next_inputs_fn is None \
                    else self._next_inputs_fn(outputs)
                if self._auxiliary_tas is not None:
                    auxiliary = nest.map_structure(lambda ta: ta.read(time + 1),
                                                   self._auxiliary_tas)
                    fed = nest.map_structure(lambda x, y: concat_ops.concat([x, y], -1), fed,
                                             auxiliary)
                return nest.map_structure(lambda f, b: select_ops.where(sampled, f, b), fed,
                                          base_inputs)

            skip = comparison_ops.logical_or(
                reduction_ops.reduce_all(finished),
                comparison_ops.logical_not(reduction_ops.reduce_any(sampled)))
            next_inputs = control_flow_ops.cond(skip, lambda: base_inputs, maybe_sample)
            return finished, next_inputs, state
