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
from tensorflux.lib.formats.graph_file import write_graph
from tensorflux.train.coordinator import *  # noqa: F403
from tensorflux.train.queue_runner import *  # noqa: F403
from tensorflux.train.input import *  # noqa: F403
from tensorflux.protos.example_pb2 import Example, SequenceExample
from tensorflux.protos.feature_pb2 import (BytesList, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List)  # noqa: E501
from tensorflux.train.session_run_hook import *  # noqa: F403
from tensorflux.train.basic_session_run_hooks import *  # noqa: F403
from tensorflux.train.session_manager import SessionManager
from tensorflux.train.monitored_session import *  # noqa: F403
from tensorflux.train.supervisor import Supervisor
from tensorflux.summary.writer import summary_iterator
from tensorflux.train.meta_graph import export_meta_graph, import_meta_graph
from tensorflux.distributed.cluster_spec import ClusterSpec
from tensorflux.distributed.server import Server
from tensorflux.train.device_setter import *  # noqa: F403
from tensorflux.train.sync_replicas_optimizer import SyncReplicasOptimizer
from tensorflux.train.adagrad_da import AdagradDAOptimizer
from tensorflux.train.basic_loops import *  # noqa: F403
from tensorflux.train.warm_starting import VocabInfo, warm_start
from tensorflux.protos.cluster_pb2 import ClusterDef, JobDef
from tensorflux.protos.tensorflow_server_pb2 import ServerDef
from tensorflux.train.checkpoint import Checkpoint
from tensorflux.train.checkpoint_management import CheckpointManager
from tensorflux.train import experimental
