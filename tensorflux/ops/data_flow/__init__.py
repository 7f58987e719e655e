"""Data-flow state: queues, accumulators, lookup tables, TensorArrays and stacks.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.data_flow import (
    queues,
    queue_resource,
    queue_store,
    accumulators,
    barrier,
    lookup,
    lookup_table,
    lookup_mutable,
    tensor_array,
    tensor_array_class,
    stack,
    step_resources,
    hang_watch,
    session_ops,
    critical_section,
)
