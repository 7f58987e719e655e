"""`tf.contrib.seq2seq.BasicDecoder`: a cell, a helper and an optional output layer."""

from __future__ import annotations

import collections

from tensorflux.contrib.seq2seq.decoder import Decoder
from tensorflux.contrib.seq2seq.helper import Helper
from tensorflux.framework import nest, scopes
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.layers.core import Layer

__all__ = ["BasicDecoderOutput", "BasicDecoder"]


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput",
                                                ("rnn_output", "sample_id"))):
    """Per step: the (projected) cell output and the sampled id."""

    __slots__ = ()


def output_layer_size(output_layer, size):
    """The per-example output size of `output_layer` applied to outputs of `size`."""
    if output_layer is None:
        return size
    units = getattr(output_layer, "units", None)
    if units is not None:
        return nest.map_structure(lambda _: TensorShape([units]), size)
    if hasattr(output_layer, "compute_output_shape"):
        return nest.map_structure(
            lambda s: TensorShape(output_layer.compute_output_shape(
                TensorShape([None]).concatenate(TensorShape(s))))[1:], size)
    raise TypeError(f"Cannot infer the output size of {type(output_layer).__name__}")


def check_cell_and_layer(cell, output_layer):
    if not callable(cell) or not hasattr(cell, "output_size"):
        raise TypeError(f"cell must be an RNNCell, received: {type(cell)}")
    if output_layer is not None and not isinstance(output_layer, Layer):
        raise TypeError(f"output_layer must be a Layer, received: {type(output_layer)}")


class BasicDecoder(Decoder):
    """Each step: `cell(inputs, state)`, `output_layer` on its output, then the helper samples
    ids and chooses the next inputs."""

    def __init__(self, cell, helper, initial_state, output_layer=None):
        check_cell_and_layer(cell, output_layer)
        if not isinstance(helper, Helper):
            raise TypeError(f"helper must be a Helper, received: {type(helper)}")
        self._cell = cell
        self._helper = helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    @property
    def batch_size(self):
        return self._helper.batch_size

    @property
    def output_size(self):
        return BasicDecoderOutput(
            rnn_output=output_layer_size(self._output_layer, self._cell.output_size),
            sample_id=self._helper.sample_ids_shape)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_state)[0].dtype
        return BasicDecoderOutput(
            nest.map_structure(lambda _: dtype, self.output_size.rnn_output),
            self._helper.sample_ids_dtype)

    def initialize(self, name=None):
        """(finished, first inputs, initial state)."""
        return self._helper.initialize() + (self._initial_state,)

    def step(self, time, inputs, state, name=None):
        """(BasicDecoderOutput, next_state, next_inputs, finished)."""
        with scopes.name_scope(name, "BasicDecoderStep", (time, inputs, state)):
            cell_outputs, cell_state = self._cell(inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper.sample(time=time, outputs=cell_outputs, state=cell_state)
            finished, next_inputs, next_state = self._helper.next_inputs(
                time=time, outputs=cell_outputs, state=cell_state, sample_ids=sample_ids)
        return BasicDecoderOutput(cell_outputs, sample_ids), next_state, next_inputs, finished
