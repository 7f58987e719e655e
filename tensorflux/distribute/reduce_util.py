"""`tf.distribute.ReduceOp`: how values from several replicas combine into one."""

from __future__ import annotations

import enum

from tensorflux.ops.state.variables import VariableAggregation

__all__ = ["ReduceOp"]


class ReduceOp(enum.Enum):
    """SUM adds the replicas' values; MEAN adds them and divides by the replica count."""

    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation) -> ReduceOp:
        """The ReduceOp of a `tf.VariableAggregation` (SUM or MEAN).

        Raises:
            ValueError: an aggregation with no reduction (NONE, ONLY_FIRST_REPLICA).
        """
        found = {VariableAggregation.SUM: ReduceOp.SUM,
                 VariableAggregation.MEAN: ReduceOp.MEAN}.get(aggregation)
        if found is None:
            raise ValueError(f"Could not convert from `tf.VariableAggregation` {aggregation} "
                             f"to `tf.distribute.ReduceOp` type")
        return found
