"""`tf.contrib.estimator.RNNClassifier` and `RNNEstimator` (TF 1.15): an RNN over sequence
feature columns, its last output (or every output, with return_sequences) fed to a dense
logits layer and a head.

Variables follow TF: `rnn/sequence_input_layer/...`, the cell under `rnn/rnn/<cell>/...`, and
`rnn/logits/dense/{kernel,bias}`. Context (non-sequence) features are tiled along time and
concatenated to the sequence input.
"""

from __future__ import annotations

from tensorflux import losses as losses_lib
from tensorflux import summary as summary_lib
from tensorflux.estimator.canned.head import BinaryClassHead, MultiClassHead
from tensorflux.estimator.canned.optimizers import get_optimizer_instance
from tensorflux.estimator.estimator import Estimator
from tensorflux.feature_column.dense import input_layer
from tensorflux.feature_column.sequence import sequence_input_layer
from tensorflux.framework import dtypes
from tensorflux.layers import core as core_layers
from tensorflux.layers import rnn_cell
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import rnn
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope
from tensorflux.train import training_util

__all__ = ["RNNClassifier", "RNNEstimator"]

_LEARNING_RATE = 0.05
_CELL_TYPES = {"basic_rnn": rnn_cell.BasicRNNCell, "lstm": rnn_cell.BasicLSTMCell,
               "gru": rnn_cell.GRUCell}
USE_DEFAULT = object()


def _rnn_cell_fn(num_units, cell_type, rnn_cell_fn):
    """The `rnn_cell_fn(mode)` to use (given, or built from num_units and cell_type)."""
    if rnn_cell_fn is not None:
        if num_units is not None or cell_type is not USE_DEFAULT:
            raise ValueError("num_units and cell_type must not be specified when using "
                             "rnn_cell_fn")
        return rnn_cell_fn
    if not num_units:
        raise ValueError("num_units must be a non-empty list of ints when rnn_cell_fn is None")
    cell_type = "basic_rnn" if cell_type is USE_DEFAULT else cell_type
    if isinstance(cell_type, str):
        if cell_type not in _CELL_TYPES:
            raise ValueError(f"cell_type must be one of {sorted(_CELL_TYPES)} or an RNNCell "
                             f"class, got {cell_type!r}")
        cell_type = _CELL_TYPES[cell_type]

    def make_cells(mode):
        del mode
        cells = [cell_type(n) for n in num_units]
        return cells[0] if len(cells) == 1 else rnn_cell.MultiRNNCell(cells)

    return make_cells


def _with_context(sequence_input, context_input):
    """[batch, T, d + c]: the context tiled along time after the sequence features."""
    steps = array_ops.shape(sequence_input)[1]
    tiled = array_ops.tile(array_ops.expand_dims(context_input, 1),
                           array_ops.stack([1, steps, 1]))
    return array_ops.concat([sequence_input, tiled], 2)


def _last_activations(activations, sequence_length):
    """[batch, units]: each sequence's output at its last step."""
    shape = array_ops.shape(activations)
    batch, steps, units = shape[0], shape[1], shape[2]
    starts = math_ops.range(batch) * steps
    last = starts + math_ops.cast(sequence_length, dtypes.int32) - 1
    flat = array_ops.reshape(activations, array_ops.stack([batch * steps, units]))
    out = array_ops.gather(flat, last)
    out.set_shape([activations.shape._dim_list[0], activations.shape._dim_list[2]])
    return out


def _rnn_model_fn(features, labels, mode, head, rnn_cell_fn, sequence_feature_columns,
                  context_feature_columns, return_sequences, optimizer):
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: "
                         f"{type(features)}")
    optimizer = get_optimizer_instance(optimizer, learning_rate=_LEARNING_RATE)
    with variable_scope.variable_scope("rnn"):
        with variable_scope.variable_scope("sequence_input_layer"):
            sequence_input, sequence_length = sequence_input_layer(
                features=features, feature_columns=sequence_feature_columns)
            summary_lib.histogram("sequence_length", sequence_length)
            if context_feature_columns:
                context = input_layer(features=features, feature_columns=context_feature_columns)
                sequence_input = _with_context(sequence_input, context)
        outputs, _ = rnn.dynamic_rnn(rnn_cell_fn(mode), sequence_input,
                                     sequence_length=sequence_length, dtype=dtypes.float32)
        if not return_sequences:
            outputs = _last_activations(outputs, sequence_length)
        with variable_scope.variable_scope("logits"):
            logits = core_layers.dense(outputs, units=head.logits_dimension,
                                       kernel_initializer=init_ops.glorot_uniform_initializer())

    def train_op_fn(loss):
        return optimizer.minimize(loss, global_step=training_util.get_global_step())

    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn=train_op_fn)


class RNNEstimator(Estimator):
    """An RNN over sequence feature columns with a user-given head.

    Raises:
        ValueError: both rnn_cell_fn and num_units/cell_type, neither, or an unknown cell_type.
    """

    def __init__(self, head, sequence_feature_columns, context_feature_columns=None,
                 num_units=None, cell_type=USE_DEFAULT, rnn_cell_fn=None,
                 return_sequences=False, model_dir=None, optimizer="Adagrad",
                 input_layer_partitioner=None, config=None):
        del input_layer_partitioner  # one process, no partitioned variables
        cell_fn = _rnn_cell_fn(num_units, cell_type, rnn_cell_fn)

        def _model_fn(features, labels, mode, config):
            return _rnn_model_fn(features, labels, mode, head, cell_fn, sequence_feature_columns,
                                 context_feature_columns, return_sequences, optimizer)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config)


class RNNClassifier(Estimator):
    """An RNN classifier over sequence feature columns (binary or multi-class head).

    Raises:
        ValueError: bad cell arguments, n_classes < 2, or a bad label vocabulary.
    """

    def __init__(self, sequence_feature_columns, context_feature_columns=None, num_units=None,
                 cell_type=USE_DEFAULT, rnn_cell_fn=None, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 loss_reduction=losses_lib.Reduction.SUM_OVER_BATCH_SIZE,
                 input_layer_partitioner=None, config=None, warm_start_from=None):
        del input_layer_partitioner  # one process, no partitioned variables
        if n_classes == 2:
            head = BinaryClassHead(weight_column=weight_column,
                                   label_vocabulary=label_vocabulary,
                                   loss_reduction=loss_reduction)
        else:
            head = MultiClassHead(n_classes, weight_column=weight_column,
                                  label_vocabulary=label_vocabulary,
                                  loss_reduction=loss_reduction)
        cell_fn = _rnn_cell_fn(num_units, cell_type, rnn_cell_fn)

        def _model_fn(features, labels, mode, config):
            return _rnn_model_fn(features, labels, mode, head, cell_fn, sequence_feature_columns,
                                 context_feature_columns, False, optimizer)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)
