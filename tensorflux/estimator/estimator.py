"""`tf.estimator.Estimator`: train, evaluate, predict and export a model_fn (TF 1.15).

Each call builds a fresh graph: the input_fn's tensors, the model_fn's EstimatorSpec for the
mode, then a (monitored) session that restores the latest checkpoint of `model_dir`.
`train` writes checkpoints and summaries into `model_dir` and resumes from them; `evaluate`
writes its metrics into `model_dir/eval[_name]`; `export_saved_model` writes a SavedModel
into a new timestamped directory. In a cluster (TF_CONFIG), variables go to the ps tasks
through a `replica_device_setter` and the session runs on the task's server.
"""

from __future__ import annotations

import collections
import copy
import os
import tempfile
import time

import numpy as np

from tensorflux import metrics as metrics_lib
from tensorflux import summary as summary_lib
from tensorflux.data import dataset_ops
from tensorflux.estimator import distributed_training, export_modes
from tensorflux.estimator import run_config as run_config_lib
from tensorflux.estimator.model_fn import EstimatorSpec, ModeKeys, fn_args
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.ops.random import seed as random_seed
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import summary_pb2
from tensorflux.summary import writer as summary_writer
from tensorflux.train import basic_session_run_hooks as basic_hooks
from tensorflux.train import (
    checkpoint_utils,
    device_setter,
    monitored_session,
    training_util,
    warm_starting,
)
from tensorflux.train import saver as saver_lib
from tensorflux.train.session_run_hook import SessionRunHook

__all__ = ["Estimator", "WarmStartSettings", "VocabInfo"]

VocabInfo = warm_starting.VocabInfo


class WarmStartSettings(collections.namedtuple("WarmStartSettings", [
        "ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info",
        "var_name_to_prev_var_name"])):
    """Which variables to initialize from which checkpoint (see `tf.train.warm_start`)."""

    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start=".*",
                var_name_to_vocab_info=None, var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise ValueError("`ckpt_to_initialize_from` MUST be set in WarmStartSettings")
        return super().__new__(cls, ckpt_to_initialize_from, vars_to_warm_start,
                               var_name_to_vocab_info or {}, var_name_to_prev_var_name or {})


def _warm_start_settings(warm_start_from):
    if warm_start_from is None:
        return None
    if isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        path = os.fsdecode(warm_start_from)
        variables = os.path.join(path, "variables", "variables")
        if os.path.exists(variables + ".index"):
            logging.info(f"Warm-starting from a SavedModel: {path}")
            path = variables
        return WarmStartSettings(ckpt_to_initialize_from=path)
    raise ValueError(f"warm_start_from must be a string or a WarmStartSettings, instead got "
                     f"{type(warm_start_from)}")


def _check_hooks(hooks):
    hooks = list(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"Hooks must be a SessionRunHook, given: {hook}")
    return hooks


def _check_listeners(listeners):
    listeners = list(listeners or [])
    for listener in listeners:
        if not isinstance(listener, basic_hooks.CheckpointSaverListener):
            raise TypeError(f"saving_listeners must be a list of CheckpointSaverListener, "
                            f"given: {listener}")
    return listeners


class _DatasetInitializerHook(SessionRunHook):
    """Initializes the input_fn's dataset iterator once the session exists."""

    def __init__(self, iterator):
        self._iterator = iterator

    def begin(self):
        self._initializer = self._iterator.initializer

    def after_create_session(self, session, coord):
        session.run(self._initializer)


