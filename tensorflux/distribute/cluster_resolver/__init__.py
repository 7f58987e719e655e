"""`tf.distribute.cluster_resolver`: where the cluster of a program is described."""

from tensorflux.distribute.cluster_resolver.resolvers import (ClusterResolver,
                                                              SimpleClusterResolver,
                                                              TFConfigClusterResolver,
                                                              UnionResolver)
from tensorflux.distribute.cluster_resolver.tpu_resolver import TPUClusterResolver

__all__ = ["ClusterResolver", "SimpleClusterResolver", "TFConfigClusterResolver",
           "UnionResolver", "TPUClusterResolver"]
