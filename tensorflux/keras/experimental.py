"""`tf.keras.experimental`: SavedModel export and re-load of a Keras model (TF 1.14/1.15).

`export_saved_model(model, path)` writes a SavedModel servable with `tf.saved_model.loader`
(the "serve" tag, a `serving_default` predict signature over the model's inputs and
outputs, the variables by name in `variables/variables`), the model's JSON config in
`assets/saved_model.json`, and the model's weights as an object-based checkpoint
(`variables/keras_weights`, keyed by the model's structure). `load_from_saved_model(path)`
rebuilds the model from the JSON config and restores those weights; the new model is not
compiled.
"""

from __future__ import annotations

import os

from tensorflux.keras import backend, saving
from tensorflux.keras.layers.dense_features import SequenceFeatures
from tensorflux.keras.layers.recurrent_cells import PeepholeLSTMCell
from tensorflux.keras.optimizer_schedules import (
    CosineDecay,
    CosineDecayRestarts,
    LinearCosineDecay,
    NoisyLinearCosineDecay,
)
from tensorflux.platform import gfile
from tensorflux.saved_model import builder as builder_lib
from tensorflux.saved_model import signature_constants, signature_def_utils, tag_constants

__all__ = ["export_saved_model", "load_from_saved_model", "CosineDecay", "CosineDecayRestarts",
           "LinearCosineDecay", "NoisyLinearCosineDecay",
           "terminate_keras_multiprocessing_pools", "PeepholeLSTMCell", "SequenceFeatures"]


def terminate_keras_multiprocessing_pools(grace_period=0.1, use_sigkill=False):
    """No worker process pools exist (enqueuers use threads): nothing to terminate."""
    del grace_period, use_sigkill
    return []

_CONFIG = "saved_model.json"
_WEIGHTS = "keras_weights"


def _names(tensors, prefix):
    return [t.name.split(":")[0].split("/")[0] or f"{prefix}_{i}" for i, t in enumerate(tensors)]


def export_saved_model(model, saved_model_path, custom_objects=None, as_text=False,
                       input_signature=None, serving_only=False):
    """Exports `model` (a Sequential or functional Model) as a SavedModel at
    `saved_model_path` (a new directory).

    Args:
        model: the Keras model, built (its inputs known).
        saved_model_path: the export directory; it must not exist yet.
        custom_objects: unused at export (kept for the TF signature).
        as_text: write `saved_model.pbtxt` instead of `saved_model.pb`.
        input_signature: unsupported (subclassed models only in TF); must be None.
        serving_only: accepted; only the serving graph is written either way.

    Raises:
        NotImplementedError: `input_signature` given, or a model without inputs (subclassed).
        AssertionError: `saved_model_path` already exists (as the SavedModel builder raises).
    """
    del custom_objects, serving_only
    if input_signature is not None:
        raise NotImplementedError("export_saved_model: `input_signature` is only for "
                                  "subclassed models, which are not supported.")
    if not getattr(model, "inputs", None):
        raise NotImplementedError("export_saved_model: the model has no inputs (a subclassed "
                                  "or unbuilt model); build it on data first.")
    path = os.fspath(saved_model_path)
    session = backend.get_session()
    builder = builder_lib.SavedModelBuilder(path)
    signature = signature_def_utils.predict_signature_def(
        inputs=dict(zip(_names(model.inputs, "input"), model.inputs)),
        outputs=dict(zip(_names(model.outputs, "output"), model.outputs)),
    )
    builder.add_meta_graph_and_variables(
        session, [tag_constants.SERVING],
        signature_def_map={signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: signature},
    )
    builder.save(as_text)
    assets = os.path.join(path, "assets")
    gfile.MakeDirs(assets)
    with gfile.GFile(os.path.join(assets, _CONFIG), "w") as f:
        f.write(model.to_json())
    model.save_weights(os.path.join(path, "variables", _WEIGHTS))


def load_from_saved_model(saved_model_path, custom_objects=None):
    """The Keras model exported at `saved_model_path` by `export_saved_model`: rebuilt
    from its JSON config in the current graph, its weights restored (not compiled).

    Raises:
        NotFoundError / OSError: no exported Keras config or weights under the path.
    """
    path = os.fspath(saved_model_path)
    with gfile.GFile(os.path.join(path, "assets", _CONFIG), "r") as f:
        config = f.read()
    model = saving.model_from_json(config, custom_objects=custom_objects)
    model.load_weights(os.path.join(path, "variables", _WEIGHTS))
    return model
