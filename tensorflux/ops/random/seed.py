"""Graph-level and op-level random seeds, with TensorFlow 1.x's rules.

A random op carries two seed attrs, `seed` and `seed2`. `get_seed(op_seed)` derives them:

- graph seed set, op seed None: the op seed is a per-graph counter (0, 1, 2, ... in creation
  order), so a program that sets only the graph seed is repeatable and its ops differ;
- graph seed set, op seed given: (graph seed, op seed);
- graph seed None, op seed given: (DEFAULT_GRAPH_SEED, op seed);
- both None: (None, None); the op gets seed = seed2 = 0, which kernels read as "fresh entropy".

A derived (0, 0) is replaced by (0, 2**31 - 1) so it never reads as "nondeterministic".
"""

from __future__ import annotations

import threading
import weakref

from tensorflux.framework import graph as graph_mod

__all__ = ["set_random_seed", "get_seed"]

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1

_op_seed_counters: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_counter_lock = threading.Lock()


def _truncate_seed(seed: int) -> int:
    return int(seed) % _MAXINT32


def _next_op_seed(graph) -> int:
    with _counter_lock:
        value = _op_seed_counters.get(graph, 0)
        _op_seed_counters[graph] = value + 1
    return value


def get_seed(op_seed):
    """Returns the `(seed, seed2)` a random op should use, given its op-level seed.

    Args:
        op_seed: the op-level seed (int) or None.

    Returns:
        A pair of ints, or `(None, None)` when neither a graph nor an op seed is set.

    Example:
        >>> tf.set_random_seed(1)
        >>> tf.get_seed(7)
        (1, 7)
    """
    graph = graph_mod.get_default_graph()
    global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = _next_op_seed(graph)
        seeds = (_truncate_seed(global_seed), _truncate_seed(op_seed))
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, _truncate_seed(op_seed))
    else:
        seeds = (None, None)
    if seeds == (0, 0):
        return (0, _MAXINT32)
    return seeds


def set_random_seed(seed) -> None:
    """Sets the graph-level random seed of the default graph.

    Random ops created afterwards derive their seeds from it (see `get_seed`); each new Session
    then restarts every random op's sequence from the same point.

    Args:
        seed: an int, or None to clear the graph seed.
    """
    graph_mod.get_default_graph().seed = seed
