"""`tf.contrib.rnn`: the core RNN cells and static RNNs, plus contrib's block and fused
cells, layer-normalized / coupled-gate / NAS / UGRNN / Intersection / IndRNN / SRU / conv LSTM
cells, attention, projection, embedding and highway wrappers, and stacked bidirectional RNNs.
"""

from tensorflux.contrib.rnn.conv_lstm import (Conv1DLSTMCell, Conv2DLSTMCell, Conv3DLSTMCell,
                                              ConvLSTMCell)
from tensorflux.contrib.rnn.core_rnn_cell import (CompiledWrapper, DeviceWrapper, EmbeddingWrapper,
                                                  HighwayWrapper, InputProjectionWrapper,
                                                  OutputProjectionWrapper)
from tensorflux.contrib.rnn.fused_rnn_cell import (FusedRNNCell, FusedRNNCellAdaptor,
                                                   TimeReversedFusedRNN)
from tensorflux.contrib.rnn.lstm_ops import (GRUBlockCell, GRUBlockCellV2, LSTMBlockCell,
                                             LSTMBlockFusedCell)
from tensorflux.contrib.rnn.rnn_cell import (AttentionCellWrapper, CoupledInputForgetGateLSTMCell,
                                             IndRNNCell, IntersectionRNNCell,
                                             LayerNormBasicLSTMCell, NASCell, SRUCell, UGRNNCell)
from tensorflux.contrib.rnn.stacked_rnn import (stack_bidirectional_dynamic_rnn,
                                                stack_bidirectional_rnn)
from tensorflux.contrib.rnn.state_saving_rnn import static_state_saving_rnn
from tensorflux.layers.rnn_cell import (BasicLSTMCell, BasicRNNCell, DropoutWrapper, GRUCell,
                                        LSTMCell, LSTMStateTuple, MultiRNNCell, RNNCell,
                                        ResidualWrapper, static_bidirectional_rnn, static_rnn)

LayerRNNCell = RNNCell  # tensorflux's RNNCell is already a layer

__all__ = ["RNNCell", "LayerRNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell",
           "MultiRNNCell", "DropoutWrapper", "ResidualWrapper", "DeviceWrapper",
           "LSTMStateTuple", "static_rnn", "static_bidirectional_rnn",
           "static_state_saving_rnn", "stack_bidirectional_rnn",
           "stack_bidirectional_dynamic_rnn", "LSTMBlockCell", "LSTMBlockFusedCell",
           "GRUBlockCell", "GRUBlockCellV2", "FusedRNNCell", "FusedRNNCellAdaptor",
           "TimeReversedFusedRNN", "LayerNormBasicLSTMCell", "AttentionCellWrapper",
           "CoupledInputForgetGateLSTMCell", "UGRNNCell", "IntersectionRNNCell", "NASCell",
           "IndRNNCell", "SRUCell", "ConvLSTMCell", "Conv1DLSTMCell", "Conv2DLSTMCell",
           "Conv3DLSTMCell", "OutputProjectionWrapper", "InputProjectionWrapper",
           "EmbeddingWrapper", "HighwayWrapper", "CompiledWrapper"]
