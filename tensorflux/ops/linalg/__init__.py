"""Linear algebra: decompositions, solves, determinants, einsum and norms.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.linalg import (
    batch_matrix,
    decompositions,
    solvers,
    functions,
    einsum,
    matrix_functions,
    banded,
    square_root,
)
