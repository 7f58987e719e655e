"""`tf.linalg`: the linear-algebra ops under their `tf.compat.v1.linalg` names (re-exports only)."""

from tensorflux.ops.clip_ops import global_norm
from tensorflux.ops.diag_ops import diag as tensor_diag
from tensorflux.ops.diag_ops import diag_part as tensor_diag_part
from tensorflux.ops.diag_ops import eye
from tensorflux.ops.diag_ops import matrix_band_part as band_part
from tensorflux.ops.diag_ops import matrix_diag as diag
from tensorflux.ops.diag_ops import matrix_diag_part as diag_part
from tensorflux.ops.diag_ops import matrix_set_diag as set_diag
from tensorflux.ops.einsum_ops import einsum
from tensorflux.ops.linalg_impl import (adjoint, cross, logdet, matrix_rank, matvec, norm, pinv,
                                        trace)
from tensorflux.ops.linalg_ops import cholesky, cholesky_solve
from tensorflux.ops.linalg_ops import log_matrix_determinant as slogdet
from tensorflux.ops.linalg_ops import matrix_determinant as det
from tensorflux.ops.linalg_ops import matrix_inverse as inv
from tensorflux.ops.linalg_ops import matrix_solve as solve
from tensorflux.ops.linalg_ops import matrix_solve_ls as lstsq
from tensorflux.ops.linalg_ops import matrix_triangular_solve as triangular_solve
from tensorflux.ops.linalg_ops import qr
from tensorflux.ops.linalg_ops import self_adjoint_eig as eigh
from tensorflux.ops.linalg_ops import self_adjoint_eigvals as eigvalsh
from tensorflux.ops.linalg_ops import svd
from tensorflux.ops.matmul_ops import matmul, tensordot
from tensorflux.ops.nn_impl import l2_normalize
from tensorflux.ops.shape_ops import matrix_transpose
from tensorflux.ops.shape_ops import matrix_transpose as transpose

__all__ = [
    "adjoint", "band_part", "cholesky", "cholesky_solve", "cross", "det", "diag", "diag_part",
    "eigh", "eigvalsh", "einsum", "eye", "global_norm", "inv", "l2_normalize", "logdet",
    "lstsq", "matmul", "matrix_rank", "matrix_transpose", "matvec", "norm", "pinv", "qr",
    "set_diag", "slogdet", "solve", "svd", "tensor_diag", "tensor_diag_part", "tensordot",
    "trace", "transpose", "triangular_solve",
]
