"""`tf.distribute.Strategy` in graph mode: the strategy and replica contexts, and the default
strategy every graph has.

Code runs in one of two modes (TF's "distribution contexts"):
- **replica context**: code that runs once per replica (the model function inside
  `strategy.experimental_run_v2(fn)`, and all code outside any `strategy.scope()`, which is the
  one replica of the default strategy). `tf.distribute.get_replica_context()` returns it;
  `merge_call` leaves it to run a function once for all replicas.
- **cross-replica context**: code inside `strategy.scope()` that sees every replica's values
  at once (`PerReplica` / `Mirrored` values).

The stack of modes is kept per graph and per thread, as TF keeps it.
"""

from __future__ import annotations

import contextlib
import copy
import enum
import threading

from tensorflux.distribute import values as values_lib
from tensorflux.distribute.reduce_util import ReduceOp
from tensorflux.framework import graph as graph_mod
from tensorflux.framework import nest
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variables as variables_lib

__all__ = ["Strategy", "StrategyExtended", "ReplicaContext", "InputContext",
           "InputReplicationMode", "RunOptions", "get_strategy", "has_strategy",
           "get_replica_context", "get_cross_replica_context", "in_cross_replica_context",
           "experimental_set_strategy", "get_loss_reduction"]


# -- the per-graph, per-thread stack of modes --------------------------------------------------

class _Mode:
    """One entry of the stack: the strategy, and either the cross-replica strategy or the
    replica context in force."""

    __slots__ = ("strategy", "cross_replica", "replica")

    def __init__(self, strategy, cross_replica=None, replica=None):
        self.strategy = strategy
        self.cross_replica = cross_replica
        self.replica = replica


def _stack(graph=None) -> list:
    graph = graph if graph is not None else graph_mod.get_default_graph()
    local = graph.__dict__.get("_distribution_local")
    if local is None:
        with graph._lock:
            local = graph.__dict__.setdefault("_distribution_local", threading.local())
    stack = getattr(local, "stack", None)
    if stack is None:
        stack = local.stack = []
    return stack


def _current_mode() -> _Mode:
    stack = _stack()
    return stack[-1] if stack else _default_mode()


@contextlib.contextmanager
def _entered(mode: _Mode, graph=None):
    stack = _stack(graph)
    stack.append(mode)
    try:
        yield
    finally:
        if not stack or stack[-1] is not mode:
            raise RuntimeError("tf.distribute context exited out of order.")
        stack.pop()


def get_replica_context():
    """The current ReplicaContext, or None in a cross-replica context (inside
    `strategy.scope()` outside any replica function). Outside any strategy this is the
    default strategy's one replica."""
    return _current_mode().replica


def get_cross_replica_context():
    """The strategy whose cross-replica context is in force, else None."""
    return _current_mode().cross_replica


def in_cross_replica_context() -> bool:
    """True inside `strategy.scope()` outside the replica functions."""
    return _current_mode().cross_replica is not None


def get_strategy():
    """The strategy in force (the default strategy outside any scope)."""
    return _current_mode().strategy


def has_strategy() -> bool:
    """True when a non-default strategy is in force."""
    return get_strategy() is not _default_strategy()


_SET_STRATEGY_SCOPES: dict = {}


def experimental_set_strategy(strategy) -> None:
    """Makes `strategy` the one in force in the default graph until set to None (as entering
    `strategy.scope()` for the rest of the program would).

    Raises:
        RuntimeError: called inside a `strategy.scope()` block.
    """
    graph = graph_mod.get_default_graph()
    old = _SET_STRATEGY_SCOPES.pop(graph, None)
    if old is not None:
        old.__exit__(None, None, None)
    if has_strategy():
        raise RuntimeError("Must not be called inside a `tf.distribute.Strategy` scope.")
    if strategy is not None:
        scope = strategy.scope()
        scope.__enter__()
        _SET_STRATEGY_SCOPES[graph] = scope


def get_loss_reduction():
    """How `tf.losses` losses combine across replicas: MEAN unless the loss reduction in
    force is SUM (TF 1.15: v1 losses scale by 1 / replicas before their gradients are summed)."""
    reduction = graph_mod.get_default_graph().__dict__.get("_loss_reduction")
    return ReduceOp.SUM if reduction == "sum" else ReduceOp.MEAN


# -- small public types --------------------------------------------------------------------

class InputReplicationMode(enum.Enum):
    """How `make_input_fn_iterator` calls the input function: once per worker."""

    PER_WORKER = "PER_WORKER"


