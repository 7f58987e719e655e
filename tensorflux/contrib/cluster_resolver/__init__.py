"""`tf.contrib.cluster_resolver`: the resolvers of `tf.distribute.cluster_resolver`."""

from tensorflux.distribute.cluster_resolver import (
    ClusterResolver,
    SimpleClusterResolver,
    TFConfigClusterResolver,
    TPUClusterResolver,
    UnionResolver,
)

__all__ = ["ClusterResolver", "SimpleClusterResolver", "TFConfigClusterResolver",
           "TPUClusterResolver", "UnionResolver"]
