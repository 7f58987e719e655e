"""`tf.config.threading`: the process-wide intra-/inter-op thread counts sessions use when their
ConfigProto leaves them at 0."""

from __future__ import annotations

from tensorflux.runtime.process_config import defaults

__all__ = ["get_inter_op_parallelism_threads", "get_intra_op_parallelism_threads",
           "set_inter_op_parallelism_threads", "set_intra_op_parallelism_threads"]


def _count(num_threads, what):
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 0:
        raise ValueError(f"{what} must be a non-negative int (0: decided by the system), "
                         f"got {num_threads!r}")
    return num_threads


def get_intra_op_parallelism_threads():
    """Threads one kernel may use (0: the cores this process may use)."""
    return defaults.intra_op_threads


def set_intra_op_parallelism_threads(num_threads):
    """Sets the intra-op thread count for sessions created afterwards."""
    defaults.update(intra_op_threads=_count(num_threads, "num_threads"))


def get_inter_op_parallelism_threads():
    """Ops that may run at once (0: the cores this process may use)."""
    return defaults.inter_op_threads


def set_inter_op_parallelism_threads(num_threads):
    """Sets the inter-op parallelism for sessions created afterwards."""
    defaults.update(inter_op_threads=_count(num_threads, "num_threads"))
