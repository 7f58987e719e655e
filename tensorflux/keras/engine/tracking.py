"""Checkpoint dependencies of Keras layers and models (what `tf.train.Checkpoint` and
`save_weights` in the TF format walk).

As in TF 1.x Keras: a layer depends on its weights and sublayers by attribute name
("kernel", "bias", "cell", "d1"), weights not held in an attribute by their own name; a
functional or Sequential model depends on its layers as "layer_with_weights-<i>" (the i-th
layer that has weights) and "layer-<j>" (every layer).
"""

from __future__ import annotations

from tensorflux.train.tracking import graph_view

__all__ = ["layer_dependencies", "network_dependencies"]


def layer_dependencies(layer) -> list:
    """`(name, object)` for the public attributes of `layer` holding a variable, a layer, an
    optimizer (a compiled model's "optimizer") or a list of layers, then its remaining
    weights by name."""
    return graph_view.attribute_dependencies(layer)


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