class InputContext:
    """What an input function needs to shard its data: pipelines, this pipeline's id and the
    replicas in sync."""

    def __init__(self, num_input_pipelines: int = 1, input_pipeline_id: int = 0,
                 num_replicas_in_sync: int = 1):
        self._num_input_pipelines = num_input_pipelines
        self._input_pipeline_id = input_pipeline_id
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def num_replicas_in_sync(self) -> int:
        return self._num_replicas_in_sync

    @property
    def input_pipeline_id(self) -> int:
        return self._input_pipeline_id

    @property
    def num_input_pipelines(self) -> int:
        return self._num_input_pipelines

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """`global_batch_size / num_replicas_in_sync`.

        Raises:
            ValueError: the global batch does not divide evenly among the replicas.
        """
        if global_batch_size % self._num_replicas_in_sync:
            raise ValueError(f"The `global_batch_size` {global_batch_size} is not divisible "
                             f"by `num_replicas_in_sync` {self._num_replicas_in_sync}")
        return global_batch_size // self._num_replicas_in_sync

    def __str__(self) -> str:
        return (f"tf.distribute.InputContext(input pipeline id {self._input_pipeline_id}, "
                f"total: {self._num_input_pipelines})")


class RunOptions:
    """Options of `Strategy.run` (accepted; they only matter on TPUs)."""

    def __init__(self, experimental_enable_dynamic_batch_size=True,
                 experimental_bucketizing_dynamic_shape=False,
                 experimental_xla_options=None):
        self.experimental_enable_dynamic_batch_size = experimental_enable_dynamic_batch_size
        self.experimental_bucketizing_dynamic_shape = experimental_bucketizing_dynamic_shape
        self.experimental_xla_options = experimental_xla_options


# -- Strategy --------------------------------------------------------------------------------

class Strategy:
    """A way to run one model function on several replicas (TF 1.15's `tf.distribute.Strategy`,
    graph mode). Create variables and the model inside `scope()`; run per-replica code with
    `experimental_run_v2`; combine results with `reduce`."""

    def __init__(self, extended):
        self._extended = extended

    @property
    def extended(self):
        return self._extended

    @property
    def num_replicas_in_sync(self) -> int:
        return self._extended._num_replicas_in_sync

    def scope(self):
        """A context manager: this strategy is in force (cross-replica context) and variables
        created inside are distributed by it.

        Raises:
            ValueError: another non-default strategy is already in force.
        """
        return self._extended._scope(self)

    def make_dataset_iterator(self, dataset):
        """An iterator whose `get_next()` gives each replica its own batch of `dataset`."""
        return self._extended._make_dataset_iterator(dataset)

    def make_input_fn_iterator(self, input_fn,
                               replication_mode=InputReplicationMode.PER_WORKER):
        """Calls `input_fn(InputContext)` once per worker; returns an iterator as
        `make_dataset_iterator` does over the dataset it returns."""
        if replication_mode != InputReplicationMode.PER_WORKER:
            raise ValueError(f"Input replication mode not supported: {replication_mode!r}")
        with self.scope():
            return self._extended._make_input_fn_iterator(input_fn)

    def experimental_distribute_dataset(self, dataset):
        """`dataset`'s global batches split among the replicas (each gets batch / replicas
        rows); iterate it with `make_one_shot_iterator()` or `make_initializable_iterator()`."""
        return self._extended._experimental_distribute_dataset(dataset)

    def experimental_make_numpy_dataset(self, numpy_input, session=None):
        """A dataset of the slices of `numpy_input` (arrays kept in the graph as constants)."""
        return self._extended._experimental_make_numpy_dataset(numpy_input, session)

    def experimental_run(self, fn, input_iterator=None):
        """`fn(input_iterator.get_next())` (or `fn()`) on every replica."""
        with self.scope():
            args = (input_iterator.get_next(),) if input_iterator is not None else ()
        return self.experimental_run_v2(fn, args=args)

    def experimental_run_v2(self, fn, args=(), kwargs=None, options=None):
        """Runs `fn(*args, **kwargs)` once per replica, in each replica's context and device;
        `PerReplica` arguments give each replica its own component. Returns the results as
        `PerReplica` (or the plain value with one replica)."""
        with self.scope():
            return self._extended.call_for_each_replica(fn, args=args, kwargs=kwargs)

    run = experimental_run_v2

    def reduce(self, reduce_op, value, axis=None):
        """Combines a per-replica `value` into one tensor (SUM or MEAN over replicas; with
        `axis`, also over that axis of each replica's value, a MEAN counting every element)."""
        reduce_op = _reduce_op(reduce_op)
        if axis is None:
            return self._extended._reduce(reduce_op, value)
        if reduce_op == ReduceOp.SUM:
            summed = self._extended.call_for_each_replica(
                lambda v: math_ops.reduce_sum(v, axis=axis), args=(value,))
            return self._extended._reduce(ReduceOp.SUM, summed)

        def sum_and_count(v):
            count = array_ops.shape(v)[axis]
            return math_ops.reduce_sum(v, axis=axis), math_ops.cast(count, v.dtype)

        parts = self._extended.call_for_each_replica(sum_and_count, args=(value,))
        total, count = (self._extended._reduce(ReduceOp.SUM, p) for p in
                        values_lib.unzip_per_replica(parts, 2))
        return math_ops.truediv(total, count)

    def unwrap(self, value) -> tuple:
        """The components of a distributed value on this worker (a tuple)."""
        return self._extended._local_results(value)

    experimental_local_results = unwrap

    def group(self, value, name=None):
        """One op running every component of `value`."""
        flat = [v for v in nest.flatten(self.unwrap(value)) if v is not None]
        return control_flow_ops.group(*flat, name=name)

    def update_config_proto(self, config_proto):
        """The session config this strategy needs (a copy of `config_proto`)."""
        return self._extended._update_config_proto(copy.deepcopy(config_proto))

    def configure(self, session_config=None, cluster_spec=None, task_type=None, task_id=None):
        """Adapts the strategy to a cluster (only multi-worker strategies use this)."""
        self._extended._configure(session_config, cluster_spec, task_type, task_id)

    def experimental_initialize(self):
        return []

    def experimental_finalize(self):
        return []

    def __deepcopy__(self, memo):
        # A copy (RunConfig.replace deep-copies its strategies) is a strategy of its own
        # whose extended part points back at the copy.
        result = type(self).__new__(type(self))
        memo[id(self)] = result
        for key, value in self.__dict__.items():
            setattr(result, key, copy.deepcopy(value, memo))
        result._extended._container_strategy_ref = result
        return result


