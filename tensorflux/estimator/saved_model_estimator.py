"""`tf.contrib.estimator.SavedModelEstimator` (TF 1.15): an Estimator whose model_fn is the
meta graph a SavedModel holds for the mode.

The SavedModel must come from `Estimator.experimental_export_all_saved_models` or
`export_saved_model`: its meta graphs are tagged "train", "eval", "serve"; the TRAIN / EVAL
ones carry a signature keyed by the mode (inputs: the feature and label placeholders; outputs
"loss", "predictions[/key]", "metrics/<name>/value|update_op") and the TRAIN one its train_op
in the "saved_model_train_op" collection. Calling the model_fn imports that meta graph (under
a name scope, so it cannot clash with the input_fn's nodes) with its input placeholders
replaced by the input_fn's features and labels and its global step by the Estimator's.
The variables start from the SavedModel's checkpoint until `model_dir` has one of its own.
"""

from __future__ import annotations

import os

from tensorflux.estimator.estimator import Estimator
from tensorflux.estimator.export_modes import EXPORT_TAG_MAP
from tensorflux.estimator.export_output import PredictOutput
from tensorflux.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorflux.estimator.supervised_receiver import SINGLE_LABEL_KEY, SINGLE_RECEIVER_KEY
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys, Tensor
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.protos import meta_graph_pb2, variable_pb2
from tensorflux.saved_model import constants, loader, signature_constants
from tensorflux.train import checkpoint_utils, monitored_session, training_util
from tensorflux.train import meta_graph as meta_graph_lib
from tensorflux.train import saver as saver_lib

__all__ = ["SavedModelEstimator"]

_IMPORT_SCOPE = "saved_model"
_VARIABLE_KEYS = (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES,
                  GraphKeys.MODEL_VARIABLES, GraphKeys.GLOBAL_STEP)


def _global_step_name(meta) -> str | None:
    """The tensor name of the meta graph's global step variable, if it has one."""
    collection = meta.collection_def.get(GraphKeys.GLOBAL_STEP)
    if collection is None:
        return None
    for data in collection.bytes_list.value:
        proto = variable_pb2.VariableDef()
        proto.ParseFromString(data)
        return proto.variable_name
    return None


def _without_variable(meta, variable_name):
    """A copy of `meta` whose variable collections no longer list `variable_name` (the
    global step), without the global step's read cache and the summaries."""
    copy = meta_graph_pb2.MetaGraphDef()
    copy.CopyFrom(meta)
    for key in _VARIABLE_KEYS:
        if key not in copy.collection_def:
            continue
        values = copy.collection_def[key].bytes_list.value
        kept = []
        for data in values:
            proto = variable_pb2.VariableDef()
            proto.ParseFromString(data)
            if proto.variable_name != variable_name:
                kept.append(data)
        del values[:]
        values.extend(kept)
        if not kept:
            del copy.collection_def[key]
    for key in (training_util.GLOBAL_STEP_READ_KEY, GraphKeys.SUMMARIES):
        # The exported graph's summaries would clash with the ones the Estimator adds.
        if key in copy.collection_def:
            del copy.collection_def[key]
    return copy


def _lookup_input(key, features, labels):
    for value, single in ((features, SINGLE_RECEIVER_KEY), (labels, SINGLE_LABEL_KEY)):
        if isinstance(value, dict):
            if key in value:
                return value[key]
        elif value is not None and key == single:
            return value
    return None


def _strip_prefix(outputs, prefix):
    """{key after "prefix/": tensor} of the outputs under `prefix`; or the tensor named
    exactly `prefix`."""
    if prefix in outputs:
        return outputs[prefix]
    start = prefix + "/"
    return {key[len(start):]: value for key, value in outputs.items() if key.startswith(start)}


