"""`tf.keras.layers.serialize` / `deserialize`: a layer as `{"class_name", "config"}`."""

from __future__ import annotations

import inspect

from tensorflux.keras import custom_objects as custom_object_registry
from tensorflux.keras.engine.base_layer import Layer

__all__ = ["serialize", "deserialize"]


def _classes(custom_objects):
    from tensorflux.keras import layers  # cycle: the layers package imports this module

    found = {name: obj for name, obj in vars(layers).items()
             if inspect.isclass(obj) and issubclass(obj, Layer)}
    merged = custom_object_registry.merged(custom_objects)
    found.update({k: v for k, v in merged.items() if inspect.isclass(v)})
    return found


def serialize(layer):
    """`{"class_name": <the layer's class name>, "config": layer.get_config()}`."""
    if not isinstance(layer, Layer):
        raise ValueError(f"Cannot serialize {layer!r}: not a Keras layer.")
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def deserialize(config, custom_objects=None):
    """The layer described by `serialize`'s dict (a `tf.keras.layers` class or one in
    `custom_objects`).

    Raises:
        ValueError: a malformed config or an unknown class name.
    """
    if not isinstance(config, dict) or "class_name" not in config or "config" not in config:
        raise ValueError(f"Improper config format: {config!r}; expected a dict with "
                         "'class_name' and 'config'.")
    cls = _classes(custom_objects).get(config["class_name"])
    if cls is None:
        raise ValueError(f"Unknown layer: {config['class_name']}")
    if "custom_objects" in inspect.signature(cls.from_config).parameters:
        return cls.from_config(dict(config["config"]), custom_objects=custom_objects)
    return cls.from_config(dict(config["config"]))
