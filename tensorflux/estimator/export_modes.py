"""Exporting an Estimator's TRAIN, EVAL and PREDICT graphs into one SavedModel (TF 1.15's
`Estimator.experimental_export_all_saved_models`).

Each requested mode gets its own graph: the mode's receiver fn, the model_fn called in that
mode, the checkpoint restored. The first mode exported (TRAIN, then EVAL, then PREDICT) saves
the variables; the others add their meta graph only, sharing that checkpoint. Tags: TRAIN
"train", EVAL "eval", PREDICT "serve". TRAIN and EVAL get one signature keyed by the mode
("train" / "eval": loss, predictions, metrics); PREDICT gets the model's export_outputs. The
TRAIN graph's train_op goes into the "saved_model_train_op" collection.
"""

from __future__ import annotations

import os
import shutil

from tensorflux.estimator import export as export_lib
from tensorflux.estimator.model_fn import ModeKeys
from tensorflux.estimator.supervised_receiver import (
    EvalOutput,
    SupervisedInputReceiver,
    TrainOutput,
)
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys, Operation, Tensor
from tensorflux.ops.random import seed as random_seed
from tensorflux.platform import tf_logging as logging
from tensorflux.runtime import session as session_lib
from tensorflux.saved_model import builder as saved_model_builder
from tensorflux.saved_model import constants, signature_def_utils, tag_constants
from tensorflux.train import monitored_session, training_util
from tensorflux.train import saver as saver_lib

__all__ = ["EXPORT_TAG_MAP", "export_all_saved_models", "export_saved_model_for_mode"]

EXPORT_TAG_MAP = {ModeKeys.TRAIN: [tag_constants.TRAINING],
                  ModeKeys.EVAL: [tag_constants.EVAL],
                  ModeKeys.PREDICT: [tag_constants.SERVING]}

_MODE_ORDER = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)


def _receiver_for_mode(receiver_fn, mode):
    receiver = receiver_fn()
    if mode == ModeKeys.PREDICT:
        return receiver.features, None, receiver.receiver_tensors, \
            receiver.receiver_tensors_alternatives
    labels = getattr(receiver, "labels", None)
    if not isinstance(receiver, SupervisedInputReceiver) or labels is None:
        raise ValueError(f"The input_receiver_fn of mode {mode!r} must return a "
                         f"SupervisedInputReceiver with labels (e.g. from "
                         f"build_raw_supervised_input_receiver_fn); got {type(receiver).__name__}.")
    return receiver.features, labels, receiver.receiver_tensors, None


def _signatures(mode, spec, receiver_tensors, alternatives):
    if mode == ModeKeys.PREDICT:
        signatures = export_lib.build_all_signature_defs(
            receiver_tensors, spec.export_outputs or {}, alternatives)
        return {k: s for k, s in signatures.items() if signature_def_utils.is_valid_signature(s)}
    output_cls = TrainOutput if mode == ModeKeys.TRAIN else EvalOutput
    output = output_cls(loss=spec.loss, predictions=spec.predictions or None,
                        metrics=spec.eval_metric_ops or None)
    return {mode: output.as_signature_def(receiver_tensors)}


def _add_train_op(train_op):
    if train_op is None:
        return
    if not isinstance(train_op, (Tensor, Operation)):
        raise TypeError(f"train_op needs to be a Tensor or Op: {train_op!r}")
    graph_mod.get_default_graph().add_to_collection(constants.TRAIN_OP_KEY, train_op)


