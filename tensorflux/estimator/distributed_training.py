"""Estimator training and evaluation under a distribution strategy (`RunConfig(
train_distribute=..., eval_distribute=...)`, TF 1.15).

The graph is built inside `strategy.scope()`: the input function is called once (with an
`input_context` argument if it takes one) and must return a `tf.data.Dataset` whose batches
are per replica; each replica takes its own batch, the model function runs once per replica,
and the replicas' losses are averaged for reporting while the optimizer sums their gradients.
In evaluation each metric's update op groups every replica's update and its value (built once,
in cross-replica context) covers all replicas' batches.
A strategy doing between-graph replication (ParameterServerStrategy with a cluster) trains as
an Estimator does with TF_CONFIG alone: each worker builds its own graph.
MultiWorkerMirroredStrategy on several workers builds each worker's graph here too: its
variables are mirrored on the worker and its reductions (gradients, the reported loss) are
collective across workers.
"""

from __future__ import annotations

from tensorflux.data import dataset_ops
from tensorflux.distribute import values as values_lib
from tensorflux.distribute.collective_strategy import CollectiveAllReduceExtended
from tensorflux.distribute.reduce_util import ReduceOp
from tensorflux.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorflux.framework import graph as graph_mod
from tensorflux.metrics import util as metrics_util
from tensorflux.ops.random import seed as random_seed
from tensorflux.train import training_util
from tensorflux.train.session_run_hook import SessionRunHook

__all__ = ["train", "build_eval_graph", "strategy_of"]


def strategy_of(config, mode: str):
    """The strategy `config` asks for in `mode` (train or eval), or None."""
    strategy = config.train_distribute if mode == ModeKeys.TRAIN else config.eval_distribute
    if strategy is not None and strategy.extended.experimental_between_graph and \
            not isinstance(strategy.extended, CollectiveAllReduceExtended):
        return None  # between-graph: the plain Estimator path with TF_CONFIG places it all
    return strategy


class _IteratorInitializerHook(SessionRunHook):
    """Runs the distributed iterator's initializers once the session exists."""

    def __init__(self, iterator):
        self._iterator = iterator
        self._ops = []

    def begin(self):
        self._ops = self._iterator.initialize()

    def after_create_session(self, session, coord):
        if self._ops:
            session.run(self._ops)


def _replica_inputs(estimator, strategy, input_fn, mode):
    """(features, labels, hooks): each replica's next batch of the input function's dataset."""

    def dataset_fn(input_context):
        result = estimator._call_input_fn(input_fn, mode, input_context=input_context)
        if not isinstance(result, dataset_ops.Dataset):
            raise ValueError(f"input_fn must return a tf.data.Dataset when a distribution "
                             f"strategy is used ({type(strategy).__name__}); it returned "
                             f"{type(result).__name__}.")
        return result

    iterator = strategy.make_input_fn_iterator(dataset_fn)
    batch = iterator.get_next()
    if isinstance(batch, (list, tuple)) and not isinstance(batch, values_lib.DistributedValues):
        if len(batch) != 2:
            raise ValueError(f"input_fn should return (features, labels) as a len 2 tuple; "
                             f"got a tuple of length {len(batch)}.")
        features, labels = batch
    else:
        features, labels = batch, None
    return features, labels, [_IteratorInitializerHook(iterator)]


def _first(strategy, value):
    return strategy.experimental_local_results(value)[0]


def train(estimator, strategy, input_fn, hooks, listeners):
    """`Estimator.train`'s graph and loop under `strategy`; returns the last loss."""
    graph = graph_mod.Graph()
    with graph.as_default(), strategy.scope():
        random_seed.set_random_seed(estimator.config.tf_random_seed)
        global_step = training_util.get_or_create_global_step(graph)
        features, labels, input_hooks = _replica_inputs(estimator, strategy, input_fn,
                                                        ModeKeys.TRAIN)
        grouped = strategy.extended.call_for_each_replica(
            estimator._call_model_fn, args=(features, labels, ModeKeys.TRAIN,
                                            estimator.config))
        loss = strategy.reduce(ReduceOp.MEAN, grouped.loss)
        spec = EstimatorSpec(
            mode=ModeKeys.TRAIN, loss=loss, train_op=strategy.group(grouped.train_op),
            training_hooks=_first(strategy, grouped.training_hooks),
            training_chief_hooks=_first(strategy, grouped.training_chief_hooks),
            scaffold=_first(strategy, grouped.scaffold))
        return estimator._train_with_spec(spec, global_step, input_hooks + hooks, listeners)


def build_eval_graph(estimator, strategy, input_fn):
    """(spec, input hooks) of an evaluation under `strategy`, built in the default graph.

    The model function runs once per replica; the spec's loss is the mean of the replicas'
    losses and each metric is (its value, one op grouping every replica's update). Metric
    values are built once in cross-replica context (see `tensorflux.metrics.util`), so they
    cover all replicas' batches: the same as one device evaluating all of them.
    """
    with strategy.scope():
        random_seed.set_random_seed(estimator.config.tf_random_seed)
        training_util.get_or_create_global_step()
        features, labels, input_hooks = _replica_inputs(estimator, strategy, input_fn,
                                                        ModeKeys.EVAL)
        grouped = strategy.extended.call_for_each_replica(
            estimator._call_model_fn, args=(features, labels, ModeKeys.EVAL, estimator.config))
        if strategy.num_replicas_in_sync == 1:
            return grouped, input_hooks
        loss = strategy.reduce(ReduceOp.MEAN, grouped.loss)
        metric_ops = {}
        for key, (value, update) in sorted((grouped.eval_metric_ops or {}).items()):
            if isinstance(value, values_lib.DistributedValues) and \
                    metrics_util.computed_from_across_replica_values(value.values[0]):
                value = value.values[0]  # each replica's copy of one function of the sums
            if isinstance(value, values_lib.DistributedValues):
                raise ValueError(
                    f"eval_metric_ops[{key!r}]: the metric value differs per replica under "
                    f"{type(strategy).__name__} with {strategy.num_replicas_in_sync} replicas; "
                    f"a metric's value must be built once across replicas (as tf.metrics do, "
                    f"in replica_context.merge_call) to cover every replica's batches.")
            metric_ops[key] = (value, strategy.group(update))
        first = values_lib.select_replica(0, (grouped.predictions, grouped.evaluation_hooks,
                                              grouped.scaffold))
        spec = EstimatorSpec(mode=ModeKeys.EVAL, loss=loss, eval_metric_ops=metric_ops,
                             predictions=first[0], evaluation_hooks=first[1],
                             scaffold=first[2])
    return spec, input_hooks
