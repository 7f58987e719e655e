"""`slim.evaluation.evaluate_once`: restore a checkpoint, run the eval ops, return final_op."""

from __future__ import annotations

from tensorflux import summary as summary_mod
from tensorflux.framework import graph as graph_mod
from tensorflux.ops.state import variables as variables_mod
from tensorflux.runtime.session import Session
from tensorflux.train import saver as saver_mod
from tensorflux.train import training_util

__all__ = ["evaluate_once"]

_USE_DEFAULT = 0


def evaluate_once(master, checkpoint_path, logdir, num_evals=1, initial_op=None,
                  initial_op_feed_dict=None, eval_op=None, eval_op_feed_dict=None,
                  final_op=None, final_op_feed_dict=None, summary_op=_USE_DEFAULT,
                  summary_op_feed_dict=None, variables_to_restore=None, session_config=None,
                  hooks=None):
    """Evaluates the model at `checkpoint_path` once.

    Local variables (metric accumulators) are initialized, `initial_op` runs, then `eval_op`
    `num_evals` times; the summaries (default: merge_all) are written to `logdir` at the
    checkpoint's global step.

    Returns:
        The value of `final_op` (None when not given).

    Raises:
        ValueError: hooks are given (not provided).
    """
    if hooks:
        raise ValueError("slim.evaluation.evaluate_once: hooks are not provided by tensorflux")
    graph = graph_mod.get_default_graph()
    if summary_op is _USE_DEFAULT:
        summary_op = summary_mod.merge_all()
    saver = saver_mod.Saver(variables_to_restore)
    global_step = training_util.get_global_step()
    local_init = variables_mod.local_variables_initializer()
    final_value = None
    with Session(master, graph=graph, config=session_config) as sess:
        saver.restore(sess, checkpoint_path)
        sess.run(local_init)
        if initial_op is not None:
            sess.run(initial_op, initial_op_feed_dict)
        if eval_op is not None:
            for _ in range(num_evals):
                sess.run(eval_op, eval_op_feed_dict)
        if final_op is not None:
            final_value = sess.run(final_op, final_op_feed_dict)
        if summary_op is not None and logdir:
            step = int(sess.run(global_step)) if global_step is not None else 0
            writer = summary_mod.FileWriter(logdir)
            writer.add_summary(sess.run(summary_op, summary_op_feed_dict), step)
            writer.close()
    return final_value
