"""`GatherTree`: backtracks beam-search parent pointers into full id sequences."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["gather_tree"]

GatherTree = define_op(
    "GatherTree",
    inputs=["step_ids: T", "parent_ids: T", "max_sequence_lengths: int32", "end_token: T"],
    outputs=["beams: T"],
    attrs=["T: {int32, int64}"],
    differentiable=False)


@GatherTree.shape_fn
def _gather_tree_shape(step_ids, parent_ids, max_sequence_lengths, end_token):
    step_ids = TensorShape(step_ids).with_rank(3)
    parent_ids = TensorShape(parent_ids).with_rank(3)
    TensorShape(max_sequence_lengths).with_rank(1)
    TensorShape(end_token).with_rank(0)
    shape = step_ids.merge_with(parent_ids)
    if not TensorShape([shape[1]]).is_compatible_with(TensorShape(max_sequence_lengths)):
        raise ValueError(f"max_sequence_lengths {max_sequence_lengths} does not match the batch "
                         f"dimension of step_ids {step_ids}")
    return shape


@GatherTree.kernel
def _gather_tree_kernel(step_ids, parent_ids, max_sequence_lengths, end_token):
    if step_ids.shape != parent_ids.shape:
        raise errors.InvalidArgumentError(
            None, None, f"step_ids.shape {list(step_ids.shape)} != parent_ids.shape "
                        f"{list(parent_ids.shape)}")
    max_time, batch, beam_width = step_ids.shape
    if max_sequence_lengths.shape != (batch,):
        raise errors.InvalidArgumentError(
            None, None, f"batch size dimensions of step_ids.shape[1] ({batch}) and "
                        f"max_sequence_lengths.shape[0] ({max_sequence_lengths.shape}) differ")
    beams = np.full(step_ids.shape, end_token, dtype=step_ids.dtype)
    for b in range(batch):
        length = min(int(max_sequence_lengths[b]), max_time)
        if length <= 0:
            continue
        for k in range(beam_width):
            beams[length - 1, b, k] = step_ids[length - 1, b, k]
            parent = parent_ids[length - 1, b, k]
            for level in range(length - 2, -1, -1):
                if parent < 0 or parent >= beam_width:
                    raise errors.InvalidArgumentError(
                        None, None, f"Saw invalid parent id in batch: {b}, beam: {k}, parent "
                                    f"id: {parent}")
                beams[level, b, k] = step_ids[level, b, parent]
                parent = parent_ids[level, b, parent]
            # Everything after the first end_token is end_token (a well-formed beam).
            ended = np.cumsum(beams[:length, b, k] == end_token) > 0
            ended = np.concatenate([[False], ended[:-1]])
            beams[:length, b, k][ended] = end_token
    return beams


def gather_tree(step_ids, parent_ids, max_sequence_lengths, end_token, name=None):
    """Full beams from per-step ids and parent beam indices (all [max_time, batch, beam]).

    Beam k's id at the last step of batch entry b (step `max_sequence_lengths[b] - 1`) is
    followed back through `parent_ids`; steps past the length, and steps after an
    `end_token`, hold `end_token`.
    """
    return GatherTree(step_ids, parent_ids, max_sequence_lengths, end_token, name=name)
