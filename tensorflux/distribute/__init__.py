"""`tf.distribute` (the part TF1 cluster programs use): `tf.distribute.cluster_resolver`.

Distribution strategies are not provided: tensorflux distributes by between-graph replication
(`tf.train.replica_device_setter`, `tf.train.Server`), configured by TF_CONFIG.
"""

from tensorflux.distribute import cluster_resolver

__all__ = ["cluster_resolver"]
