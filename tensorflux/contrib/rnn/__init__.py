"""`tf.contrib.rnn`: the core RNN cells and static RNNs, plus contrib's block cells,
layer-normalized LSTM, attention cell wrapper, projection/embedding wrappers and stacked
bidirectional RNNs."""

from tensorflux.contrib.rnn.conv_lstm import (Conv1DLSTMCell, Conv2DLSTMCell, Conv3DLSTMCell,
                                              ConvLSTMCell)
from tensorflux.contrib.rnn.core_rnn_cell import (DeviceWrapper, EmbeddingWrapper, HighwayWrapper,
                                                  InputProjectionWrapper,
                                                  OutputProjectionWrapper)
from tensorflux.contrib.rnn.fused_rnn_cell import (FusedRNNCell, FusedRNNCellAdaptor,
                                                   TimeReversedFusedRNN)
from tensorflux.contrib.rnn.lstm_ops import (GRUBlockCell, GRUBlockCellV2, LSTMBlockCell,
                                             LSTMBlockFusedCell)
from tensorflux.contrib.rnn.rnn_cell import (AttentionCellWrapper, CoupledInputForgetGateLSTMCell,
                                             IntersectionRNNCell, LayerNormBasicLSTMCell,
                                             NASCell, UGRNNCell)
from tensorflux.contrib.rnn.state_saving_rnn import static_state_saving_rnn
from tensorflux.contrib.rnn.stacked_rnn import (stack_bidirectional_dynamic_rnn,
                                                stack_bidirectional_rnn)
from tensorflux.ops.rnn_cell_impl import (BasicLSTMCell, BasicRNNCell, DropoutWrapper, GRUCell,
                                          LSTMCell, LSTMStateTuple, MultiRNNCell, RNNCell,
                                          ResidualWrapper, static_bidirectional_rnn,
                                          static_rnn)

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
           "DropoutWrapper", "ResidualWrapper", "DeviceWrapper", "LSTMStateTuple",
           "static_rnn", "static_bidirectional_rnn", "stack_bidirectional_rnn",
           "stack_bidirectional_dynamic_rnn", "LSTMBlockCell", "LSTMBlockFusedCell",
           "LayerNormBasicLSTMCell", "AttentionCellWrapper", "GRUBlockCell", "GRUBlockCellV2",
           "OutputProjectionWrapper", "InputProjectionWrapper", "EmbeddingWrapper",
           "CoupledInputForgetGateLSTMCell", "UGRNNCell", "IntersectionRNNCell", "ConvLSTMCell",
           "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell", "static_state_saving_rnn",
           "NASCell", "FusedRNNCell", "FusedRNNCellAdaptor", "TimeReversedFusedRNN",
           "HighwayWrapper"]
