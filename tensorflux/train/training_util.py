"""The global step: an int64 scalar variable named "global_step" counting training steps."""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.tensor import Tensor
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state import variable_scope, variables
from tensorflux.ops.state.variables import Variable
from tensorflux.platform import tf_logging as logging

__all__ = ["global_step", "get_global_step", "create_global_step", "get_or_create_global_step",
           "assert_global_step"]

GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


def global_step(sess, global_step_tensor) -> int:
    """The value of `global_step_tensor` in `sess`, as a Python int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor) -> None:
    """Checks that `global_step_tensor` is an integer scalar Variable or Tensor.

    Raises:
        TypeError: it is not a Variable/Tensor, not an integer, or not a scalar.
    """

    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError(f'Existing "global_step" must be a Variable or Tensor: '
                        f"{global_step_tensor}.")
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError(f'Existing "global_step" does not have integer type: '
                        f"{global_step_tensor.dtype}")
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


def get_global_step(graph=None):
    """The global step of `graph` (GLOBAL_STEP collection, else the tensor 'global_step:0').

    Returns None when there is none (or when the collection holds several, logged).
    """
    graph = graph or graph_mod.get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) == 1:
        step = found[0]
    elif not found:
        try:
            step = graph.get_tensor_by_name("global_step:0")
        except KeyError:
            return None
    else:
        logging.error("Multiple tensors in global_step collection.")
        return None
    assert_global_step(step)
    return step


def create_global_step(graph=None):
    """Creates the global step variable (int64 scalar, zero, not trainable) in `graph`.

    Raises:
        ValueError: the graph already has a global step.

    Example:
        >>> step = tf.train.create_global_step()
        >>> step.op.name
        'global_step'
    """

    graph = graph or graph_mod.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph.name_scope(None):
        return variable_scope.get_variable(
            GraphKeys.GLOBAL_STEP, shape=[], dtype=dtypes.int64,
            initializer=init_ops.zeros_initializer(), trainable=False,
            aggregation=variables.VariableAggregation.ONLY_FIRST_REPLICA,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    """The global step of `graph`, created first if there is none."""
    graph = graph or graph_mod.get_default_graph()
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step


def _get_global_step_read(graph=None):
    graph = graph or graph_mod.get_default_graph()
    found = graph.get_collection(GLOBAL_STEP_READ_KEY)
    if len(found) > 1:
        raise RuntimeError(f"There are multiple items in collection {GLOBAL_STEP_READ_KEY}. "
                           "There should be only one.")
    return found[0] if found else None


def _get_or_create_global_step_read(graph=None):
    """A tensor reading the global step once it is initialized (cached per graph)."""

    graph = graph or graph_mod.get_default_graph()
    read = _get_global_step_read(graph)
    if read is not None:
        return read
    step = get_global_step(graph)
    if step is None:
        return None
    with graph.as_default(), graph.name_scope(None), graph.name_scope(step.op.name + "/"):
        value = step.initialized_value() if isinstance(step, Variable) else step
        read = value + 0
        graph.add_to_collection(GLOBAL_STEP_READ_KEY, read)
    return _get_global_step_read(graph)


def _increment_global_step(increment, graph=None):
    """An op adding `increment` to the global step, after the cached read of it."""

    graph = graph or graph_mod.get_default_graph()
    step = get_global_step(graph)
    if step is None:
        raise ValueError("Global step tensor should be created by "
                         "tf.train.get_or_create_global_step before calling increment.")
    read = _get_or_create_global_step_read(graph)
    with graph.as_default(), graph.name_scope(None), graph.name_scope(step.op.name + "/"):
        with graph.control_dependencies([read]):
            return state_ops.assign_add(step, increment)