def _reduce_op(reduce_op) -> ReduceOp:
    if isinstance(reduce_op, str) and reduce_op.upper() in ("SUM", "MEAN"):
        reduce_op = ReduceOp(reduce_op.upper())
    if not isinstance(reduce_op, ReduceOp):
        raise ValueError(f"reduce_op must be a tf.distribute.ReduceOp; got {reduce_op!r}")
    return reduce_op


class StrategyExtended:
    """The strategy's lower-level API (TF's `strategy.extended`): updates, reductions,
    placement. Subclasses define the `_` hooks."""

    def __init__(self, container_strategy=None):
        self._container_strategy_ref = container_strategy

    def _container_strategy(self):
        return self._container_strategy_ref

    @property
    def _num_replicas_in_sync(self) -> int:
        return len(self.worker_devices)

    # -- scope and variables -------------------------------------------------------------

    @contextlib.contextmanager
    def _scope(self, strategy):
        current = get_strategy()
        if current is strategy:
            if get_replica_context() is not None:
                raise RuntimeError("Method requires being in cross-replica context, use "
                                   "get_replica_context().merge_call()")
            yield strategy  # the same scope again changes nothing
            return
        if current is not _default_strategy():
            raise ValueError("Mixing different tf.distribute.Strategy objects: "
                             f"{current!r} is not {strategy!r}")
        with _entered(_Mode(strategy, cross_replica=strategy)), \
                variables_lib.variable_creator_scope(self._variable_creator):
            yield strategy

    def _variable_creator(self, next_creator, **kwargs):
        kwargs.pop("distribute_strategy", None)
        return self._create_variable(next_creator, **kwargs)

    def _create_variable(self, next_creator, **kwargs):
        return next_creator(**kwargs)

    def variable_created_in_scope(self, v) -> bool:
        """True when `v` was created while this strategy was in force."""
        return getattr(v, "_distribute_strategy", None) is self._container_strategy()

    def colocate_vars_with(self, colocate_with_variable):
        """Variables created in the block are placed with `colocate_with_variable`."""
        return graph_mod.get_default_graph().colocate_with(colocate_with_variable.op)

    def non_slot_devices(self, var_list):
        """Where variables that belong to no one variable (Adam's beta powers) go."""
        return min(var_list, key=lambda v: v.name)

    # -- running, reducing, updating -------------------------------------------------------

    def call_for_each_replica(self, fn, args=(), kwargs=None):
        """Runs `fn` once per replica (see `Strategy.experimental_run_v2`)."""
        return self._call_for_each_replica(fn, tuple(args), dict(kwargs or {}))

    def reduce_to(self, reduce_op, value, destinations):
        """`value` reduced across replicas and mirrored onto `destinations`."""
        return self._reduce_to(_reduce_op(reduce_op), value, destinations)

    def batch_reduce_to(self, reduce_op, value_destination_pairs) -> list:
        """`reduce_to` of each (value, destinations) pair."""
        reduce_op = _reduce_op(reduce_op)
        return [self._reduce_to(reduce_op, v, d) for v, d in value_destination_pairs]

    def _reduce(self, reduce_op, value):
        destination = self.worker_devices[0] if self.worker_devices else ""
        reduced = self._reduce_to(reduce_op, value, destination)
        return self._local_results(reduced)[0]

    def update(self, var, fn, args=(), kwargs=None, group=True):
        """Runs `fn(var_component, *args)` on each device holding `var` (its arguments' matching
        components); returns the updates (grouped into one op with `group`)."""
        return self._update(var, fn, tuple(args), dict(kwargs or {}), group)

    def update_non_slot(self, colocate_with, fn, args=(), kwargs=None, group=True):
        """Runs `fn(*args)` on each device of `colocate_with` (non-slot variables)."""
        return self._update_non_slot(colocate_with, fn, tuple(args), dict(kwargs or {}),
                                     group)

    def read_var(self, v):
        """A tensor of `v`'s value in cross-replica context (the primary's for mirrored)."""
        return array_ops.identity(v)

    def value_container(self, value):
        """The distributed variable a component belongs to (or `value` itself)."""
        return getattr(value, "_distributed_container", value)

    def broadcast_to(self, tensor, destinations):
        return tensor

    @property
    def experimental_require_static_shapes(self) -> bool:
        return False

    @property
    def experimental_between_graph(self) -> bool:
        return False

    @property
    def experimental_should_init(self) -> bool:
        return True

    @property
    def should_checkpoint(self) -> bool:
        return True

    @property
    def should_save_summary(self) -> bool:
        return True

    @property
    def worker_devices(self) -> tuple:
        raise NotImplementedError("StrategyExtended.worker_devices: a subclass defines it")

    @property
    def parameter_devices(self) -> tuple:
        return self.worker_devices

    def _local_results(self, value) -> tuple:
        if isinstance(value, values_lib.DistributedValues):
            return value.values
        return (value,)

    def _update_config_proto(self, config_proto):
        return config_proto

    def _configure(self, session_config, cluster_spec, task_type, task_id) -> None:
        pass

    # -- input ---------------------------------------------------------------------------

    def _make_dataset_iterator(self, dataset):
        from tensorflux.distribute import input_lib  # cycle: input_lib builds on this module

        return input_lib.DatasetIterator(dataset, self, split_batch=False)

    def _make_input_fn_iterator(self, input_fn):
        from tensorflux.distribute import input_lib  # cycle: input_lib builds on this module

        context = InputContext(1, 0, self._num_replicas_in_sync)
        return input_lib.DatasetIterator(input_fn(context), self, split_batch=False)

    def _experimental_distribute_dataset(self, dataset):
        from tensorflux.distribute import input_lib  # cycle: input_lib builds on this module

        return input_lib.DistributedDataset(dataset, self)

    def _experimental_make_numpy_dataset(self, numpy_input, session):
        from tensorflux.distribute import input_lib  # cycle: input_lib builds on this module

        return input_lib.numpy_dataset(numpy_input)


