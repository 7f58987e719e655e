"""`tf.keras.models`: the model classes."""

from tensorflux.keras.engine import Model, Sequential
from tensorflux.keras.saving import load_model, model_from_json, save_model

__all__ = ["Model", "Sequential", "load_model", "save_model", "model_from_json"]
