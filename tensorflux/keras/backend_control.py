"""`tf.keras.backend` control flow (TF 1.15): `rnn` (a step function over the time axis, with
masking), `map_fn`, `foldl` and `foldr`."""

from __future__ import annotations

from tensorflux.framework import dtypes, nest, tensor_conversion
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import functional
from tensorflux.ops.control_flow import while_loop as while_loop_ops
from tensorflux.ops.data_flow import tensor_array_class

__all__ = ["rnn", "map_fn", "foldl", "foldr"]


def map_fn(fn, elems, name=None, dtype=None):
    """`fn` applied to each element of `elems` along its first axis."""
    return functional.map_fn(fn, elems, name=name, dtype=dtype)


def foldl(fn, elems, initializer=None, name=None):
    """Reduces `elems` along its first axis from the left with `fn(accumulator, element)`."""
    return functional.foldl(fn, elems, initializer=initializer, name=name)


def foldr(fn, elems, initializer=None, name=None):
    """Reduces `elems` along its first axis from the right with `fn(accumulator, element)`."""
    return functional.foldr(fn, elems, initializer=initializer, name=name)


def _time_major(tensor):
    rank = tensor.get_shape().ndims
    return array_ops.transpose(tensor, [1, 0] + list(range(2, rank)))


def _masked(mask_t, new, old):
    """`new` where this step's mask is set, else `old` (the mask broadcast over features)."""
    mask = mask_t
    for _ in range(new.get_shape().ndims - mask.get_shape().ndims):
        mask = array_ops.expand_dims(mask, -1)
    mask = math_ops.logical_and(array_ops.ones_like(new, dtype=dtypes.bool_), mask)
    return array_ops.where(mask, new, old)


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None, constants=None,
        unroll=False, input_length=None, time_major=False, zero_output_for_mask=False):
    """Iterates `step_function(input_t, states + constants) -> (output_t, new_states)` over
    the time axis of `inputs`.

    Args:
        inputs: (batch, time, ...) (or (time, batch, ...) with `time_major`).
        initial_states: the states at the first step (a list of tensors).
        go_backwards: iterate from the last step to the first (outputs in that order).
        mask: (batch, time) booleans; where unset, the step keeps the previous states and
            repeats the previous output (zeros with `zero_output_for_mask`).
        constants: extra tensors passed to every step after the states.
        unroll: build one copy of the step per time step (needs a known length).

    Returns:
        (last output, all outputs (batch, time, ...), last states).

    Raises:
        ValueError: inputs of rank < 3, or `unroll` with an unknown number of steps.
    """
    inputs = tensor_conversion.convert_to_tensor(inputs)
    if inputs.get_shape().ndims is None or inputs.get_shape().ndims < 3:
        raise ValueError("Input should be at least 3D.")
    states = list(initial_states)
    constants = list(constants or [])
    steps_first = inputs if time_major else _time_major(inputs)
    if mask is not None:
        mask = math_ops.cast(mask, dtypes.bool_)
        mask = mask if time_major else array_ops.transpose(mask, [1, 0])
    if go_backwards:
        steps_first = array_ops.reverse(steps_first, [0])
        if mask is not None:
            mask = array_ops.reverse(mask, [0])
    if unroll:
        outputs, last_output, states = _unrolled(step_function, steps_first, states,
                                                 constants, mask, zero_output_for_mask)
    else:
        outputs, last_output, states = _looped(step_function, steps_first, states, constants,
                                               mask, zero_output_for_mask)
    if not time_major:
        outputs = _time_major(outputs)
    return last_output, outputs, states


def _unrolled(step_function, steps_first, states, constants, mask, zero_output):
    count = steps_first.get_shape()[0].value
    if count is None:
        raise ValueError("Unrolling requires a fixed number of timesteps.")
    step_inputs = array_ops.unstack(steps_first)
    step_masks = array_ops.unstack(mask) if mask is not None else [None] * count
    outputs = []
    previous = None
    for input_t, mask_t in zip(step_inputs, step_masks):
        output, new_states = step_function(input_t, states + constants)
        new_states = list(nest.flatten(new_states))
        if mask_t is not None:
            fallback = array_ops.zeros_like(output) if zero_output or previous is None \
                else previous
            output = _masked(mask_t, output, fallback)
            new_states = [_masked(mask_t, n, o) for n, o in zip(new_states, states)]
        outputs.append(output)
        previous = output
        states = new_states
    return array_ops.stack(outputs), outputs[-1], states


def _looped(step_function, steps_first, states, constants, mask, zero_output):
    count = array_ops.shape(steps_first)[0]
    first_output, _ = step_function(steps_first[0], states + constants)
    inputs_ta = tensor_array_class.TensorArray(steps_first.dtype, size=count).unstack(
        steps_first)
    outputs_ta = tensor_array_class.TensorArray(first_output.dtype, size=count)
    masks_ta = None
    if mask is not None:
        masks_ta = tensor_array_class.TensorArray(dtypes.bool_, size=count).unstack(mask)
    zeros = array_ops.zeros_like(first_output)

    def body(time, outputs, previous, *carried):
        input_t = inputs_ta.read(time)
        output, new_states = step_function(input_t, list(carried) + constants)
        new_states = list(nest.flatten(new_states))
        if masks_ta is not None:
            mask_t = masks_ta.read(time)
            output = _masked(mask_t, output, zeros if zero_output else previous)
            new_states = [_masked(mask_t, n, o) for n, o in zip(new_states, carried)]
        for new, old in zip(new_states, carried):
            new.set_shape(old.get_shape())
        return (time + 1, outputs.write(time, output), output) + tuple(new_states)

    result = while_loop_ops.while_loop(
        lambda time, *_: time < count, body,
        (array_ops.constant(0), outputs_ta, zeros) + tuple(states),
        swap_memory=True)
    outputs = result[1].stack()
    return outputs, result[2], list(result[3:])