class SavedModelEstimator(Estimator):
    """Trains, evaluates and predicts with the graphs of a SavedModel.

    Args:
        saved_model_dir: a SavedModel exported from an Estimator (see the module doc).
        model_dir: where new checkpoints go (default: a temporary directory).

    Raises:
        OSError: `saved_model_dir` holds no SavedModel.
        RuntimeError: (train / evaluate / predict) the SavedModel has no meta graph for the
            mode.
        ValueError: (train / evaluate / predict) the input_fn lacks a feature or label the
            mode's signature takes.

    Example:
        >>> est = tf.contrib.estimator.SavedModelEstimator(export_dir)
        >>> est.train(input_fn, steps=10)
        >>> list(est.predict(serving_input_fn))
    """

    def __init__(self, saved_model_dir, model_dir=None):
        self._saved_model_dir = os.fsdecode(saved_model_dir)
        self._loader = loader.SavedModelLoader(self._saved_model_dir)
        tag_sets = [set(m.meta_info_def.tags) for m in self._loader.saved_model.meta_graphs]
        self._available_modes = [mode for mode, tags in EXPORT_TAG_MAP.items()
                                 if set(tags) in tag_sets]
        super().__init__(model_fn=self._model_fn_from_saved_model, model_dir=model_dir)

    @property
    def saved_model_dir(self) -> str:
        return self._saved_model_dir

    def _saved_model_checkpoint(self) -> str:
        return self._loader.variables_path

    def latest_checkpoint(self):
        """model_dir's newest checkpoint, else the SavedModel's variables."""
        return checkpoint_utils.latest_checkpoint(self._model_dir) or \
            self._saved_model_checkpoint()

    def get_variable_names(self) -> list:
        return [name for name, _ in checkpoint_utils.list_variables(self.latest_checkpoint())]

    def get_variable_value(self, name):
        return checkpoint_utils.load_variable(self.latest_checkpoint(), name)

    def _meta_graph_for_mode(self, mode):
        if mode not in self._available_modes:
            raise RuntimeError(f"The SavedModel at {self._saved_model_dir} has no meta graph for "
                               f"mode {mode!r} (tags {EXPORT_TAG_MAP.get(mode)}); it has the "
                               f"modes {self._available_modes}.")
        return self._loader.get_meta_graph_def_from_tags(EXPORT_TAG_MAP[mode])

    @staticmethod
    def _signature(meta, mode):
        signatures = meta.signature_def
        if mode != ModeKeys.PREDICT:
            key = mode
        elif signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY in signatures:
            key = signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
        elif len(signatures) == 1:
            (key,) = signatures
        else:
            key = None
        if key not in signatures:
            raise RuntimeError(f"The SavedModel's {mode!r} meta graph has no signature "
                               f"{key!r}; it has {sorted(signatures)}.")
        return signatures[key]

    def _input_map(self, signature, features, labels, mode):
        input_map = {}
        for key, info in signature.inputs.items():
            value = _lookup_input(key, features, labels)
            if value is None:
                raise ValueError(f"The SavedModel's {mode!r} signature takes input {key!r}, "
                                 f"which the input_fn's features and labels do not have.")
            if isinstance(value, SparseTensor) or info.WhichOneof("encoding") != "name":
                raise ValueError(f"Input {key!r}: SavedModelEstimator maps dense tensors "
                                 f"only.")
            input_map[info.name] = value
        return input_map

    def _model_fn_from_saved_model(self, features, labels, mode):
        meta = self._meta_graph_for_mode(mode)
        signature = self._signature(meta, mode)
        graph = graph_mod.get_default_graph()
        input_map = self._input_map(signature, features, labels, mode)
        step_name = _global_step_name(meta)
        if step_name is not None:
            input_map[step_name] = training_util.get_or_create_global_step(graph)._ref()
            meta = _without_variable(meta, step_name)
        saver = meta_graph_lib.import_meta_graph(meta, import_scope=_IMPORT_SCOPE,
                                                 input_map=input_map)
        if saver is None:
            saver = saver_lib.Saver(allow_empty=True)

        def tensor(info):
            return graph.get_tensor_by_name(f"{_IMPORT_SCOPE}/{info.name}")

        outputs = {key: tensor(info) for key, info in signature.outputs.items()}
        scaffold = monitored_session.Scaffold(saver=saver, init_fn=self._initial_restore(saver))
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode, predictions=outputs, scaffold=scaffold, export_outputs={
                signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: PredictOutput(outputs)})
        predictions = _strip_prefix(outputs, "predictions") or None
        if mode == ModeKeys.TRAIN:
            train_ops = graph.get_collection(constants.TRAIN_OP_KEY)
            if len(train_ops) != 1:
                raise RuntimeError(f"The SavedModel's TRAIN meta graph must hold one train op "
                                   f"in the {constants.TRAIN_OP_KEY!r} collection; found "
                                   f"{len(train_ops)}.")
            return EstimatorSpec(mode, loss=outputs["loss"], train_op=train_ops[0],
                                 predictions=predictions, scaffold=scaffold)
        metrics = {}
        for key, value in outputs.items():
            if key.startswith("metrics/") and key.endswith("/value"):
                name = key[len("metrics/"):-len("/value")]
                update = outputs.get(f"metrics/{name}/update_op")
                if isinstance(update, Tensor):
                    metrics[name] = (value, update)
        return EstimatorSpec(mode, loss=outputs["loss"], predictions=predictions,
                             eval_metric_ops=metrics, scaffold=scaffold)

    def _initial_restore(self, saver):
        """An init_fn loading the SavedModel's variables when model_dir has no checkpoint
        (training starts from the exported values, global step included)."""
        def init_fn(scaffold, session):
            del scaffold
            if not checkpoint_utils.latest_checkpoint(self._model_dir):
                saver.restore(session, self._saved_model_checkpoint())

        return init_fn
