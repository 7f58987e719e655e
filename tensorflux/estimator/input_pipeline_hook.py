"""`tf.data.experimental.CheckpointInputPipelineHook`: saves the position of an Estimator's
input iterators next to its model checkpoints (`input.ckpt-<step>`, state file
`checkpoint_input`) and restores it when training resumes.

It lives here (not in `data`) because it needs the Saver; the root package exposes it as
`tf.data.experimental.CheckpointInputPipelineHook`. What a saved state holds and what is
re-computed on restore: see `tensorflux.data.iterator_state`.
"""

from __future__ import annotations

from tensorflux.data.iterator_ops import GLOBAL_ITERATORS
from tensorflux.data.iterator_state import saveable_for_handle
from tensorflux.framework import graph as graph_mod
from tensorflux.train import checkpoint_utils
from tensorflux.train.basic_session_run_hooks import CheckpointSaverHook
from tensorflux.train.saver import Saver
from tensorflux.train.session_run_hook import SessionRunHook

__all__ = ["CheckpointInputPipelineHook"]


class _InputSaver(Saver):
    """A Saver whose state file is `checkpoint_input` (the model's stays `checkpoint`)."""

    def __init__(self, var_list, latest_filename):
        super().__init__(var_list)
        self._latest_filename = latest_filename

    def save(self, sess, save_path, global_step=None, latest_filename=None, **kwargs):
        return super().save(sess, save_path, global_step,
                            latest_filename or self._latest_filename, **kwargs)


class CheckpointInputPipelineHook(SessionRunHook):
    """Saves and restores the state of the input iterators of an Estimator's training.

    Checkpoints are written with the model's (same `save_checkpoints_steps` / `_secs`) as
    `<model_dir>/input.ckpt-<step>` (`input_<task_type>_<task_id>.ckpt` with several
    workers); before the first step the latest one is restored, so a resumed `train()` reads
    the input in the order the uninterrupted one would have.

    Example:
        >>> est.train(input_fn, hooks=[tf.data.experimental.CheckpointInputPipelineHook(est)])

    Raises:
        ValueError: `estimator` has no model_dir / config.
    """

    def __init__(self, estimator, external_state_policy="fail"):
        config = getattr(estimator, "config", None)
        if config is None or not getattr(estimator, "model_dir", None):
            raise ValueError(f"CheckpointInputPipelineHook needs an Estimator, got {estimator!r}")
        prefix = "input"
        if (config.num_worker_replicas or 1) > 1:
            prefix += f"_{config.task_type}_{config.task_id}"
        self._saver_hook = CheckpointSaverHook(
            estimator.model_dir, save_secs=config.save_checkpoints_secs,
            save_steps=config.save_checkpoints_steps, checkpoint_basename=prefix + ".ckpt")
        self._latest_filename = "checkpoint_" + prefix
        self._first_run = True
        self._policy = external_state_policy

    def begin(self):
        handles = graph_mod.get_default_graph().get_collection(GLOBAL_ITERATORS)
        if not handles:
            raise ValueError("CheckpointInputPipelineHook: the graph has no tf.data iterator")
        self._saver_hook._saver = _InputSaver([saveable_for_handle(h, self._policy)
                                               for h in handles],
                                              self._latest_filename)
        self._saver_hook.begin()

    def after_create_session(self, session, coord):
        self._first_run = True
        self._coord = coord

    def before_run(self, run_context):
        if self._first_run:
            session = run_context.session
            path = checkpoint_utils.latest_checkpoint(self._saver_hook._checkpoint_dir,
                                                      self._latest_filename)
            if path:
                self._saver_hook._get_saver().restore(session, path)
            else:
                self._saver_hook.after_create_session(session, self._coord)
            self._first_run = False
        return self._saver_hook.before_run(run_context)

    def after_run(self, run_context, run_values):
        self._saver_hook.after_run(run_context, run_values)

    def end(self, session):
        self._saver_hook.end(session)
