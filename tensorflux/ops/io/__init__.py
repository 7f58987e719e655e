"""I/O ops: checkpoints, readers, Example parsing, tensor serialization and summaries.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.io import (
    checkpoint,
    readers,
    reader_resource,
    parsing,
    sequence_parsing,
    tensor_codec,
    summary,
)
