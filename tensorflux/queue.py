"""`tf.queue`: the queue classes."""

from tensorflux.ops.data_flow.queues import (FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase,
                                             RandomShuffleQueue)
