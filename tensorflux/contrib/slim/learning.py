"""`slim.learning`: create_train_op and the `train` loop (TF 1.15 semantics, on Supervisor).

`train` runs `train_op` until `number_of_steps` global steps are done (or forever), logging
the loss every `log_every_n_steps`, and lets a Supervisor initialize or restore from `logdir`,
save checkpoints every `save_interval_secs` and summaries every `save_summaries_secs`. A final
checkpoint is written at the end when `logdir` is set.
"""

from __future__ import annotations

import time

from tensorflux.contrib.training.training import (
    add_gradients_summaries,
    clip_gradient_norms,
    clip_gradient_norms_fn,
    multiply_gradients,
)
from tensorflux.contrib.training.training import create_train_op as _create_train_op
from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.platform import tf_logging as logging
from tensorflux.train import training_util
from tensorflux.train.optimizer import Optimizer
from tensorflux.train.supervisor import Supervisor

__all__ = ["create_train_op", "train", "train_step", "add_gradients_summaries",
           "clip_gradient_norms", "clip_gradient_norms_fn", "multiply_gradients"]

_USE_DEFAULT = 0
_USE_GLOBAL_STEP = 0


def create_train_op(total_loss, optimizer, global_step=_USE_GLOBAL_STEP, update_ops=None,
                    variables_to_train=None, clip_gradient_norm=0, summarize_gradients=False,
                    gate_gradients=Optimizer.GATE_OP, aggregation_method=None,
                    colocate_gradients_with_ops=False, gradient_multipliers=None,
                    check_numerics=True):
    """The slim train op: gradients scaled by `gradient_multipliers`, each clipped to
    `clip_gradient_norm` (when > 0), applied; the op's value is the total loss.

    Returns:
        The train op tensor.
    """
    def transform_grads_fn(grads):
        if gradient_multipliers:
            with graph_mod.get_default_graph().name_scope("multiply_grads"):
                grads = multiply_gradients(grads, gradient_multipliers)
        if clip_gradient_norm > 0:
            with graph_mod.get_default_graph().name_scope("clip_grads"):
                grads = clip_gradient_norms(grads, clip_gradient_norm)
        return grads

    return _create_train_op(total_loss, optimizer, global_step=global_step,
                            update_ops=update_ops, variables_to_train=variables_to_train,
                            transform_grads_fn=transform_grads_fn,
                            summarize_gradients=summarize_gradients,
                            gate_gradients=gate_gradients,
                            aggregation_method=aggregation_method,
                            colocate_gradients_with_ops=colocate_gradients_with_ops,
                            check_numerics=check_numerics)


def train_step(sess, train_op, global_step, train_step_kwargs):
    """Runs one step; returns (total loss, should_stop).

    `train_step_kwargs` may hold `should_stop` and `should_log` boolean tensors.
    """
    start = time.time()
    total_loss, np_global_step = sess.run([train_op, global_step])
    elapsed = time.time() - start
    if "should_log" in train_step_kwargs and sess.run(train_step_kwargs["should_log"]):
        logging.info("global step %d: loss = %.4f (%.3f sec/step)", np_global_step, total_loss,
                     elapsed)
    should_stop = bool(sess.run(train_step_kwargs["should_stop"])) \
        if "should_stop" in train_step_kwargs else False
    return total_loss, should_stop


def _default_step_kwargs(global_step, number_of_steps, log_every_n_steps):
    with graph_mod.get_default_graph().name_scope("train_step"):
        if number_of_steps:
            should_stop = math_ops.greater_equal(global_step, number_of_steps)
        else:
            should_stop = array_ops.constant(False)
        should_log = math_ops.equal(math_ops.mod(global_step, log_every_n_steps), 0)
    return {"should_stop": should_stop, "should_log": should_log}


def train(train_op, logdir, train_step_fn=train_step, train_step_kwargs=_USE_DEFAULT,
          log_every_n_steps=1, graph=None, master="", is_chief=True, global_step=None,
          number_of_steps=None, init_op=_USE_DEFAULT, init_feed_dict=None,
          local_init_op=_USE_DEFAULT, init_fn=None, ready_op=_USE_DEFAULT,
          summary_op=_USE_DEFAULT, save_summaries_secs=600, summary_writer=_USE_DEFAULT,
          startup_delay_steps=0, saver=None, save_interval_secs=600, sync_optimizer=None,
          session_config=None, session_wrapper=None, trace_every_n_steps=None,
          ignore_live_threads=False):
    """Trains with `train_op` until `number_of_steps` (or a stop request).

    Args:
        train_op: the tensor from `create_train_op` (its value is the loss).
        logdir: checkpoints and summaries go here (None: neither).
        train_step_fn: `fn(sess, train_op, global_step, train_step_kwargs) -> (loss, stop)`.
        number_of_steps: stop when the global step reaches it.
        init_fn: `fn(sess)` run after variable initialization (e.g. from
            assign_from_checkpoint_fn).
        save_summaries_secs, save_interval_secs: service intervals.
        Others: as in TF 1.15 (`sync_optimizer`, `session_wrapper`, `trace_every_n_steps`
        are not provided).

    Returns:
        The last step's loss value.

    Raises:
        ValueError: `train_op` is None, `sync_optimizer`/`session_wrapper` are given, or no
            global step exists.
    """
    if train_op is None:
        raise ValueError("train_op cannot be None.")
    if sync_optimizer is not None or session_wrapper is not None:
        raise ValueError("slim.learning.train: sync_optimizer and session_wrapper are not "
                         "provided by tensorflux (use tf.train.MonitoredTrainingSession)")
    graph = graph or graph_mod.get_default_graph()
    with graph.as_default():
        if global_step is None:
            global_step = training_util.get_or_create_global_step()
        if train_step_kwargs is _USE_DEFAULT:
            train_step_kwargs = _default_step_kwargs(global_step, number_of_steps,
                                                     log_every_n_steps)
    sv = Supervisor(graph=graph, is_chief=is_chief, logdir=logdir,
                    init_op=Supervisor.USE_DEFAULT if init_op is _USE_DEFAULT else init_op,
                    init_feed_dict=init_feed_dict,
                    local_init_op=(Supervisor.USE_DEFAULT if local_init_op is _USE_DEFAULT
                                   else local_init_op),
                    init_fn=init_fn,
                    ready_op=Supervisor.USE_DEFAULT if ready_op is _USE_DEFAULT else ready_op,
                    summary_op=(Supervisor.USE_DEFAULT if summary_op is _USE_DEFAULT
                                else summary_op),
                    summary_writer=(Supervisor.USE_DEFAULT if summary_writer is _USE_DEFAULT
                                    else summary_writer),
                    global_step=global_step,
                    saver=saver if saver is not None else Supervisor.USE_DEFAULT,
                    save_summaries_secs=save_summaries_secs,
                    save_model_secs=save_interval_secs)
    total_loss = None
    with sv.managed_session(master, start_standard_services=False,
                            config=session_config) as sess:
        logging.info("Starting Session.")
        if logdir and is_chief:
            sv.start_standard_services(sess)
        sv.start_queue_runners(sess)
        try:
            while not sv.should_stop():
                total_loss, should_stop = train_step_fn(sess, train_op, global_step,
                                                        train_step_kwargs)
                if should_stop:
                    logging.info("Stopping Training.")
                    sv.request_stop()
                    break
        except errors.OutOfRangeError:
            logging.info("Caught OutOfRangeError. Stopping Training.")
        if logdir and sv.is_chief and sv.saver is not None:
            logging.info("Finished training! Saving model to disk.")
            sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
    return total_loss
