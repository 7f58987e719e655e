"""`tf.linalg`: the linear-algebra ops under their `tf.compat.v1.linalg` names (re-exports only)."""

from tensorflux.ops.math.clip import global_norm
from tensorflux.ops.array.diagonal import diag as tensor_diag
from tensorflux.ops.array.diagonal import diag_part as tensor_diag_part
from tensorflux.ops.array.diagonal import eye
from tensorflux.ops.array.diagonal import matrix_band_part as band_part
from tensorflux.ops.array.diagonal import matrix_diag as diag
from tensorflux.ops.array.diagonal import matrix_diag_part as diag_part
from tensorflux.ops.array.diagonal import matrix_set_diag as set_diag
from tensorflux.ops.linalg.einsum import einsum
from tensorflux.ops.linalg.linear_operator import LinearOperator
from tensorflux.ops.linalg.linear_operator_basic import (
    LinearOperatorDiag,
    LinearOperatorFullMatrix,
    LinearOperatorIdentity,
    LinearOperatorLowerTriangular,
    LinearOperatorScaledIdentity,
    LinearOperatorZeros,
)
from tensorflux.ops.linalg.linear_operator_combined import (
    LinearOperatorAdjoint,
    LinearOperatorBlockDiag,
    LinearOperatorComposition,
    LinearOperatorInversion,
    LinearOperatorKronecker,
)
from tensorflux.ops.linalg.linear_operator_structured import (
    LinearOperatorCirculant,
    LinearOperatorCirculant2D,
    LinearOperatorCirculant3D,
    LinearOperatorHouseholder,
    LinearOperatorLowRankUpdate,
    LinearOperatorToeplitz,
)
from tensorflux.ops.linalg.matrix_functions import matrix_exponential as expm
from tensorflux.ops.linalg.matrix_functions import matrix_logarithm as logm
from tensorflux.ops.linalg.square_root import matrix_square_root as sqrtm
from tensorflux.ops.linalg.banded import lu, tridiagonal_matmul, tridiagonal_solve
from tensorflux.ops.linalg.functions import (adjoint, cross, logdet, matrix_rank, matvec, norm,
                                             pinv, trace)
from tensorflux.ops.linalg.decompositions import cholesky
from tensorflux.ops.linalg.decompositions import log_matrix_determinant as slogdet
from tensorflux.ops.linalg.decompositions import matrix_determinant as det
from tensorflux.ops.linalg.decompositions import matrix_inverse as inv
from tensorflux.ops.linalg.decompositions import qr
from tensorflux.ops.linalg.decompositions import self_adjoint_eig as eigh
from tensorflux.ops.linalg.decompositions import self_adjoint_eigvals as eigvalsh
from tensorflux.ops.linalg.decompositions import svd
from tensorflux.ops.linalg.solvers import cholesky_solve
from tensorflux.ops.linalg.solvers import matrix_solve as solve
from tensorflux.ops.linalg.solvers import matrix_solve_ls as lstsq
from tensorflux.ops.linalg.solvers import matrix_triangular_solve as triangular_solve
from tensorflux.ops.math.matrix_product import matmul, tensordot
from tensorflux.ops.nn.functions import l2_normalize
from tensorflux.ops.array.shapes import matrix_transpose
from tensorflux.ops.array.shapes import matrix_transpose as transpose

__all__ = [
    "LinearOperator", "LinearOperatorAdjoint", "LinearOperatorBlockDiag",
    "LinearOperatorCirculant", "LinearOperatorCirculant2D", "LinearOperatorCirculant3D",
    "LinearOperatorComposition", "LinearOperatorDiag", "LinearOperatorFullMatrix",
    "LinearOperatorHouseholder", "LinearOperatorIdentity", "LinearOperatorInversion",
    "LinearOperatorKronecker", "LinearOperatorLowRankUpdate", "LinearOperatorLowerTriangular",
    "LinearOperatorScaledIdentity", "LinearOperatorToeplitz", "LinearOperatorZeros",
    "adjoint", "band_part", "cholesky", "cholesky_solve", "cross", "det", "diag", "diag_part",
    "eigh", "eigvalsh", "einsum", "eye", "global_norm", "inv", "l2_normalize", "logdet",
    "lstsq", "matmul", "matrix_rank", "matrix_transpose", "matvec", "norm", "pinv", "qr",
    "set_diag", "slogdet", "solve", "svd", "tensor_diag", "tensor_diag_part", "tensordot",
    "trace", "transpose", "triangular_solve", "lu", "sqrtm", "tridiagonal_matmul",
    "tridiagonal_solve",
]
