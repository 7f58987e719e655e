"""`tf.keras.layers`: Keras layer classes usable on TF1 graph tensors."""

from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.keras.engine.input_layer import Input, InputLayer
from tensorflux.keras.layers.core import (
    Activation,
    ActivityRegularization,
    Dense,
    Dropout,
    Embedding,
    Flatten,
    Lambda,
    Masking,
    Reshape,
    SpatialDropout1D,
    SpatialDropout2D,
    SpatialDropout3D,
)
from tensorflux.keras.layers.conv import *  # noqa: F403
from tensorflux.keras.layers.merge import *  # noqa: F403
from tensorflux.keras.layers.normalization import BatchNormalization, LayerNormalization
from tensorflux.keras.layers.recurrent import GRU, LSTM, SimpleRNN
from tensorflux.keras.layers.recurrent_cells import *  # noqa: F403
from tensorflux.keras.layers.serialization import deserialize, serialize
from tensorflux.keras.layers.advanced_activations import *  # noqa: F403
from tensorflux.keras.layers.conv3d import *  # noqa: F403
from tensorflux.keras.layers.noise import *  # noqa: F403
from tensorflux.keras.layers.reshaping import *  # noqa: F403
from tensorflux.keras.layers.separable_conv import *  # noqa: F403
from tensorflux.keras.layers.wrappers import *  # noqa: F403
from tensorflux.keras.layers.attention import *  # noqa: F403
from tensorflux.keras.layers.cudnn_recurrent import *  # noqa: F403
from tensorflux.keras.layers.local import *  # noqa: F403
from tensorflux.keras.layers.conv_recurrent import *  # noqa: F403
from tensorflux.keras.layers.dense_features import DenseFeatures
