"""Checkpoint dependencies of Keras layers and models (what `tf.train.Checkpoint` and
`save_weights` in the TF format walk).

As in TF 1.x Keras: a layer depends on its weights and sublayers by attribute name
("kernel", "bias", "cell", "d1"), weights not held in an attribute by their own name; a
functional or Sequential model depends on its layers as "layer_with_weights-<i>" (the i-th
layer that has weights) and "layer-<j>" (every layer).
"""

from __future__ import annotations

from tensorflux.ops.state.variables import Variable

__all__ = ["layer_dependencies", "network_dependencies"]


def _is_layer(value) -> bool:
    return hasattr(value, "_trainable_weights") and hasattr(value, "add_weight")


def _is_optimizer(value) -> bool:
    """A Keras optimizer (a compiled model's `optimizer`) or a `tf.train` optimizer."""
    return callable(getattr(value, "get_slot", None)) and hasattr(value, "get_slot_names")


def layer_dependencies(layer) -> list:
    """`(name, object)` for the public attributes of `layer` holding a variable, a layer, an
    optimizer (a compiled model's "optimizer") or a list of layers, then its remaining
    weights by name."""
    found, seen = [], set()
    for name, value in list(vars(layer).items()):
        if name.startswith("_"):
            continue
        if isinstance(value, Variable) or _is_layer(value) or _is_optimizer(value):
            found.append((name, value))
            seen.add(id(value))
        elif isinstance(value, (list, tuple)) and value and all(_is_layer(v) for v in value):
            found.append((name, list(value)))
            seen.update(id(v) for v in value)
    names = {name for name, _ in found}
    for var in list(layer._trainable_weights) + list(layer._non_trainable_weights):
        if id(var) in seen:
            continue
        name = var.op.name.rsplit("/", 1)[-1]
        while name in names:
            name += "_"
        names.add(name)
        found.append((name, var))
        seen.add(id(var))
    return found


def network_dependencies(model, layers) -> list:
    """A functional/Sequential model's layers as "layer_with_weights-<i>" then "layer-<j>",
    followed by its own attributes."""
    found = []
    weighted = [layer for layer in layers if layer.weights]
    found += [(f"layer_with_weights-{i}", layer) for i, layer in enumerate(weighted)]
    found += [(f"layer-{j}", layer) for j, layer in enumerate(layers)]
    taken = {id(layer) for layer in layers}
    found += [(n, v) for n, v in layer_dependencies(model) if id(v) not in taken]
    return found
