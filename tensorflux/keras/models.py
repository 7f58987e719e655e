"""`tf.keras.models`: the model classes, saving and loading, cloning."""

from tensorflux.keras.engine import Model, Sequential
from tensorflux.keras.saving import (
    clone_model,
    load_model,
    model_from_config,
    model_from_json,
    model_from_yaml,
    save_model,
)

__all__ = ["Model", "Sequential", "load_model", "save_model", "model_from_json",
           "model_from_config", "model_from_yaml", "clone_model"]
