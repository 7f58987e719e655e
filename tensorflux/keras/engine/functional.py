"""Keras models as layer graphs: functional `Model(inputs, outputs)` and `Sequential`.

A functional model walks the recorded layer calls (nodes) back from its outputs to its
inputs; calling it on new tensors replays those nodes in order. `Sequential` is a list of
layers applied in turn, built from its first layer's `input_shape` or, lazily, from the first
data or tensor it sees.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import graph as graph2
from tensorflux.framework import tensor_conversion
from tensorflux.keras.engine import tracking as layer_tracking
from tensorflux.keras.engine.base_layer import Layer, _unique, flatten, keras_history
from tensorflux.keras.engine.input_layer import Input, InputLayer
from tensorflux.keras.engine.training import TrainingMixin

__all__ = ["Model", "Sequential"]


def _walk(outputs, inputs):
    """The nodes between `inputs` and `outputs` in call order."""
    input_set = set(inputs)
    order, seen = [], set()

    def visit(tensor, path):
        history = keras_history(tensor)
        if history is None:
            raise ValueError(
                f"Output tensors of a functional Model must be the output of a "
                f"Keras layer; {tensor.name} is not."
            )
        node = history[0]
        if id(node) in seen:
            return
        if tensor not in input_set:
            if not node.input_tensors:
                raise ValueError(
                    f"Graph disconnected: cannot obtain the value of tensor "
                    f'{tensor.name} at layer "{node.layer.name}" from the model '
                    f"inputs {[t.name for t in inputs]}."
                )
            for t in node.input_tensors:
                visit(t, path)
        seen.add(id(node))
        order.append(node)

    for out in outputs:
        visit(out, ())
    return order


class Model(TrainingMixin, Layer):
    """A functional model: `Model(inputs, outputs)` over Keras tensors (from `Input`)."""

    def __init__(self, inputs=None, outputs=None, name=None, trainable=True, **kwargs):
        Layer.__init__(self, name=name, trainable=trainable, **kwargs)
        self._init_training()
        self._nodes: list = []
        self.inputs = self.outputs = None
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("Model: give both `inputs` and `outputs`.")
            self._init_graph(inputs, outputs)

    def _init_graph(self, inputs, outputs):
        self._single_input = not isinstance(inputs, (list, tuple, dict))
        self._single_output = not isinstance(outputs, (list, tuple))
        self.inputs = flatten(inputs)
        self.outputs = flatten(outputs)
        for tensor in self.inputs:
            history = keras_history(tensor)
            if history is None or not isinstance(history[0].layer, InputLayer):
                raise ValueError(
                    f"Model inputs must come from `tf.keras.Input`; {tensor.name} does not."
                )
        self._nodes = _walk(self.outputs, self.inputs)
        self.built = True

    def __setattr__(self, name, value):
        if isinstance(value, Layer) and not name.startswith("_"):
            self.__dict__.setdefault("_tracked", []).append(value)
        super().__setattr__(name, value)

    @property
    def layers(self):
        if type(self).call is not Model.call and not isinstance(self, Sequential):
            return _unique(list(self.__dict__.get("_tracked", [])))
        return _unique([node.layer for node in self._nodes])

    def _build_input(self, batch_shape, dtype):
        """Subclassed models: a placeholder for `batch_shape` and the model's outputs on it."""
        with graph2.get_default_graph().name_scope(None):
            tensor = Input(batch_shape=(None, *batch_shape[1:]), dtype=dtype)
        output = self(tensor)
        self.inputs = [tensor]
        self.outputs = flatten(output)
        self._single_input = True
        self._single_output = not isinstance(output, (list, tuple))

    def _ends(self, tensors, single, what):
        if tensors is None:
            raise AttributeError(f'Model "{self.name}" has no {what} yet: it is not built.')
        return tensors[0] if single else list(tensors)

    @property
    def input(self):
        """The model's input placeholder (a list for several inputs)."""
        return self._ends(self.inputs, getattr(self, "_single_input", True), "input")

    @property
    def output(self):
        """The model's output tensor (a list for several outputs)."""
        return self._ends(self.outputs, getattr(self, "_single_output", True), "output")

    def _sublayers(self):
        return self.layers

    @property
    def _checkpoint_dependencies(self):
        if type(self).call is not Model.call and not isinstance(self, Sequential):
            return layer_tracking.layer_dependencies(self)
        return layer_tracking.network_dependencies(self, self.layers)

    @property
    def updates(self):
        if not self._nodes:
            return Layer.updates.fget(self)
        return _unique([u for node in self._nodes for u in node.updates] + list(self._updates))

    @property
    def losses(self):
        if not self._nodes:
            return Layer.losses.fget(self)
        losses = []
        for layer in self.layers:
            losses += [loss for loss in layer.losses if not _is_activity_loss(layer, loss)]
        losses += [loss for node in self._nodes for loss in node.losses]
        return _unique(losses + list(self._losses))

    def get_layer(self, name=None, index=None):
        """The layer called `name`, or at position `index`."""
        if index is not None:
            if not 0 <= index < len(self.layers):
                raise ValueError(
                    f"Was asked to retrieve layer at index {index} but model only "
                    f"has {len(self.layers)} layers."
                )
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(
            f"No such layer: {name}. Existing layers are: {[layer.name for layer in self.layers]}."
        )

    def call(self, inputs, training=None):
        new_inputs = flatten(inputs)
        if len(new_inputs) != len(self.inputs):
            raise ValueError(
                f'Model "{self.name}" expects {len(self.inputs)} input(s), but it '
                f"received {len(new_inputs)} input tensors."
            )
        if all(a is b for a, b in zip(new_inputs, self.inputs)):
            outputs = self.outputs
        else:
            values = dict(zip(self.inputs, new_inputs))
            for node in self._nodes:
                if isinstance(node.layer, InputLayer):
                    continue
                args = node.inputs
                mapped = [values[t] for t in args] if isinstance(args, list) else values[args]
                kwargs = dict(node.kwargs)
                extra = kwargs.pop("args", ())
                if training is not None and "training" in kwargs:
                    kwargs["training"] = training
                result = node.layer(mapped, *extra, **kwargs)
                for old, new in zip(node.output_tensors, flatten(result)):
                    values[old] = new
            outputs = [values[t] for t in self.outputs]
        return outputs[0] if self._single_output else list(outputs)

    def _assert_input_compatibility(self, inputs):
        if self.inputs is None:
            return
        for i, (spec, tensor) in enumerate(zip(self.inputs, flatten(inputs))):
            want, got = spec.get_shape(), tensor.get_shape()
            if not want.is_compatible_with(got):
                raise ValueError(
                    f'Input {i} of layer "{self.name}" is incompatible with the '
                    f"layer: expected shape={tuple(want.as_list())}, found "
                    f"shape={tuple(got.as_list())}"
                )


