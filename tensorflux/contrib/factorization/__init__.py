"""`tf.contrib.factorization`: k-means clustering (`KMeans`, the graph-building class)."""

from tensorflux.contrib import missing as _missing
from tensorflux.contrib.factorization.clustering import (COSINE_DISTANCE, KMC2_INIT,
                                                         KMEANS_PLUS_PLUS_INIT, RANDOM_INIT,
                                                         SQUARED_EUCLIDEAN_DISTANCE, KMeans)

__all__ = ["COSINE_DISTANCE", "KMC2_INIT", "KMEANS_PLUS_PLUS_INIT", "KMeans", "RANDOM_INIT",
           "SQUARED_EUCLIDEAN_DISTANCE"]

__getattr__ = _missing.module_getattr("contrib.factorization", {
    "*": "not supported (only KMeans is provided)",
    "KMeansClustering": "not supported (build the graph with tf.contrib.factorization.KMeans)",
    "GMM": "not supported",
    "gmm": "not supported",
    "WALSModel": "not supported",
    "WALSMatrixFactorization": "not supported",
})
