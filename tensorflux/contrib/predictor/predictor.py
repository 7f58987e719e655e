"""`tf.contrib.predictor`: callables that run a SavedModel's (or an Estimator's) signature.

A Predictor owns a graph and a session; calling it with a dict of input values feeds the
signature's input tensors by key and returns a dict of the output values by key.
"""

from __future__ import annotations

from tensorflux.estimator.estimator import Estimator
from tensorflux.estimator.export import build_all_signature_defs
from tensorflux.estimator.model_fn import ModeKeys
from tensorflux.framework import graph as graph_mod
from tensorflux.platform import tf_logging as logging
from tensorflux.runtime.session import Session
from tensorflux.saved_model import loader, signature_constants, tag_constants
from tensorflux.train import monitored_session

__all__ = ["Predictor", "SavedModelPredictor", "CoreEstimatorPredictor", "from_saved_model",
           "from_estimator"]

_DEFAULT_INPUT_ALTERNATIVE_FORMAT = "default_input_alternative:{}"


class Predictor:
    """Runs fixed fetch tensors for a dict of inputs keyed like `feed_tensors`."""

    _graph = None
    _session = None
    _feed_tensors: dict = {}
    _fetch_tensors: dict = {}

    def __call__(self, input_dict):
        """Runs the model on `input_dict` ({input key: value}).

        Returns:
            {output key: value}.

        Raises:
            ValueError: a key that is not an input of the model.
        """
        unexpected = set(input_dict) - set(self._feed_tensors)
        if unexpected:
            raise ValueError(f"Got unexpected keys in input_dict: {sorted(unexpected)}\n"
                             f"expected: {sorted(self._feed_tensors)}")
        feed_dict = {self._feed_tensors[key]: value for key, value in input_dict.items()
                     if value is not None}
        return self._session.run(fetches=self._fetch_tensors, feed_dict=feed_dict)

    @property
    def graph(self):
        return self._graph

    @property
    def session(self):
        return self._session

    @property
    def feed_tensors(self) -> dict:
        return self._feed_tensors

    @property
    def fetch_tensors(self) -> dict:
        return self._fetch_tensors

    def __repr__(self):
        return (f"{type(self).__name__} with feed tensors {self._feed_tensors} and fetch tensors "
                f"{self._fetch_tensors}")


def _tag_list(tags):
    if tags is None:
        return [tag_constants.SERVING]
    if isinstance(tags, (str, bytes)):
        tags = tags.decode() if isinstance(tags, bytes) else tags
        return [t.strip() for t in tags.split(",") if t.strip()]
    return list(tags)


def _signature_by_key(meta_graph_def, signature_def_key):
    key = signature_def_key or signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
    signatures = meta_graph_def.signature_def
    if key in signatures:
        return signatures[key]
    alternative = _DEFAULT_INPUT_ALTERNATIVE_FORMAT.format(key)
    if alternative in signatures:
        logging.warning('Could not find signature def "%s". Using "%s" instead', key,
                        alternative)
        return signatures[alternative]
    raise ValueError(f'Got signature_def_key "{key}". Available signatures are '
                     f"{sorted(signatures)}.")


class SavedModelPredictor(Predictor):
    """A Predictor over a SavedModel loaded into its own session."""

    def __init__(self, export_dir, signature_def_key=None, signature_def=None, input_names=None,
                 output_names=None, tags=None, graph=None, config=None):
        """Loads `export_dir` (tags "serve" by default) and picks the signature.

        Args:
            export_dir: the SavedModel directory.
            signature_def_key: the signature to run (default "serving_default").
            signature_def: a SignatureDef to use instead of looking one up.
            input_names, output_names: {key: tensor name} maps overriding the signature
                (both or neither).
            tags: the MetaGraphDef's tags: a list, or a comma-separated string.
            graph: the graph to load into (default: a new one).
            config: ConfigProto of the session.

        Raises:
            ValueError: an unknown signature key; only one of input_names/output_names; both
                signature_def_key and signature_def.
            RuntimeError: no MetaGraphDef with these tags.
        """
        if signature_def_key is not None and signature_def is not None:
            raise ValueError("Cannot provide both signature_def_key and signature_def.")
        if (input_names is None) != (output_names is None):
            raise ValueError("input_names and output_names must both be specified or both be "
                             "None.")
        self._graph = graph or graph_mod.Graph()
        with self._graph.as_default():
            self._session = Session(config=config)
            meta = loader.load(self._session, _tag_list(tags), export_dir)
            if input_names is None:
                if signature_def is None:
                    signature_def = _signature_by_key(meta, signature_def_key)
                input_names = {k: v.name for k, v in signature_def.inputs.items()}
                output_names = {k: v.name for k, v in signature_def.outputs.items()}
            self._feed_tensors = {k: self._graph.get_tensor_by_name(v)
                                  for k, v in input_names.items()}
            self._fetch_tensors = {k: self._graph.get_tensor_by_name(v)
                                   for k, v in output_names.items()}


