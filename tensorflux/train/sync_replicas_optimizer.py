"""`tf.train.SyncReplicasOptimizer`: synchronous data-parallel training, with backup workers.

The paper's synchronous replication (section 4.4), built from graph ops as TF1 builds it.
Each worker computes gradients and applies them to one ConditionalAccumulator per variable
(shared by name across the cluster), tagged with the worker's `local_step`; an accumulator
drops gradients older than its global step. The chief's queue runner takes the average of
the first `replicas_to_aggregate` gradients of every accumulator, applies it with the wrapped
optimizer, increments the global step and puts one token per worker into a shared token
queue. A worker's train op ends by dequeuing a token (the new global step) into its
`local_step`, so it cannot run ahead. With `total_num_replicas > replicas_to_aggregate` the
slowest workers are backup workers: their gradients arrive stale and are dropped, and
nobody waits for them.

A dead worker when `replicas_to_aggregate == total_num_replicas` stalls every step, as in TF
1.x: the step waits until the worker (restarted) sends its gradients again, which is how a
cluster recovers. Unlike TF 1.x it does not wait silently: the chief's hook logs a warning
after `STALL_REPORT_SECS` (and again every `STALL_REPORT_SECS`) saying how many of the
`replicas_to_aggregate` gradients arrived for the step.

    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                         replicas_to_aggregate=2, total_num_replicas=3)
    train_op = opt.minimize(loss, global_step=global_step)
    hook = opt.make_session_run_hook(is_chief=(task_index == 0))
    with tf.train.MonitoredTrainingSession(master, is_chief, hooks=[hook]) as sess: ...
"""

from __future__ import annotations

import threading
import time

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.tensor import Tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.data_flow import accumulators as accumulator_ops
from tensorflux.ops.data_flow import queues as data_flow_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state import variables
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import config_pb2
from tensorflux.train.optimizer import Optimizer
from tensorflux.train.queue_runner import QueueRunner
from tensorflux.train.session_manager import _not_ready
from tensorflux.train.session_run_hook import SessionRunHook

__all__ = ["SyncReplicasOptimizer"]

STALL_REPORT_SECS = 10.0  # a chief step waiting this long for gradients is reported


