"""`tf.layers`: TF1 layer classes and functions."""

from tensorflux.layers.core import *  # noqa: F403
from tensorflux.layers.core import Layer
from tensorflux.layers.input_spec import InputSpec
from tensorflux.layers.normalization import *  # noqa: F403

from tensorflux.layers.convolutional import *  # noqa: F403
from tensorflux.layers.conv3d import *  # noqa: F403