def place_variable(strategy, next_creator, kwargs: dict, device: str):
    """A plain (not mirrored) variable of `strategy`: beside `kwargs["colocate_with"]` when the
    creator was asked to colocate (slots), else on `device`."""
    colocate_with = kwargs.pop("colocate_with", None)
    graph = graph_mod.get_default_graph()
    if colocate_with is not None:
        with graph.colocate_with(colocate_with.op):
            variable = next_creator(**kwargs)
    else:
        with graph.device(device):
            variable = next_creator(**kwargs)
    variable._distribute_strategy = strategy
    return variable


def colocating_creator_scope(colocate_with_variable):
    """A variable-creator scope asking the strategy's creator to place new variables with
    `colocate_with_variable` (`StrategyExtended.colocate_vars_with` of strategies that
    create their variables themselves)."""
    def creator(next_creator, **kwargs):
        kwargs["colocate_with"] = colocate_with_variable
        return next_creator(**kwargs)

    return variables_lib.variable_creator_scope(creator)


# -- ReplicaContext --------------------------------------------------------------------------

class ReplicaContext:
    """The context of one replica: its id, the strategy, and `merge_call` / `all_reduce`."""

    def __init__(self, strategy, replica_id_in_sync_group):
        self._strategy = strategy
        self._replica_id_in_sync_group = replica_id_in_sync_group
        self._mode = _Mode(strategy, replica=self)
        self._entered = []

    def __enter__(self):
        scope = _entered(self._mode)
        scope.__enter__()
        self._entered.append(scope)
        return self

    def __exit__(self, *exc):
        self._entered.pop().__exit__(*exc)
        return False

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """Runs `merge_fn(strategy, *args, **kwargs)` once, in cross-replica context, with the
        arguments of all replicas grouped (`PerReplica`); each replica gets its own part of
        the result."""
        if not callable(merge_fn):
            raise TypeError(f"merge_fn must be callable; got {merge_fn!r}")
        return self._merge_call(merge_fn, tuple(args), dict(kwargs or {}))

    def _merge_call(self, merge_fn, args, kwargs):
        with _entered(_Mode(self._strategy, cross_replica=self._strategy)):
            return merge_fn(self._strategy, *args, **kwargs)

    @property
    def num_replicas_in_sync(self) -> int:
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self):
        return self._replica_id_in_sync_group

    @property
    def strategy(self):
        return self._strategy

    @property
    def devices(self) -> tuple:
        return (self._strategy.extended.worker_devices[self._replica_id_in_sync_group],)

    def all_reduce(self, reduce_op, value):
        """`value` reduced over all replicas (SUM or MEAN), given to every replica."""
        reduce_op = _reduce_op(reduce_op)
        flat = nest.flatten(value)

        def batch_all_reduce(strategy, *per_replica):
            return strategy.extended.batch_reduce_to(
                reduce_op, [(v, _mirror_destinations(v)) for v in per_replica])

        reduced = self.merge_call(batch_all_reduce, args=tuple(flat))
        return nest.pack_sequence_as(value, list(reduced))