def _is_activity_loss(layer, loss):
    return any(loss in node.losses for node in layer._inbound_nodes)


class Sequential(Model):
    """A linear stack of layers; `add` appends one."""

    def __init__(self, layers=None, name=None):
        Model.__init__(self, name=name)
        self._stack: list = []
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self):
        return list(self._stack)

    def add(self, layer):
        """Appends `layer`, building its weights now if the model's input shape is known."""
        if not isinstance(layer, Layer):
            raise TypeError(
                f"The added layer must be an instance of class Layer. Received: "
                f"layer={layer!r} of type {type(layer)}."
            )
        if isinstance(layer, InputLayer):
            if self._stack or self.inputs is not None:
                raise ValueError("An InputLayer can only be the first layer of a Sequential.")
            self._start(layer._inbound_nodes[0].outputs)
            return
        if any(layer.name == other.name for other in self._stack):
            raise ValueError(
                f"All layers added to a Sequential model should have unique names. "
                f'Name "{layer.name}" is already the name of a layer in this model.'
            )
        if self.inputs is None and not self._stack and layer._batch_input_shape is not None:
            self._start(
                Input(
                    batch_shape=layer._batch_input_shape,
                    dtype=layer.dtype,
                    name=f"{layer.name}_input",
                )
            )
        if self.outputs is not None:
            output = layer(self.outputs[0])
            if isinstance(output, (list, tuple)):
                raise TypeError(
                    "All layers in a Sequential model should have a single output "
                    f'tensor; layer "{layer.name}" returns {len(output)}.'
                )
            self._stack.append(layer)
            self._set_output(output)
        else:
            self._stack.append(layer)

    def pop(self):
        if not self._stack:
            raise TypeError("There are no layers in the model.")
        self._stack.pop()
        output = self.inputs[0] if self.inputs is not None else None
        if output is not None:
            for layer in self._stack:
                output = layer(output)
            self._set_output(output)

    def _start(self, tensor):
        self.inputs = [tensor]
        self.outputs = [tensor]
        self._single_input = self._single_output = True
        self.built = True

    def _set_output(self, output):
        self.outputs = [output]
        self._nodes = _walk(self.outputs, self.inputs)

    def build(self, input_shape=None):
        """Creates the input placeholder for `input_shape` (batch first) and the weights."""
        if self.inputs is None:
            if input_shape is None:
                raise ValueError("You must provide an `input_shape` argument.")
            self._build_input(tuple(input_shape), None)
        self.built = True

    def _build_dict_input(self, arrays):
        """Inputs named by the keys of a dict of feature arrays (for a first layer taking a
        dict, such as DenseFeatures); the stack is applied to the dict of them."""
        graph = graph2.get_default_graph()
        inputs = {}
        with graph.name_scope(None):
            for key in sorted(arrays):
                array = np.asarray(arrays[key])
                dtype = "string" if array.dtype.kind in "SUO" else array.dtype.name
                inputs[key] = Input(batch_shape=(None, *array.shape[1:]), dtype=dtype,
                                    name=key)
        self.inputs = [inputs[key] for key in sorted(inputs)]
        self._single_input, self._single_output = False, True
        self.built = True
        output = inputs
        with graph.name_scope(None):
            for layer in self._stack:
                output = layer(output)
        self._set_output(output)

    def _build_input(self, batch_shape, dtype):
        graph = graph2.get_default_graph()
        with graph.name_scope(None):
            self._start(Input(batch_shape=(None, *batch_shape[1:]), dtype=dtype))
        output = self.inputs[0]
        with graph.name_scope(None):
            for layer in self._stack:
                output = layer(output)
        self._set_output(output)

    def __call__(self, inputs, *args, **kwargs):
        if self.inputs is None and not isinstance(inputs, (list, tuple)):
            tensor = tensor_conversion.convert_to_tensor(inputs)
            self._build_input(tuple(tensor.get_shape().as_list()), tensor.dtype.base_dtype.name)
        return Model.__call__(self, inputs, *args, **kwargs)

    def call(self, inputs, training=None):
        if self.inputs is not None and inputs is self.inputs[0]:
            return self.outputs[0]
        output = inputs
        for layer in self._stack:
            kwargs = {}
            if training is not None and "training" in layer.call.__code__.co_varnames:
                kwargs["training"] = training
            output = layer(output, **kwargs)
        return output
