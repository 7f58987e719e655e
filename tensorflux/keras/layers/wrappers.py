"""Keras layer wrappers: TimeDistributed and Bidirectional."""

from __future__ import annotations

import copy

from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.keras.layers import recurrent_cells
from tensorflux.ops import array as array_ops

__all__ = ["TimeDistributed", "Bidirectional", "Wrapper"]


class Wrapper(Layer):
    """Base of layers that wrap another layer (`self.layer`): its weights, updates and losses
    are the wrapper's; `build` builds the wrapped layer on the same input shape."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `{type(self).__name__}` layer with a Keras "
                             f"layer instance. Received: {layer!r}")
        super().__init__(**kwargs)
        self.layer = layer

    def _sublayers(self):
        return [self.layer]

    def build(self, input_shape=None):
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True
        self.built = True

    def get_config(self):
        config = super().get_config()
        config["layer"] = {"class_name": type(self.layer).__name__,
                           "config": self.layer.get_config()}
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from tensorflux.keras.layers import serialization  # cycle: serialization imports this

        config = dict(config)
        config["layer"] = serialization.deserialize(config["layer"], custom_objects)
        return cls(**config)


class TimeDistributed(Layer):
    """Applies `layer` to every time step of [batch, time, ...]."""

    supports_masking = True

    def __init__(self, layer, **kwargs):
        super().__init__(**kwargs)
        self.layer = layer
        self.input_spec = InputSpec(min_ndim=3)

    def _sublayers(self):
        return [self.layer]

    def build(self, input_shape):
        if not self.layer.built:
            self.layer.build((input_shape[0], *input_shape[2:]))
            self.layer.built = True
        self.built = True

    def call(self, inputs, training=None):
        dims = inputs.get_shape().as_list()
        flat = (
            array_ops.reshape(inputs, [-1, *dims[2:]])
            if None not in dims[2:]
            else array_ops.reshape(inputs, array_ops.concat([[-1], array_ops.shape(inputs)[2:]], 0))
        )
        kwargs = {"training": training} if training is not None else {}
        outputs = self.layer(flat, **kwargs)
        tail = outputs.get_shape().as_list()[1:]
        steps = dims[1] if dims[1] is not None else array_ops.shape(inputs)[1]
        result = array_ops.reshape(
            outputs,
            array_ops.concat([[-1, steps], array_ops.shape(outputs)[1:]], 0)
            if None in tail or not isinstance(steps, int)
            else [-1, steps, *tail],
        )
        result.set_shape([dims[0], dims[1], *tail])
        return result


class Bidirectional(Layer):
    """Runs a recurrent `layer` forwards and a copy backwards; merges by `merge_mode`."""

    def __init__(self, layer, merge_mode="concat", backward_layer=None, **kwargs):
        if merge_mode not in ("concat", "sum", "mul", "ave", None):
            raise ValueError(
                f"Invalid merge mode. Received: {merge_mode}. Merge mode should be "
                "one of {'sum', 'mul', 'ave', 'concat', None}"
            )
        super().__init__(**kwargs)
        self.forward_layer = self._renamed(layer, "forward_" + layer.name, layer.go_backwards)
        source = backward_layer if backward_layer is not None else layer
        self.backward_layer = self._renamed(
            source,
            "backward_" + source.name,
            not layer.go_backwards if backward_layer is None else source.go_backwards,
        )
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state

    @staticmethod
    def _renamed(layer, name, go_backwards):
        clone = copy.copy(layer)
        clone._name = name
        clone.go_backwards = go_backwards
        clone.built = False
        clone._trainable_weights, clone._non_trainable_weights = [], []
        clone._updates, clone._losses, clone._inbound_nodes = [], [], []
        if getattr(layer, "cell", None) is not None:  # RNN(cell): its own cell weights
            clone.cell = recurrent_cells.fresh_cell(layer.cell)
        return clone

    def _sublayers(self):
        return [self.forward_layer, self.backward_layer]

    supports_masking = True

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, list):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            count = 2 * self.forward_layer.state_count
            return [output_mask] + [None] * count
        return output_mask

    def call(self, inputs):
        forward = self.forward_layer(inputs)
        backward = self.backward_layer(inputs)
        states = []
        if self.return_state:
            forward, *f_states = forward
            backward, *b_states = backward
            states = f_states + b_states
        if self.return_sequences:
            backward = array_ops.reverse(backward, [1])
        if self.merge_mode == "concat":
            output = array_ops.concat([forward, backward], axis=-1)
        elif self.merge_mode == "sum":
            output = forward + backward
        elif self.merge_mode == "mul":
            output = forward * backward
        elif self.merge_mode == "ave":
            output = (forward + backward) / 2.0
        else:
            output = [forward, backward]
        if self.return_state:
            return (output if isinstance(output, list) else [output]) + states
        return output