class CoreEstimatorPredictor(Predictor):
    """A Predictor over an Estimator's PREDICT graph restored from its latest checkpoint."""

    def __init__(self, estimator, serving_input_receiver_fn, output_key=None, graph=None,
                 config=None):
        """Builds the serving graph and restores `estimator.model_dir`'s latest checkpoint.

        Args:
            estimator: a tf.estimator.Estimator that has been trained.
            serving_input_receiver_fn: () -> ServingInputReceiver.
            output_key: the export output to run (default "serving_default").
            graph: the graph to build in (default: a new one).
            config: ConfigProto of the session.

        Raises:
            KeyError: output_key is not one of the model's export outputs.
            ValueError: no checkpoint in model_dir.
        """
        key = output_key or signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
        if not estimator.latest_checkpoint():
            raise ValueError(f"Could not find trained model in model_dir: "
                             f"{estimator.model_dir}.")
        self._graph = graph or graph_mod.Graph()
        with self._graph.as_default():
            receiver = serving_input_receiver_fn()
            spec = estimator.model_fn(receiver.features, None, ModeKeys.PREDICT,
                                      estimator.config)
            export_outputs = spec.export_outputs or {}
            if key not in export_outputs:
                raise KeyError(f"output_key must be one of {sorted(export_outputs)}; got {key}")
            signatures = build_all_signature_defs(receiver.receiver_tensors, export_outputs,
                                                  receiver.receiver_tensors_alternatives)
            if key not in signatures:
                raise KeyError(f"export output {key!r} has no valid signature for the receiver's "
                               f"tensors")
            signature_def = signatures[key]
            self._session = monitored_session.MonitoredSession(
                session_creator=monitored_session.ChiefSessionCreator(
                    checkpoint_dir=estimator.model_dir, config=config))
        self._feed_tensors = {k: self._graph.get_tensor_by_name(v.name)
                              for k, v in signature_def.inputs.items()}
        self._fetch_tensors = {k: self._graph.get_tensor_by_name(v.name)
                               for k, v in signature_def.outputs.items()}


def from_saved_model(export_dir, signature_def_key=None, signature_def=None, input_names=None,
                     output_names=None, tags=None, graph=None, config=None):
    """A Predictor running a SavedModel's signature (see SavedModelPredictor).

    Example:
        >>> predict_fn = tf.contrib.predictor.from_saved_model(export_dir)
        >>> predict_fn({"x": [[1.0, 2.0]]})["y"]
    """
    return SavedModelPredictor(export_dir, signature_def_key=signature_def_key,
                               signature_def=signature_def, input_names=input_names,
                               output_names=output_names, tags=tags, graph=graph, config=config)


def from_estimator(estimator, serving_input_receiver_fn, output_key=None, graph=None,
                   config=None):
    """A Predictor running a trained Estimator's serving signature (CoreEstimatorPredictor).

    Raises:
        TypeError: `estimator` is not a tf.estimator.Estimator.
    """
    if not isinstance(estimator, Estimator):
        raise TypeError(f"estimator must be a tf.estimator.Estimator, got "
                        f"{type(estimator).__name__}")
    return CoreEstimatorPredictor(estimator, serving_input_receiver_fn, output_key=output_key,
                                  graph=graph, config=config)