class _StopAfterNEvalsHook(SessionRunHook):
    """Requests a stop after `num_evals` runs and logs the progress."""

    def __init__(self, num_evals, log_progress=True):
        self._num_evals = num_evals
        self._evals = 0
        self._log_progress = log_progress

    def after_run(self, run_context, run_values):
        self._evals += 1
        if self._log_progress and self._num_evals:
            if self._evals == self._num_evals or self._evals % max(1, self._num_evals // 10) \
                    == 0:
                logging.info(f"Evaluation [{self._evals}/{self._num_evals}]")
        if self._num_evals is not None and self._evals >= self._num_evals:
            run_context.request_stop()


def _global_step_of_checkpoint_dir(model_dir) -> int:
    path = checkpoint_utils.latest_checkpoint(model_dir)
    if not path:
        return 0
    try:
        return int(checkpoint_utils.load_variable(path, GraphKeys.GLOBAL_STEP))
    except (ValueError, KeyError, LookupError):
        return 0


def _parse_input_fn_result(result):
    """(features, labels, hooks) from what an input_fn returned (a Dataset or a tuple)."""
    hooks = []
    if isinstance(result, dataset_ops.Dataset):
        iterator = result.make_initializable_iterator()
        hooks.append(_DatasetInitializerHook(iterator))
        result = iterator.get_next()
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError(f"input_fn should return (features, labels) as a len 2 tuple; "
                             f"got a tuple of length {len(result)}.")
        return result[0], result[1], hooks
    return result, None, hooks


def _batch_length(predictions: dict) -> int:
    length = None
    for key, value in predictions.items():
        size = value.shape[0]
        if length is None:
            length = size
        elif size != length:
            raise ValueError(f"Batch length of predictions should be same. {key} has different "
                             f"batch length than others.")
    return length or 0


def _timestamped_export_dir(export_dir_base: str) -> str:
    for _ in range(10):
        path = os.path.join(export_dir_base, str(int(time.time())))
        if not os.path.exists(path):
            return path
        time.sleep(1)
    raise RuntimeError(f"Failed to obtain a unique export directory name after 10 attempts "
                       f"in {export_dir_base}.")


def _write_dict_to_summary(output_dir, dictionary, global_step) -> None:
    logging.info(f"Saving dict for global step {global_step}: " + ", ".join(
        f"{k} = {v}" for k, v in sorted(dictionary.items())))
    summary = summary_pb2.Summary()
    for key, value in sorted(dictionary.items()):
        if key == GraphKeys.GLOBAL_STEP:
            continue
        array = np.asarray(value)
        if array.size == 1 and array.dtype.kind in "fiub":
            summary.value.add(tag=key, simple_value=float(array.reshape(())))
        else:
            logging.warning(f"Skipping summary for {key}, must be a float, np.float32, "
                            f"np.int64, np.int32 or int.")
    writer = summary_writer.FileWriterCache.get(output_dir)
    writer.add_summary(summary, int(global_step))
    writer.flush()


class Estimator:
    """Trains, evaluates, predicts with and exports a model given by `model_fn`.

    Args:
        model_fn: `model_fn(features, labels, mode, params, config)` returning an
            EstimatorSpec; it may declare any subset of the arguments after `features`.
        model_dir: where checkpoints and summaries go (default: RunConfig's, else a new
            temporary directory).
        config: a RunConfig (default: `RunConfig()`, which reads TF_CONFIG).
        params: a dict given to model_fn (and to input_fns that take `params`).
        warm_start_from: a checkpoint or SavedModel path, or a WarmStartSettings.

    Raises:
        ValueError: model_fn without `features`; params given to a model_fn without `params`;
            `model_dir` differing from `config.model_dir`; a config that is not a RunConfig.
    """

    def __init__(self, model_fn, model_dir=None, config=None, params=None,
                 warm_start_from=None):
        if not callable(model_fn):
            raise ValueError(f"model_fn must be provided to Estimator; got {model_fn}")
        args = fn_args(model_fn)
        if "features" not in args:
            raise ValueError(f"model_fn ({model_fn}) must include features argument.")
        if params is not None and "params" not in args:
            raise ValueError(f"model_fn ({model_fn}) does not include params argument, but "
                             f"params ({params}) is passed to Estimator.")
        if config is None:
            config = run_config_lib.RunConfig()
            logging.info("Using default config.")
        if not isinstance(config, run_config_lib.RunConfig):
            raise ValueError(f"config must be an instance of `RunConfig`, but provided "
                             f"{config}.")
        if model_dir is not None:
            model_dir = os.fsdecode(model_dir)
        if model_dir and config.model_dir and \
                os.path.normpath(model_dir) != os.path.normpath(config.model_dir):
            raise ValueError(f"`model_dir` are set both in constructor and `RunConfig`, but "
                             f"with different values. In constructor: '{model_dir}', in "
                             f"`RunConfig`: '{config.model_dir}' ")
        model_dir = model_dir or config.model_dir
        if not model_dir:
            model_dir = tempfile.mkdtemp()
            logging.warning(f"Using temporary folder as model directory: {model_dir}")
        self._config = config.replace(model_dir=model_dir)
        logging.info(f"Using config: {self._config}")
        self._model_dir = model_dir
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})
        self._warm_start_settings = _warm_start_settings(warm_start_from)
        self._device_fn = self._config.device_fn or self._replica_device_setter()

    def _replica_device_setter(self):
        config = self._config
        if not config.num_ps_replicas:
            return None
        return device_setter.replica_device_setter(
            ps_tasks=config.num_ps_replicas, merge_devices=True,
            worker_device=f"/job:{config.task_type}/task:{config.task_id}",
            cluster=config.cluster_spec)

    # -- properties ---------------------------------------------------------------------------

    @property
    def model_dir(self):
        return self._model_dir

    @property
    def config(self):
        return copy.deepcopy(self._config)

    @property
    def params(self):
        return copy.deepcopy(self._params)

    @property
    def model_fn(self):
        """The model_fn bound to this Estimator's config: `fn(features, labels, mode,
        config)`."""
        def public_model_fn(features, labels, mode, config):
            return self._call_model_fn(features, labels, mode, config)

        return public_model_fn

    def eval_dir(self, name=None) -> str:
        """Where `evaluate(name=name)` writes its events: model_dir/eval or eval_<name>."""
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    def latest_checkpoint(self):
        """The path of the newest checkpoint in model_dir, or None."""
        return checkpoint_utils.latest_checkpoint(self._model_dir)

    def _require_checkpoint(self):
        if not self.latest_checkpoint():
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}.")

    def get_variable_names(self) -> list:
        """The names of the variables saved in the latest checkpoint.

        Raises:
            ValueError: there is no checkpoint.
        """
        self._require_checkpoint()
        return [name for name, _ in checkpoint_utils.list_variables(self._model_dir)]

    def get_variable_value(self, name):
        """The value of variable `name` in the latest checkpoint (a NumPy array).

        Raises:
            ValueError: there is no checkpoint.
        """
        self._require_checkpoint()
        return checkpoint_utils.load_variable(self._model_dir, name)

    # -- calling the user's functions -----------------------------------------------------------

    def _call_input_fn(self, input_fn, mode, input_context=None):
        args = fn_args(input_fn)
        kwargs = {}
        if "mode" in args:
            kwargs["mode"] = mode
        if "input_context" in args:
            kwargs["input_context"] = input_context
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = self.config
        return input_fn(**kwargs)

    def _call_model_fn(self, features, labels, mode, config):
        args = fn_args(self._model_fn)
        kwargs = {}
        if "labels" in args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = config
        logging.info("Calling model_fn.")
        spec = self._model_fn(features=features, **kwargs)
        logging.info("Done calling model_fn.")
        if not isinstance(spec, EstimatorSpec):
            raise ValueError("model_fn should return an EstimatorSpec.")
        return spec

    # -- train ----------------------------------------------------------------------------------

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains for `steps` more steps, up to global step `max_steps`, or until input_fn's
        data ends; returns self.

        Raises:
            ValueError: both steps and max_steps; a non-positive count; saving_listeners
                without checkpoint saving.
            TypeError: a hook or listener of the wrong type.
        """
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None and max_steps <= _global_step_of_checkpoint_dir(
                self._model_dir):
            logging.info("Skipping training since max_steps has already saved.")
            return self
        hooks = _check_hooks(hooks)
        if steps is not None or max_steps is not None:
            hooks.append(basic_hooks.StopAtStepHook(steps, max_steps))
        listeners = _check_listeners(saving_listeners)
        loss = self._train_model(input_fn, hooks, listeners)
        logging.info(f"Loss for final step: {loss}.")
        return self

    def _train_model(self, input_fn, hooks, listeners):
        strategy = distributed_training.strategy_of(self._config, ModeKeys.TRAIN)
        if strategy is not None:
            return distributed_training.train(self, strategy, input_fn, hooks, listeners)
        graph = graph_mod.Graph()
        with graph.as_default(), graph.device(self._device_fn):
            random_seed.set_random_seed(self._config.tf_random_seed)
            global_step = training_util.get_or_create_global_step(graph)
            features, labels, input_hooks = _parse_input_fn_result(
                self._call_input_fn(input_fn, ModeKeys.TRAIN))
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self.config)
            return self._train_with_spec(spec, global_step, input_hooks + hooks, listeners)

    def _train_with_spec(self, spec, global_step, hooks, listeners):
        config = self._config
        if self._warm_start_settings is not None:
            settings = self._warm_start_settings
            logging.info(f"Warm-starting with WarmStartSettings: {settings}")
            warm_starting.warm_start(settings.ckpt_to_initialize_from,
                                     settings.vars_to_warm_start,
                                     settings.var_name_to_vocab_info,
                                     settings.var_name_to_prev_var_name)
        graph = graph_mod.get_default_graph()
        if not any(op.name.startswith("loss") for op in
                   graph.get_collection(GraphKeys.SUMMARIES)):
            summary_lib.scalar("loss", spec.loss)
        graph.add_to_collection(GraphKeys.LOSSES, spec.loss)
        worker_hooks = list(hooks)
        worker_hooks.append(basic_hooks.NanTensorHook(spec.loss))
        if config.log_step_count_steps:
            worker_hooks.append(basic_hooks.LoggingTensorHook(
                {"loss": spec.loss, "step": global_step},
                every_n_iter=config.log_step_count_steps))
        worker_hooks.extend(spec.training_hooks)
        scaffold = spec.scaffold
        if scaffold.saver is None and not graph.get_collection(GraphKeys.SAVERS):
            graph.add_to_collection(GraphKeys.SAVERS, saver_lib.Saver(
                sharded=True, max_to_keep=config.keep_checkpoint_max,
                keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours,
                save_relative_paths=True))
        chief_hooks = list(spec.training_chief_hooks)
        saver_hooks = [h for h in worker_hooks + chief_hooks
                       if isinstance(h, basic_hooks.CheckpointSaverHook)]
        if (config.save_checkpoints_secs or config.save_checkpoints_steps) and not saver_hooks:
            saver_hook = basic_hooks.CheckpointSaverHook(
                self._model_dir, save_secs=config.save_checkpoints_secs,
                save_steps=config.save_checkpoints_steps, scaffold=scaffold)
            chief_hooks.insert(0, saver_hook)
            saver_hooks = [saver_hook]
        if listeners:
            if not saver_hooks:
                raise ValueError("There should be a CheckpointSaverHook to use "
                                 "saving_listeners. Please set one of the "
                                 "RunConfig.save_checkpoints_steps or "
                                 "RunConfig.save_checkpoints_secs.")
            saver_hooks[0]._listeners.extend(listeners)
        loss = None
        with monitored_session.MonitoredTrainingSession(
                master=config.master, is_chief=config.is_chief,
                checkpoint_dir=self._model_dir, scaffold=scaffold, hooks=worker_hooks,
                chief_only_hooks=chief_hooks, save_checkpoint_secs=0,
                save_summaries_steps=config.save_summary_steps, config=config.session_config,
                log_step_count_steps=config.log_step_count_steps,
                max_wait_secs=config.session_creation_timeout_secs) as session:
            while not session.should_stop():
                _, loss = session.run([spec.train_op, spec.loss])
        return loss

    # -- evaluate -------------------------------------------------------------------------------

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates the model on `steps` batches (or until input_fn's data ends).

        Returns:
            A dict of the eval_metric_ops' values plus "loss" (the mean loss over batches)
            and "global_step" (of the evaluated checkpoint). The same values are written as
            summaries into `eval_dir(name)`.

        Raises:
            ValueError: steps <= 0; the model_fn defines a metric named "loss".
        """
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        hooks = _check_hooks(hooks)
        if not checkpoint_path:
            checkpoint_path = self.latest_checkpoint()
            if not checkpoint_path:
                logging.info(f"Could not find trained model in model_dir: {self._model_dir}, "
                             f"running initialization to evaluate.")
        graph = graph_mod.Graph()
        with graph.as_default():
            scaffold, update_ops, final_ops, all_hooks = self._build_eval_graph(input_fn,
                                                                               hooks)
            results = self._evaluate_once(checkpoint_path, scaffold, update_ops, final_ops,
                                          all_hooks, steps)
        _write_dict_to_summary(self.eval_dir(name), results, results[GraphKeys.GLOBAL_STEP])
        return results

    def _build_eval_graph(self, input_fn, hooks):
        """(scaffold, update_ops, final_ops, hooks) of an evaluation, in the default graph."""
        strategy = distributed_training.strategy_of(self._config, ModeKeys.EVAL)
        if strategy is not None:
            spec, input_hooks = distributed_training.build_eval_graph(self, strategy, input_fn)
            global_step = training_util.get_global_step()
        else:
            random_seed.set_random_seed(self._config.tf_random_seed)
            global_step = training_util.get_or_create_global_step()
            features, labels, input_hooks = _parse_input_fn_result(
                self._call_input_fn(input_fn, ModeKeys.EVAL))
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL, self.config)
        if "loss" in spec.eval_metric_ops:
            raise ValueError('Metric with name "loss" is not allowed, because Estimator '
                             'already defines a default metric with the same name.')
        metric_ops = dict(spec.eval_metric_ops)
        metric_ops["loss"] = metrics_lib.mean(spec.loss)
        update_ops = [update for _, update in metric_ops.values()]
        final_ops = {key: value for key, (value, _) in metric_ops.items()}
        final_ops[GraphKeys.GLOBAL_STEP] = global_step
        all_hooks = input_hooks + list(hooks) + list(spec.evaluation_hooks)
        return spec.scaffold, update_ops, final_ops, all_hooks

    def _evaluate_once(self, checkpoint_path, scaffold, update_ops, final_ops, hooks, steps):
        logging.info(f"Starting evaluation at {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
        final_hook = basic_hooks.FinalOpsHook(final_ops)
        hooks = list(hooks) + [_StopAfterNEvalsHook(steps), final_hook]
        creator = monitored_session.ChiefSessionCreator(
            scaffold=scaffold, checkpoint_filename_with_path=checkpoint_path,
            master=self._config.evaluation_master, config=self._config.session_config)
        with monitored_session.MonitoredSession(creator, hooks) as session:
            while not session.should_stop():
                session.run(update_ops)
        logging.info(f"Finished evaluation at {time.strftime('%Y-%m-%d-%H:%M:%S')}")
        return dict(final_hook.final_ops_values)

    # -- predict ----------------------------------------------------------------------------------

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields predictions for the features of input_fn, until its data ends.

        Yields:
            With `yield_single_examples`, one example at a time (a dict of arrays, or an
            array when the model_fn's predictions are a single Tensor); else whole batches.

        Raises:
            ValueError: predict_keys with non-dict predictions or naming no prediction;
                prediction tensors of different batch lengths.
        """
        hooks = _check_hooks(hooks)
        if not checkpoint_path:
            checkpoint_path = self.latest_checkpoint()
            if not checkpoint_path:
                logging.info(f"Could not find trained model in model_dir: {self._model_dir}, "
                             f"running initialization to predict.")
        graph = graph_mod.Graph()
        with graph.as_default():
            random_seed.set_random_seed(self._config.tf_random_seed)
            training_util.get_or_create_global_step(graph)
            features, _, input_hooks = _parse_input_fn_result(
                self._call_input_fn(input_fn, ModeKeys.PREDICT))
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self.config)
            predictions = self._extract_keys(spec.predictions, predict_keys)
            creator = monitored_session.ChiefSessionCreator(
                scaffold=spec.scaffold, checkpoint_filename_with_path=checkpoint_path,
                master=self._config.master, config=self._config.session_config)
            all_hooks = input_hooks + hooks + list(spec.prediction_hooks)
            with monitored_session.MonitoredSession(creator, all_hooks) as session:
                while not session.should_stop():
                    values = session.run(predictions)
                    if not yield_single_examples:
                        yield values
                    elif not isinstance(values, dict):
                        yield from values
                    else:
                        for i in range(_batch_length(values)):
                            yield {key: value[i] for key, value in values.items()}

    @staticmethod
    def _extract_keys(predictions, predict_keys):
        if predict_keys is None:
            return predictions
        if not isinstance(predictions, dict):
            raise ValueError("predict_keys argument is not valid in case of non-dict "
                             "predictions.")
        if isinstance(predict_keys, str):
            predict_keys = [predict_keys]
        selected = {k: v for k, v in predictions.items() if k in predict_keys}
        if not selected:
            raise ValueError(f"Expected to run at least one output from {sorted(predictions)}, "
                             f"provided {list(predict_keys)}.")
        return selected

    # -- export -----------------------------------------------------------------------------------

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None,
                           experimental_mode=ModeKeys.PREDICT):
        """Exports the model (the graph of `experimental_mode`, latest or given checkpoint) as
        a SavedModel.

        Args:
            export_dir_base: the directory under which a new `<timestamp>` directory is made.
            serving_input_receiver_fn: returns a ServingInputReceiver (PREDICT) or a
                SupervisedInputReceiver (TRAIN / EVAL).
            assets_extra: {destination path inside assets.extra: source file path}.
            as_text: write saved_model.pbtxt instead of saved_model.pb.
            checkpoint_path: the checkpoint to export (default: the latest).
            experimental_mode: the mode model_fn is called in (a tf.estimator.ModeKeys).

        Returns:
            The export directory, as bytes (as TF).

        Raises:
            ValueError: no serving_input_receiver_fn, an unknown mode, or no checkpoint.
        """
        if not serving_input_receiver_fn:
            raise ValueError("An input_receiver_fn must be defined.")
        return export_modes.export_all_saved_models(
            self, export_dir_base, {experimental_mode: serving_input_receiver_fn},
            assets_extra=assets_extra, as_text=as_text, checkpoint_path=checkpoint_path)

    def experimental_export_all_saved_models(self, export_dir_base, input_receiver_fn_map,
                                             assets_extra=None, as_text=False,
                                             checkpoint_path=None):
        """Exports the TRAIN / EVAL / PREDICT graphs of `input_receiver_fn_map` as the meta
        graphs (tags "train", "eval", "serve") of one SavedModel sharing one checkpoint.

        Args:
            export_dir_base: the directory under which a new `<timestamp>` directory is made.
            input_receiver_fn_map: {ModeKeys.TRAIN / EVAL: a fn returning a
                SupervisedInputReceiver, ModeKeys.PREDICT: a fn returning a
                ServingInputReceiver}.
            assets_extra, as_text, checkpoint_path: as in `export_saved_model`.

        Returns:
            The export directory, as bytes.

        Raises:
            ValueError: no valid mode key (or a key that is not a mode), no checkpoint, or a
                TRAIN / EVAL receiver without labels.

        Example:
            >>> train_fn = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
            ...     {"x": tf.placeholder(tf.float32, [None, 2])}, tf.placeholder(tf.float32))
            >>> path = est.experimental_export_all_saved_models(
            ...     "/tmp/export", {tf.estimator.ModeKeys.TRAIN: train_fn,
            ...                     tf.estimator.ModeKeys.PREDICT: serving_fn})
        """
        return export_modes.export_all_saved_models(
            self, export_dir_base, input_receiver_fn_map, assets_extra=assets_extra,
            as_text=as_text, checkpoint_path=checkpoint_path)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn, assets_extra=None,
                          as_text=False, checkpoint_path=None, strip_default_attrs=False):
        """The older name of `export_saved_model` (TF 1.x)."""
        del strip_default_attrs
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn,
                                       assets_extra=assets_extra, as_text=as_text,
                                       checkpoint_path=checkpoint_path)

