"""`tf.queue`: the queue classes."""

from tensorflux.ops.data_flow_ops import (FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase,
                                          RandomShuffleQueue)