def _mirror_destinations(value):
    return value


# -- the default strategy --------------------------------------------------------------------

class _DefaultExtended(StrategyExtended):
    """One replica on the devices the graph chooses: everything is the identity."""

    @property
    def worker_devices(self) -> tuple:
        return ("",)

    @contextlib.contextmanager
    def _scope(self, strategy):
        if has_strategy():
            # Entering the default strategy inside another one changes nothing (as TF).
            yield strategy
            return
        with _entered(_Mode(strategy, cross_replica=strategy)):
            yield strategy

    def _call_for_each_replica(self, fn, args, kwargs):
        with ReplicaContext(self._container_strategy(), 0):
            return fn(*args, **kwargs)

    def _reduce_to(self, reduce_op, value, destinations):
        return value

    def _update(self, var, fn, args, kwargs, group):
        with graph_mod.get_default_graph().colocate_with(var.op):
            result = fn(var, *args, **kwargs)
        return _grouped_or_listed(result, group)

    def _update_non_slot(self, colocate_with, fn, args, kwargs, group):
        with graph_mod.get_default_graph().colocate_with(colocate_with.op):
            result = fn(*args, **kwargs)
        return _grouped_or_listed(result, group)


def _grouped_or_listed(result, group: bool):
    """An update's result as TF gives it: as is when grouped (several ops grouped into
    one), else the results of each device (here one)."""
    if not group:
        return (result,)
    if isinstance(result, (list, tuple)):
        return control_flow_ops.group(*nest.flatten(result))
    return result


class _DefaultStrategy(Strategy):
    def __init__(self):
        super().__init__(_DefaultExtended())
        self._extended._container_strategy_ref = self

    def __repr__(self) -> str:
        return "<tf.distribute default strategy>"


_DEFAULTS: list = []


def _default_strategy():
    if not _DEFAULTS:
        strategy = _DefaultStrategy()
        _DEFAULTS.append(strategy)
        _DEFAULTS.append(_Mode(strategy, replica=ReplicaContext(strategy, 0)))
    return _DEFAULTS[0]


def _default_mode() -> _Mode:
    _default_strategy()
    return _DEFAULTS[1]