class SyncReplicasOptimizer(Optimizer):
    """Aggregates `replicas_to_aggregate` workers' gradients per step (see module docs).

    Args:
        opt: the optimizer that applies the aggregated gradients.
        replicas_to_aggregate: gradients averaged into each update.
        total_num_replicas: workers (default `replicas_to_aggregate`); more than
            `replicas_to_aggregate` makes the slowest ones backup workers.
        variable_averages, variables_to_average: an ExponentialMovingAverage the chief applies
            after each update.
    """

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        if replicas_to_aggregate < 1 or total_num_replicas < 1:
            raise ValueError(f"replicas_to_aggregate ({replicas_to_aggregate}) and "
                             f"total_num_replicas ({total_num_replicas}) must be positive")
        super().__init__(use_locking, name)
        self._opt = opt
        self._replicas_to_aggregate = int(replicas_to_aggregate)
        self._total_num_replicas = int(total_num_replicas)
        self._tokens_per_step = max(self._total_num_replicas, self._replicas_to_aggregate)
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulators: list = []
        self._local_step = None
        self.local_step_init_op = None
        self.chief_init_op = None
        self.ready_for_local_init_op = None

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's gradients (nothing is aggregated yet)."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The worker's train op: apply to the accumulators, then wait for a token.

        Raises:
            ValueError: no gradients, or no `global_step` (staleness is measured by it).
        """
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        graph = graph_mod.get_default_graph()
        step_dtype = global_step.dtype.base_dtype
        with graph.control_dependencies(None):
            # The local step stays on this worker: colocated with an op placed here, it
            # escapes device functions (replica_device_setter would put it on a ps task,
            # shared by every worker).
            anchor = control_flow_ops.no_op(name="sync_rep_local_anchor")
            with graph.colocate_with(anchor):
                self._local_step = variables.Variable(
                    0, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                    dtype=step_dtype, name="sync_rep_local_step")
        self.local_step_init_op = state_ops.assign(self._local_step, global_step)
        chief_init_ops = [self.local_step_init_op]
        self.ready_for_local_init_op = variables.report_uninitialized_variables(
            variables.global_variables())

        applies, aggregated = [], []
        with graph.name_scope(name or self._name):
            for grad, var in grads_and_vars:
                with graph.device(var.device):
                    if grad is None:
                        aggregated.append((None, var))
                        continue
                    shared = var.name + "/grad_accum"
                    if isinstance(grad, Tensor):
                        accum = accumulator_ops.ConditionalAccumulator(
                            grad.dtype, shape=var.get_shape(), shared_name=shared)
                        applies.append(accum.apply_grad(grad, local_step=self._local_step))
                        taken = accum.take_grad(self._replicas_to_aggregate)
                    else:
                        accum = accumulator_ops.SparseConditionalAccumulator(
                            grad.dtype, shape=var.get_shape(), shared_name=shared)
                        applies.append(accum.apply_indexed_slices_grad(
                            grad, local_step=self._local_step))
                        taken = accum.take_indexed_slices_grad(self._replicas_to_aggregate)
                    aggregated.append((taken, var))
                    self._accumulators.append((accum, var.device))

            with graph.device(global_step.device), graph.name_scope(None):
                update = self._opt.apply_gradients(aggregated, global_step)
                self._sync_token_queue = data_flow_ops.FIFOQueue(
                    -1, step_dtype, shapes=(), name="sync_token_q", shared_name="sync_token_q")
                dummy_queue = data_flow_ops.FIFOQueue(
                    1, dtypes.int32, shapes=(), name="dummy_queue",
                    shared_name="dummy_queue")
                with graph.control_dependencies(applies):
                    token = self._sync_token_queue.dequeue()
                train_op = state_ops.assign(self._local_step, token)
                with graph.control_dependencies([update]):
                    tokens = array_ops.fill([self._tokens_per_step], global_step)
                    sync_op = self._sync_token_queue.enqueue_many((tokens,))
                if self._variable_averages is not None:
                    with graph.control_dependencies([sync_op]):
                        sync_op = self._variable_averages.apply(self._variables_to_average)
                self._chief_queue_runner = QueueRunner(dummy_queue, [sync_op])

            for accum, device in self._accumulators:
                with graph.device(device):
                    chief_init_ops.append(accum.set_global_step(global_step,
                                                                name="SetGlobalStep"))
            self.chief_init_op = control_flow_ops.group(*chief_init_ops)
        self._gradients_applied = True
        return train_op

    def _check_applied(self, what: str) -> None:
        if not self._gradients_applied:
            raise ValueError(f"{what} should be called after apply_gradients().")

    def get_chief_queue_runner(self) -> QueueRunner:
        """The queue runner the chief runs: aggregate, update, hand out tokens."""
        self._check_applied("get_chief_queue_runner()")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens=-1):
        """Op that seeds the token queue so workers can finish the first step(s).

        Raises:
            ValueError: before apply_gradients, or too few tokens for the first step.
        """
        self._check_applied("get_init_tokens_op()")
        needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) "
                             f"vs {needed} (needed)")
        graph = graph_mod.get_default_graph()
        if num_tokens <= 0:
            return control_flow_ops.no_op(name="no_init_tokens")
        with graph.device(self._global_step.device), graph.name_scope(None):
            tokens = array_ops.fill([num_tokens], self._global_step)
            return self._sync_token_queue.enqueue_many((tokens,))

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """A hook for MonitoredTrainingSession: local init, initial tokens, chief runner."""
        return _SyncReplicasHook(self, is_chief, num_tokens)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self) -> list:
        return self._opt.variables()


class _SyncReplicasHook(SessionRunHook):
    """Runs the local init (and, on the chief, the initial tokens and the chief's runner); on
    the chief, reports steps that wait for missing replicas (see the module docstring)."""

    def __init__(self, optimizer, is_chief, num_tokens):
        self._optimizer = optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens
        self._session = None
        self._step_started = None
        self._closed = threading.Event()
        self._watch = None

    def begin(self):
        opt = self._optimizer
        if not opt._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before "
                             "using the hook.")
        self._ready_op = opt.ready_for_local_init_op
        self._arrived_op = None
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
            if opt._accumulators:
                accum, device = opt._accumulators[0]
                with graph_mod.get_default_graph().device(device):
                    self._arrived_op = accum.num_accumulated(name="sync_replicas_arrived")
        else:
            self._local_init_op = opt.local_step_init_op
            self._runner = None
            self._init_tokens_op = None

    def after_create_session(self, session, coord):
        message = _not_ready(session, self._ready_op)
        if message is not None:
            raise RuntimeError("Init operations did not make model ready for "
                               f"SyncReplicasOptimizer local_init. Init op: "
                               f"{self._local_init_op.name}, error: {message}")
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._runner is not None:
            self._runner.create_threads(session, coord=coord, daemon=True, start=True)
        self._session = session
        if self._arrived_op is not None and self._watch is None:
            self._watch = threading.Thread(target=self._report_stalls, daemon=True,
                                           name="sync-replicas-watch")
            self._watch.start()

    def before_run(self, run_context):
        self._step_started = time.monotonic()

    def after_run(self, run_context, run_values):
        self._step_started = None

    def end(self, session):
        self._closed.set()

    def _report_stalls(self) -> None:
        reported = None
        while not self._closed.wait(min(1.0, STALL_REPORT_SECS / 4)):
            started = self._step_started
            if started is None:
                reported = None
                continue
            waited = time.monotonic() - started
            if waited < STALL_REPORT_SECS or (
                    reported is not None and reported[0] == started
                    and waited - reported[1] < STALL_REPORT_SECS):
                continue
            reported = (started, waited)
            opt = self._optimizer
            try:
                arrived = self._session.run(self._arrived_op, options=config_pb2.RunOptions(
                    timeout_in_ms=int(1000 * min(5.0, STALL_REPORT_SECS))))
                arrived = f"{int(arrived)} of {opt._replicas_to_aggregate}"
            except Exception as err:  # noqa: BLE001 - a report, whatever the session says
                arrived = f"? of {opt._replicas_to_aggregate} ({type(err).__name__})"
            logging.warning(
                f"SyncReplicasOptimizer: the chief's step has waited {waited:.0f}s for "
                f"gradients; {arrived} replicas' gradients arrived for this step "
                f"(replicas_to_aggregate={opt._replicas_to_aggregate}, total_num_replicas="
                f"{opt._total_num_replicas}). A worker is down or stalled: the step goes on "
                "when it (or its restarted task) sends gradients again. With "
                "replicas_to_aggregate < total_num_replicas a missing worker is not waited for.")
