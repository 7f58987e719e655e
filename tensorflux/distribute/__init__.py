"""`tf.distribute` (TF 1.15, graph mode): distribution strategies and `cluster_resolver`.

`MirroredStrategy` replicates the model over the devices of this machine and keeps mirrored
variables in sync (in-graph replication); `OneDeviceStrategy` pins it to one device;
`experimental.CentralStorageStrategy` keeps the variables on one device;
`experimental.ParameterServerStrategy` places them on the cluster's ps tasks (between-graph
replication, configured by TF_CONFIG); `experimental.MultiWorkerMirroredStrategy` mirrors
them on every worker of a TF_CONFIG cluster and all-reduces gradients across workers with
collective ops (`ops/collective`, carried by `distributed/collective_transport.py`). See
`distribute_lib` for the replica and cross-replica contexts.
"""

from tensorflux.distribute import cluster_resolver, experimental
from tensorflux.distribute.cross_device_ops import (CrossDeviceOps, HierarchicalCopyAllReduce,
                                                    NcclAllReduce, ReductionToOneDevice)
from tensorflux.distribute.distribute_lib import (InputContext, InputReplicationMode,
                                                  ReplicaContext, RunOptions, Strategy,
                                                  StrategyExtended,
                                                  experimental_set_strategy,
                                                  get_loss_reduction, get_replica_context,
                                                  get_strategy, has_strategy,
                                                  in_cross_replica_context)
from tensorflux.distribute.mirrored_strategy import MirroredStrategy
from tensorflux.distribute.one_device_strategy import OneDeviceStrategy
from tensorflux.distribute.reduce_util import ReduceOp

__all__ = ["cluster_resolver", "experimental", "CrossDeviceOps", "HierarchicalCopyAllReduce",
           "NcclAllReduce", "ReductionToOneDevice", "InputContext", "InputReplicationMode",
           "ReplicaContext", "RunOptions", "Strategy", "StrategyExtended",
           "experimental_set_strategy", "get_loss_reduction", "get_replica_context",
           "get_strategy", "has_strategy", "in_cross_replica_context", "MirroredStrategy",
           "OneDeviceStrategy", "ReduceOp"]
