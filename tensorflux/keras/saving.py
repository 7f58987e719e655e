"""Whole-model files: `save_model` / `load_model`, `Model.to_json` / `model_from_json`.

A model file is a NumPy `.npz` archive (read without pickle) holding `config`, the model's
JSON description, and `weight_<i>` arrays in `model.weights` order. The description lists
each layer as its class name and recorded constructor arguments, plus the topology:
Sequential models as a layer list, functional models as their layer calls in order, each
naming the (call, output index) pairs it consumes. Activations, initializers, regularizers,
constraints and nested layers are encoded by name and config; other arguments (e.g. a
Lambda's function) cannot be saved and raise ValueError. Subclassed models cannot be saved.
"""

from __future__ import annotations

import inspect
import io
import json

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.keras import (
    activations,
    constraints,
    initializers,
    layers,
    losses,
    metrics,
    optimizers,
    regularizers,
)
from tensorflux.keras import custom_objects as custom_object_registry
from tensorflux.keras.engine.base_layer import Layer
from tensorflux.keras.engine.functional import Model, Sequential
from tensorflux.keras.engine.input_layer import Input, InputLayer
from tensorflux.platform import gfile

__all__ = ["save_model", "load_model", "model_from_json", "model_to_config", "model_from_config",
           "clone_model", "model_from_yaml"]


def _layer_classes(custom_objects):

    found = {
        name: obj
        for name, obj in vars(layers).items()
        if inspect.isclass(obj) and issubclass(obj, Layer)
    }
    found.update({"Sequential": Sequential, "Model": Model, "InputLayer": InputLayer})
    merged = custom_object_registry.merged(custom_objects)
    found.update({k: v for k, v in merged.items() if inspect.isclass(v)})
    return found


