"""`tf.train`: optimizers, checkpoints, queue runners, sessions and servers.

One import line per source module; keep edits to single lines.
"""
from tensorflux.train.optimizer import Optimizer
from tensorflux.train.optimizers import *  # noqa: F403
from tensorflux.train.learning_rate_decay import *  # noqa: F403
from tensorflux.train.moving_averages import ExponentialMovingAverage
from tensorflux.train.saver import Saver
from tensorflux.train.checkpoint_utils import *  # noqa: F403
from tensorflux.train.training_util import *  # noqa: F403
from tensorflux.protos.saver_pb2 import SaverDef
from tensorflux.framework.graph_util import write_graph
from tensorflux.train.coordinator import *  # noqa: F403
from tensorflux.train.queue_runner import *  # noqa: F403
from tensorflux.train.input import *  # noqa: F403
from tensorflux.protos.example_pb2 import Example, SequenceExample
from tensorflux.protos.feature_pb2 import (BytesList, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List)  # noqa: E501
