"""`tf.version`: the version constants (also exported at `tf.*`)."""

from tensorflux.platform.version import (COMPILER_VERSION, GIT_VERSION, GRAPH_DEF_VERSION,
                                         GRAPH_DEF_VERSION_MIN_CONSUMER,
                                         GRAPH_DEF_VERSION_MIN_PRODUCER, VERSION)
