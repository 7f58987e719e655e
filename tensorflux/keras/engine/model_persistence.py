"""Keras models' weight files, whole-model saving, configs and `summary` (graph mode).

`save_weights` writes an object-based checkpoint keyed by the model's structure (TF format) or a
`tf.train.Saver` checkpoint for h5-style names; `load_weights` reads either.
"""

from __future__ import annotations

import os

import numpy as np

from tensorflux import train
from tensorflux.keras import backend
from tensorflux.train import checkpoint as train_checkpoint
from tensorflux.train import checkpoint_restore

__all__ = ["PersistenceMixin"]


class PersistenceMixin:
    """Weight files, saving, configs and the summary of a Keras model."""

    # -- weights ---------------------------------------------------------------------------

    def save_weights(self, filepath, overwrite=True, save_format=None):
        """Writes the weights to `filepath`: in the TF format (default) an object-based
        checkpoint keyed by the model's structure ("layer_with_weights-0/kernel/...", as
        `tf.train.Checkpoint(model=...)` would key them under "model/") and the directory's
        `checkpoint` state file; with `save_format="h5"` or a ".h5"/".keras" name a
        `tf.train.Saver` checkpoint (no HDF5 writer here)."""
        session = backend.get_session()
        filepath = os.fspath(filepath)
        if _is_h5(filepath, save_format):
            self._weights_saver().save(session, filepath, write_meta_graph=False)
            return
        self._object_saver().save(filepath, session)
        train.update_checkpoint_state(os.path.dirname(filepath), filepath, [filepath],
                                      save_relative_paths=True)

    def load_weights(self, filepath, by_name=False):
        """Restores weights written by `save_weights` (either format; TF-format checkpoints
        written by `tf.train.Checkpoint` of this model too).

        Returns:
            The load status for a TF-format checkpoint, else None.

        Raises:
            NotImplementedError: `by_name=True` (topological loading only).
            NotFoundError: no checkpoint at `filepath`.
            AssertionError: nothing in the checkpoint matched the model.
        """
        if by_name:
            raise NotImplementedError("Weights may only be loaded based on topology into "
                                      "Models when loading TensorFlow-formatted weights (got "
                                      "by_name=True to load_weights).")
        session = backend.get_session()
        filepath = os.fspath(filepath)
        status = self._object_saver().restore(filepath)
        if isinstance(status, checkpoint_restore.NameBasedSaverStatus):
            self._weights_saver().restore(session, filepath)
            return None
        # Restore the existing weights now and the ones a later build creates as they are
        # initialized (TF's streaming restore).
        status.streaming_restore(session)
        backend.register_streaming_restore(session.graph, status)
        status.assert_nontrivial_match()
        return status

    def _object_saver(self):
        if getattr(self, "_tfx_object_saver", None) is None:
            self._tfx_object_saver = train_checkpoint.CheckpointableSaver(self)
        return self._tfx_object_saver

    def save(self, filepath, overwrite=True, include_optimizer=True, save_format=None):
        """Saves the model (description, compile settings, weights); see `load_model`."""
        # cycle: a module-level import breaks `import tensorflux` (partly initialized module)
        from tensorflux.keras.saving import save_model

        save_model(self, filepath, overwrite, include_optimizer, save_format)

    def get_config(self):
        # cycle: a module-level import breaks `import tensorflux` (partly initialized module)
        from tensorflux.keras.saving import model_to_config

        return model_to_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new model (fresh weights) from `get_config()` output; `custom_objects` names
        the layer classes the config refers to that Keras does not know."""
        # cycle: a module-level import breaks `import tensorflux` (partly initialized module)
        from tensorflux.keras.saving import model_from_config

        return model_from_config(config, custom_objects)

    def to_json(self, **kwargs):
        """The model's description as JSON (`tf.keras.models.model_from_json` reads it)."""
        import json

        # cycle: a module-level import breaks `import tensorflux` (partly initialized module)
        from tensorflux.keras.saving import model_to_config

        return json.dumps(model_to_config(self), **kwargs)

    def to_yaml(self, **kwargs):
        """The model's description as YAML (`tf.keras.models.model_from_yaml` reads it).

        Raises:
            ImportError: PyYAML is not installed.
        """
        try:
            import yaml
        except ImportError:
            raise ImportError("Requires yaml module installed (`pip install pyyaml`).") \
                from None
        # cycle: a module-level import breaks `import tensorflux` (partly initialized module)
        from tensorflux.keras.saving import model_to_config

        return yaml.safe_dump(model_to_config(self), **kwargs)

    def _weights_saver(self):
        if self._saver is None:
            with self.weights[0].graph.as_default():
                self._saver = train.Saver(var_list=self._weight_keys())
        return self._saver

    def _weight_keys(self):
        """Checkpoint keys for the weights by the model's structure (the n-th layer with
        weights and the weight's attribute name), not by variable names: as in Keras, weights
        saved from one model load into another instance of the same architecture."""
        keys, seen = {}, set()
        owners = [layer for layer in self.layers if layer.weights]
        for i, layer in enumerate(owners):
            for j, var in enumerate(layer.weights):
                if id(var) in seen:
                    continue
                attr = var.op.name.rsplit("/", 1)[-1]
                key = f"layer_with_weights-{i}/{attr}/.ATTRIBUTES/VARIABLE_VALUE"
                if key in keys:
                    key = f"layer_with_weights-{i}/{attr}-{j}/.ATTRIBUTES/VARIABLE_VALUE"
                keys[key] = var
                seen.add(id(var))
        for k, var in enumerate(self.weights):
            if id(var) not in seen:
                keys[f"weight-{k}/.ATTRIBUTES/VARIABLE_VALUE"] = var
        return keys

    # -- summary ---------------------------------------------------------------------------

    def summary(self, line_length=65, print_fn=None):
        """Prints the layers, their output shapes and parameter counts."""
        if self.outputs is None and not any(layer._inbound_nodes for layer in self.layers):
            raise ValueError(
                "This model has not yet been built. Build the model first by "
                "calling `build()` or by calling the model on a batch of data."
            )
        print_fn = print_fn or print
        widths = (29, 26, line_length - 55)
        rows = []
        for layer in self.layers:
            nodes = [n for n in layer._inbound_nodes if n in self._nodes] or layer._inbound_nodes
            shape = "?"
            if nodes:
                outs = nodes[-1].output_tensors
                shapes = [tuple(t.get_shape().as_list()) for t in outs]
                shape = str(shapes[0] if len(shapes) == 1 else shapes).replace("None", "None")
            rows.append(
                (f"{layer.name} ({type(layer).__name__})", shape, str(layer.count_params()))
            )
        print_fn(f'Model: "{self.name}"')
        print_fn("_" * line_length)
        print_fn(
            "".join(h.ljust(w) for h, w in zip(("Layer (type)", "Output Shape", "Param #"), widths))
        )
        print_fn("=" * line_length)
        for i, row in enumerate(rows):
            print_fn("".join(c.ljust(w) for c, w in zip(row, widths)))
            print_fn(("=" if i == len(rows) - 1 else "_") * line_length)
        trainable = sum(int(np.prod(w.get_shape().as_list())) for w in self.trainable_weights)
        total = self.count_params()
        print_fn(f"Total params: {total:,}")
        print_fn(f"Trainable params: {trainable:,}")
        print_fn(f"Non-trainable params: {total - trainable:,}")
        print_fn("_" * line_length)


def _is_h5(filepath: str, save_format) -> bool:
    """Whether `save_weights` writes the h5-named format (as Keras decides it)."""
    if save_format is not None:
        fmt = str(save_format).lower().strip()
        if fmt not in ("tf", "tensorflow", "h5", "hdf5", "keras"):
            raise ValueError(f"Unknown format \"{save_format}\". Was expecting one of "
                             "{\"tf\", \"h5\"}.")
        return fmt in ("h5", "hdf5", "keras")
    return filepath.endswith((".h5", ".keras", ".hdf5"))