def _encode(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {"__dict__": {str(k): _encode(v) for k, v in value.items()}}
    if isinstance(value, dtypes.DType):
        return value.name
    if isinstance(value, metrics.Metric):  # compile(metrics=[...]) objects
        return {"__metric__": metrics.serialize(value)}
    if isinstance(value, losses.Loss):
        return {"__loss__": {"class_name": type(value).__name__, "config": value.get_config()}}
    if isinstance(value, Layer):
        return {"__layer__": _layer_config(value)}
    if isinstance(value, initializers.Initializer):
        return {"__initializer__": type(value).__name__, "config": value.get_config()}
    if isinstance(value, regularizers.L1L2):
        return {"__regularizer__": value.get_config()}
    if isinstance(value, constraints.Constraint):
        return {"__constraint__": type(value).__name__, "config": dict(vars(value))}
    name = getattr(value, "__name__", None)
    if callable(value) and name is not None and name.isidentifier():
        return {"__function__": name}
    raise ValueError(
        f"Cannot save the layer argument {value!r}: only plain values, named "
        "functions, Keras initializers, regularizers, constraints and layers can "
        "be saved."
    )


def _decode(value, custom_objects):
    if isinstance(value, list):
        return [_decode(v, custom_objects) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(_decode(v, custom_objects) for v in value["__tuple__"])
    if "__dict__" in value:
        return {k: _decode(v, custom_objects) for k, v in value["__dict__"].items()}
    if "__metric__" in value:
        return metrics.deserialize(value["__metric__"], custom_objects)
    if "__loss__" in value:
        return losses.deserialize(value["__loss__"], custom_objects)
    if "__layer__" in value:
        return _layer_from_config(value["__layer__"], custom_objects)
    if "__initializer__" in value:
        cls = getattr(initializers, value["__initializer__"], None) or (custom_objects or {}).get(
            value["__initializer__"]
        )
        return cls(**value["config"])
    if "__regularizer__" in value:
        return regularizers.L1L2(**value["__regularizer__"])
    if "__constraint__" in value:
        cls = getattr(constraints, value["__constraint__"], None) or (custom_objects or {}).get(
            value["__constraint__"]
        )
        return cls(**value["config"])
    if "__function__" in value:
        return _function(value["__function__"], custom_objects)
    raise ValueError(f"Unknown entry in a saved model config: {value!r}")


def _function(name, custom_objects):

    if custom_objects and name in custom_objects:
        return custom_objects[name]
    for module in (activations, losses):
        fn = getattr(module, name, None)
        if callable(fn):
            return fn
    raise ValueError(f"Unknown function {name!r} in a saved model: pass it in custom_objects.")


def _layer_config(layer):
    if isinstance(layer, Model):
        return {"class_name": type(layer).__name__, "model": model_to_config(layer)}
    args, kwargs = layer.__dict__.get("_init_call", ((), {}))
    kwargs = dict(kwargs, name=layer.name)
    return {
        "class_name": type(layer).__name__,
        "args": _encode(list(args)),
        "kwargs": _encode(kwargs),
    }


def _layer_from_config(config, custom_objects):
    if "model" in config:
        return model_from_config(config["model"], custom_objects)
    classes = _layer_classes(custom_objects)
    cls = classes.get(config["class_name"])
    if cls is None:
        raise ValueError(
            f"Unknown layer: {config['class_name']}. Pass custom layer classes in custom_objects."
        )
    kwargs = _decode(config["kwargs"], custom_objects)
    return cls(
        *_decode(config["args"], custom_objects),
        **kwargs["__dict__"] if "__dict__" in kwargs else kwargs,
    )


def model_to_config(model):
    """The JSON-ready description of a Sequential or functional `model`."""
    if isinstance(model, Sequential):
        batch_shape = dtype = None
        if model.inputs is not None:
            batch_shape = model.inputs[0].get_shape().as_list()
            dtype = model.inputs[0].dtype.base_dtype.name
        return {
            "class_name": "Sequential",
            "name": model.name,
            "input_shape": batch_shape,
            "input_dtype": dtype,
            "layers": [_layer_config(layer) for layer in model.layers],
        }
    if not model._nodes:
        raise ValueError(
            f'Model "{model.name}" is a subclassed model; only Sequential and '
            "functional models can be saved (use save_weights)."
        )
    layers = model.layers
    producers = {}
    for i, node in enumerate(model._nodes):
        for j, tensor in enumerate(node.output_tensors):
            producers[tensor] = (i, j)
    calls = []
    for node in model._nodes:
        if isinstance(node.layer, InputLayer):
            calls.append({"layer": layers.index(node.layer), "inputs": None})
            continue
        refs = [list(producers[t]) for t in node.input_tensors]
        calls.append(
            {
                "layer": layers.index(node.layer),
                "inputs": refs,
                "list_input": isinstance(node.inputs, list),
                "kwargs": _encode(dict(node.kwargs)),
            }
        )
    return {
        "class_name": "Model",
        "name": model.name,
        "layers": [_layer_config(layer) for layer in layers],
        "calls": calls,
        "inputs": [list(producers[t]) for t in model.inputs],
        "outputs": [list(producers[t]) for t in model.outputs],
        "single_output": model._single_output,
        "single_input": model._single_input,
    }


def model_from_config(config, custom_objects=None, layers=None):
    """Builds a new model (fresh weights) from `model_to_config` output (`layers`: the layer
    objects to use instead of building them from their configs, in config order)."""
    if layers is not None and len(layers) != len(config["layers"]):
        raise ValueError(f"model_from_config: {len(layers)} layers given for a config of "
                         f"{len(config['layers'])}")
    if config["class_name"] == "Sequential":
        model = Sequential(name=config["name"])
        if config["input_shape"] is not None:

            model._start(
                Input(batch_shape=tuple(config["input_shape"]), dtype=config["input_dtype"])
            )
        for i, layer_config in enumerate(config["layers"]):
            model.add(layers[i] if layers is not None
                      else _layer_from_config(layer_config, custom_objects))
        return model
    if layers is None:
        layers = [_layer_from_config(c, custom_objects) for c in config["layers"]]
    outputs_of = []
    for call in config["calls"]:
        layer = layers[call["layer"]]
        if call["inputs"] is None:
            outputs_of.append([layer._inbound_nodes[0].outputs])
            continue
        tensors = [outputs_of[i][j] for i, j in call["inputs"]]
        kwargs = _decode(call["kwargs"], custom_objects)
        kwargs = kwargs.get("__dict__", kwargs)
        result = layer(tensors if call["list_input"] else tensors[0], **kwargs)
        outputs_of.append(list(result) if isinstance(result, (list, tuple)) else [result])
    inputs = [outputs_of[i][j] for i, j in config["inputs"]]
    outputs = [outputs_of[i][j] for i, j in config["outputs"]]
    return Model(
        inputs if not config["single_input"] else inputs[0],
        outputs if not config["single_output"] else outputs[0],
        name=config["name"],
    )


def _training_config(model):
    optimizer = model.optimizer
    if not getattr(model, "_compiled", False) or not isinstance(optimizer, optimizers.Optimizer):
        return None
    try:
        return {
            "optimizer": {"class_name": type(optimizer).__name__, "config": optimizer.get_config()},
            "loss": _encode(model._loss_spec),
            "metrics": _encode(model._metric_spec),
            "loss_weights": _encode(model._loss_weights),
        }
    except ValueError:
        return None


def save_model(model, filepath, overwrite=True, include_optimizer=True, save_format=None):
    """Writes `model`'s description, compile settings and weights to `filepath` (npz)."""

    if not overwrite and gfile.Exists(filepath):
        raise ValueError(f"save_model: {filepath} exists and overwrite=False.")
    config = {
        "model": model_to_config(model),
        "training": _training_config(model) if include_optimizer else None,
    }
    arrays = {"config": np.frombuffer(json.dumps(config).encode("utf-8"), dtype=np.uint8)}
    for i, value in enumerate(model.get_weights()):
        arrays[f"weight_{i}"] = value
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    with open(filepath, "wb") as handle:
        handle.write(buffer.getvalue())


def load_model(filepath, custom_objects=None, compile=True):  # noqa: A002
    """The model saved at `filepath`, with its weights (and compiled, if it was)."""
    with np.load(filepath, allow_pickle=False) as archive:
        config = json.loads(archive["config"].tobytes().decode("utf-8"))
        count = sum(1 for key in archive.files if key.startswith("weight_"))
        weights = [archive[f"weight_{i}"] for i in range(count)]
    model = model_from_config(config["model"], custom_objects)
    model.set_weights(weights)
    training = config.get("training")
    if compile and training is not None:
        opt = training["optimizer"]
        model.compile(
            getattr(optimizers, opt["class_name"])(**opt["config"]),
            loss=_decode(training["loss"], custom_objects),
            metrics=_decode(training["metrics"], custom_objects),
            loss_weights=_decode(training["loss_weights"], custom_objects),
        )
    return model


def clone_model(model, input_tensors=None, clone_function=None):
    """A new model of the same architecture with new layers (fresh weights).

    Args:
        model: a Sequential or functional model.
        input_tensors: Keras input tensors to build the clone on (default: new inputs).
        clone_function: makes each new layer from the old one (default: the layer class
            rebuilt from `layer.get_config()`); input layers are always rebuilt.

    Raises:
        ValueError: a subclassed model (it has no architecture to rebuild).
    """
    config = model_to_config(model)
    layers = None
    if clone_function is not None:
        layers = [_layer_from_config(c, None) if isinstance(old, InputLayer)
                  else clone_function(old) for c, old in zip(config["layers"], model.layers)]
    cloned = model_from_config(config, layers=layers)
    if input_tensors is None:
        return cloned
    inputs = input_tensors if isinstance(input_tensors, (list, tuple)) else [input_tensors]
    outputs = cloned(list(inputs) if len(inputs) > 1 else inputs[0])
    return Model(list(inputs) if len(inputs) > 1 else inputs[0], outputs, name=model.name)


def model_from_yaml(yaml_string, custom_objects=None):
    """A new model (fresh weights) from `Model.to_yaml()` output.

    Raises:
        ImportError: PyYAML is not installed.
    """
    try:
        import yaml
    except ImportError:
        raise ImportError("Requires yaml module installed (`pip install pyyaml`).") from None
    return model_from_config(yaml.safe_load(yaml_string), custom_objects)


def model_from_json(json_string, custom_objects=None):
    """A new model (fresh weights) from `Model.to_json()` output."""
    return model_from_config(json.loads(json_string), custom_objects)
