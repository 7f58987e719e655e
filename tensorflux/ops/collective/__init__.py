"""Collective ops (TF's CollectiveReduce, CollectiveBcastSend/Recv, CollectiveGather).

The family facade: importing it registers every op and kernel of the family.
"""

from tensorflux.ops.collective import exchange, collective_ops  # noqa: F401