def _add_meta_graph_for_mode(estimator, builder, receiver_fn, checkpoint_path, save_variables,
                             mode):
    graph = graph_mod.Graph()
    with graph.as_default():
        random_seed.set_random_seed(estimator._config.tf_random_seed)
        training_util.get_or_create_global_step(graph)
        features, labels, receivers, alternatives = _receiver_for_mode(receiver_fn, mode)
        spec = estimator._call_model_fn(features, labels, mode, estimator.config)
        signatures = _signatures(mode, spec, receivers, alternatives)
        if mode == ModeKeys.TRAIN:
            _add_train_op(spec.train_op)
        saver = spec.scaffold.saver or saver_lib.Saver(sharded=True)
        local_init = spec.scaffold.local_init_op
        if local_init is None:
            local_init = monitored_session.Scaffold.default_local_init_op()
        assets = graph.get_collection(GraphKeys.ASSET_FILEPATHS)
        tags = EXPORT_TAG_MAP[mode]
        if not save_variables:
            builder.add_meta_graph(tags, signature_def_map=signatures,
                                   assets_collection=assets, main_op=local_init, saver=saver)
            return
        with session_lib.Session(config=estimator._config.session_config) as sess:
            saver.restore(sess, checkpoint_path)
            builder.add_meta_graph_and_variables(
                sess, tags, signature_def_map=signatures, assets_collection=assets,
                main_op=local_init, saver=saver)


def export_all_saved_models(estimator, export_dir_base, input_receiver_fn_map,
                            assets_extra=None, as_text=False, checkpoint_path=None):
    """Writes the meta graph of each mode of `input_receiver_fn_map` into one new SavedModel
    under `export_dir_base` (see `Estimator.experimental_export_all_saved_models`; also
    `tf.contrib.estimator.export_all_saved_models`).

    Returns:
        The export directory, as bytes.

    Raises:
        ValueError: no TRAIN / EVAL / PREDICT key in the map (the keys are named), no
            checkpoint, or a TRAIN / EVAL receiver without labels.
    """
    # cycle: estimator.py imports this module for its export methods.
    from tensorflux.estimator.estimator import _timestamped_export_dir

    input_receiver_fn_map = dict(input_receiver_fn_map or {})
    modes = [mode for mode in _MODE_ORDER if input_receiver_fn_map.get(mode)]
    if not modes:
        raise ValueError(f"No valid modes for exporting found. Got "
                         f"{list(input_receiver_fn_map)}; the modes are "
                         f"{list(_MODE_ORDER)} (tf.estimator.ModeKeys).")
    unknown = [key for key in input_receiver_fn_map if key not in _MODE_ORDER]
    if unknown:
        raise ValueError(f"input_receiver_fn_map has keys that are not tf.estimator.ModeKeys: "
                         f"{unknown}.")
    checkpoint_path = checkpoint_path or estimator.latest_checkpoint()
    if not checkpoint_path:
        raise ValueError(f"Couldn't find trained model at {estimator.model_dir}.")
    export_dir = _timestamped_export_dir(os.fsdecode(export_dir_base))
    temp_dir = os.path.join(os.path.dirname(export_dir), "temp-" + os.path.basename(export_dir))
    builder = saved_model_builder.SavedModelBuilder(temp_dir)
    try:
        for i, mode in enumerate(modes):
            _add_meta_graph_for_mode(estimator, builder, input_receiver_fn_map[mode],
                                     checkpoint_path, i == 0, mode)
        builder.save(as_text)
        for dest, source in (assets_extra or {}).items():
            target = os.path.join(temp_dir, constants.EXTRA_ASSETS_DIRECTORY, dest)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(source, target)
    except BaseException:
        shutil.rmtree(temp_dir, ignore_errors=True)
        raise
    os.replace(temp_dir, export_dir)
    logging.info(f"SavedModel written to: {export_dir}")
    return export_dir.encode()


def export_saved_model_for_mode(estimator, export_dir_base, input_receiver_fn,
                                assets_extra=None, as_text=False, checkpoint_path=None,
                                mode=ModeKeys.PREDICT):
    """`tf.contrib.estimator.export_saved_model_for_mode`: one mode's graph as a SavedModel.

    Raises:
        ValueError: no input_receiver_fn, or as `export_all_saved_models`.
    """
    if not input_receiver_fn:
        raise ValueError("An input_receiver_fn must be defined.")
    return export_all_saved_models(estimator, export_dir_base, {mode: input_receiver_fn},
                                   assets_extra=assets_extra, as_text=as_text,
                                   checkpoint_path=checkpoint_path)
