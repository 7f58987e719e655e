"""`tf.keras.layers`: Keras layer classes usable on TF1 graph tensors."""

from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.keras.engine.input_layer import Input, InputLayer
from tensorflux.keras.layers.core import (Activation, Dense, Dropout, Embedding, Flatten, Lambda,
                                          Reshape)
from tensorflux.keras.layers.conv import *  # noqa: F403
from tensorflux.keras.layers.merge import *  # noqa: F403
from tensorflux.keras.layers.normalization import BatchNormalization
from tensorflux.keras.layers.recurrent import GRU, LSTM, SimpleRNN
from tensorflux.keras.layers.extra import *  # noqa: F403
from tensorflux.keras.layers.extra2 import *  # noqa: F403
from tensorflux.keras.layers.conv_extra import *  # noqa: F403
