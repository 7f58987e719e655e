"""SparseTensor ops: construction, structure, arithmetic, segments, serialization and edit distance.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.sparse import (
    core,
    composites,
    cwise,
    serialization,
    arithmetic,
    matmul,
    structure,
    segment,
    util,
    edit_distance,
    cross,
)
