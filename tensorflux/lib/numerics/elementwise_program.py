"""Fused elementwise programs: a chain of unary/binary float ops evaluated in one kernel.

A program is data, never code: `codes[i]` is an opcode of the fixed table `OPCODES` and
`operands[2 * i]`, `operands[2 * i + 1]` index its operands in one numbering: the kernel's
inputs first, then the scalar `constants`, then the results of earlier instructions (the
second operand is -1 for unary ops). The last instruction's result is the program's result.

Two interpreters, both fixed, pre-written code:

- `run_numpy` (the reference and fallback): one NumPy ufunc per instruction with NumPy
  broadcasting, writing into the buffer of an intermediate it consumes (`out=`) so a chain of
  n ops allocates about one temporary, not n.
- `run_compiled` (numba): a small register machine that walks the program over blocks of a few
  hundred elements, so every intermediate stays in L1 and memory is read and written once.
  It handles inputs that all have the output's shape or one element (scalars); other
  broadcasting falls back to `run_numpy`.

Every opcode computes what the op's own kernel computes (`np.maximum` NaN propagation for Relu
and Maximum, `x >= 0` branches for Sigmoid, ...); arithmetic ops agree bit for bit,
transcendental ones (exp, log, tanh) to the last bit or so of the platform's libm.
"""

from __future__ import annotations

import math

import numpy as np

from tensorflux.lib.numerics import jit as jit_mod

# op type -> (opcode, arity). Aliases (Add/AddV2, RealDiv/Div on floats, Reciprocal/Inv) share
# an opcode. Float types only: integer division and overflow rules differ.
OPCODES = {
    "Add": (0, 2), "AddV2": (0, 2), "Sub": (1, 2), "Mul": (2, 2), "RealDiv": (3, 2),
    "Div": (3, 2), "Maximum": (4, 2), "Minimum": (5, 2), "SquaredDifference": (6, 2),
    "ReluGrad": (7, 2),
    "Neg": (8, 1), "Abs": (9, 1), "Square": (10, 1), "Sqrt": (11, 1), "Rsqrt": (12, 1),
    "Reciprocal": (13, 1), "Inv": (13, 1), "Exp": (14, 1), "Log": (15, 1), "Tanh": (16, 1),
    "Sigmoid": (17, 1), "Relu": (18, 1), "Relu6": (19, 1), "Elu": (20, 1), "Log1p": (21, 1),
    "Expm1": (22, 1), "Floor": (23, 1), "Ceil": (24, 1),
}


def _sigmoid(x, out):
    e = np.exp(-np.abs(x))
    np.copyto(out, np.where(x >= 0, 1 / (1 + e), e / (1 + e)), casting="unsafe")
    return out


def _relu6(x, out):
    return np.clip(x, np.zeros((), x.dtype), np.asarray(6, x.dtype), out=out)


def _elu(x, out):
    np.copyto(out, np.where(x < 0, np.expm1(np.minimum(x, 0)), x), casting="unsafe")
    return out


def _rsqrt(x, out):
    return np.divide(1, np.sqrt(x), out=out)


def _relu(x, out):
    return np.maximum(x, np.zeros((), x.dtype), out=out)


def _squared_difference(x, y, out):
    d = np.subtract(x, y, out=out)
    return np.multiply(d, d, out=d)


def _relu_grad(g, f, out):
    return np.multiply(g, f > 0, out=out)


# opcode -> f(*args, out) computing into `out` (a fresh or consumed buffer of the result shape).
_NUMPY = {
    0: np.add, 1: np.subtract, 2: np.multiply, 3: np.true_divide, 4: np.maximum,
    5: np.minimum, 6: _squared_difference, 7: _relu_grad,
    8: np.negative, 9: np.abs, 10: np.square, 11: np.sqrt, 12: _rsqrt, 13: np.reciprocal,
    14: np.exp, 15: np.log, 16: np.tanh, 17: _sigmoid, 18: _relu, 19: _relu6, 20: _elu,
    21: np.log1p, 22: np.expm1, 23: np.floor, 24: np.ceil,
}


def check_program(codes, operands, n_inputs: int, n_constants: int) -> None:
    """Raises ValueError unless the program is well formed (known opcodes, operands that
    refer to inputs, constants or earlier results, a second operand exactly for binary ops)."""
    arity = {code: n for code, n in OPCODES.values()}
    if not codes:
        raise ValueError("an elementwise program needs at least one instruction")
    if len(operands) != 2 * len(codes):
        raise ValueError(f"operands must hold 2 entries per instruction: {len(codes)} "
                         f"instructions, {len(operands)} operands")
    for i, code in enumerate(codes):
        if code not in arity:
            raise ValueError(f"instruction {i}: unknown opcode {code}")
        limit = n_inputs + n_constants + i
        a, b = operands[2 * i], operands[2 * i + 1]
        if not 0 <= a < limit or (arity[code] == 2 and not 0 <= b < limit) or \
                (arity[code] == 1 and b != -1):
            raise ValueError(f"instruction {i} (opcode {code}): operands ({a}, {b}) must "
                             f"refer to the {limit} values before it")


def run_numpy(codes, operands, constants: np.ndarray, inputs, dtype) -> np.ndarray:
    """The reference interpreter (NumPy broadcasting); returns the last instruction's value."""
    values = [np.asarray(x) for x in inputs] + [np.asarray(c) for c in constants]
    base = len(values)
    uses = [0] * (base + len(codes))
    for k in operands:
        if k >= 0:
            uses[k] += 1
    owned = set()  # results this call allocated that no later instruction reads
    with np.errstate(all="ignore"):
        for i, code in enumerate(codes):
            a = operands[2 * i]
            b = operands[2 * i + 1]
            args = (values[a],) if b < 0 else (values[a], values[b])
            for k in {a, b} - {-1}:
                uses[k] -= 1
                if k >= base and uses[k] == 0:
                    owned.add(k)
            out = _reusable(values, owned, a, b)
            if out is None:
                out = np.empty(np.broadcast_shapes(*(x.shape for x in args)), dtype=dtype)
            values.append(_NUMPY[code](*args, out=out))
    return values[-1]


def _reusable(values, owned, a, b):
    """The buffer of an operand read for the last time that has the result's shape."""
    for mine, other in ((a, b), (b, a)):
        if mine in owned:
            buf = values[mine]
            if other < 0 or values[other].shape == buf.shape or \
                    (values[other].size == 1 and values[other].ndim <= buf.ndim):
                owned.discard(mine)
                return buf
    return None


# -- the compiled register machine -------------------------------------------------------------

class RegisterProgram:
    """A program laid out for `_run_machine`: every value gets a row of `block` elements in
    its register file (inputs, constants, then results; rows of consumed results are reused,
    so a chain of any length needs two result rows)."""

    def __init__(self, codes, operands, n_inputs: int, n_constants: int):
        self.n_inputs = n_inputs
        first_result = n_inputs + n_constants
        row_of = list(range(first_result))
        free: list = []
        rows = first_result
        uses = [0] * (first_result + len(codes))
        for k in operands:
            if k >= 0:
                uses[k] += 1
        self.codes = np.asarray(codes, dtype=np.int64)
        self.arg_a = np.empty(len(codes), dtype=np.int64)
        self.arg_b = np.empty(len(codes), dtype=np.int64)
        self.dest = np.empty(len(codes), dtype=np.int64)
        for i in range(len(codes)):
            a, b = operands[2 * i], operands[2 * i + 1]
            self.arg_a[i] = row_of[a]
            self.arg_b[i] = row_of[b] if b >= 0 else row_of[a]
            if free:
                row_of.append(free.pop())
            else:
                row_of.append(rows)
                rows += 1
            self.dest[i] = row_of[-1]
            # NOTE: operand rows are freed after the result's row is taken: a result written
            # over its own operand makes LLVM's overlap check pick the scalar loop (3x slower).
            for k in {a, b} - {-1}:
                uses[k] -= 1
                if k >= first_result and uses[k] == 0:
                    free.append(row_of[k])
        self.rows = rows


def _block_size(rows: int, itemsize: int, n: int) -> int:
    """Elements per block: the register file stays within ~64 KiB (L1/L2)."""
    block = max(16, min(512, (64 << 10) // max(1, rows * itemsize)))
    return max(1, min(block, n))


def compiled_shape(inputs) -> tuple | None:
    """The output shape when the compiled machine can run these inputs (each of the output's
    shape or of one element), else None."""
    full = None  # the shape shared by the inputs of more than one element
    scalar = ()  # the highest-rank shape of the one-element inputs
    for x in inputs:  # NOTE: np.broadcast_shapes costs microseconds; this loop does not
        if x.size == 1:
            if x.ndim > len(scalar):
                scalar = x.shape
        elif full is None:
            full = x.shape
        elif x.shape != full:
            return None
    if full is None:
        return scalar
    return full if len(scalar) <= len(full) else None


def run_compiled(program: RegisterProgram, constants: np.ndarray, inputs, dtype,
                 shape) -> np.ndarray:
    """The program on the compiled machine; `shape` from `compiled_shape(inputs)`.

    The inputs are first copied into one `[inputs, elements]` array (scalars broadcast):
    one argument of one numba type whatever their number (typing a tuple of arrays cost
    more than the copies at the sizes this machine serves).
    """
    n = math.prod(shape)
    out = np.empty(shape, dtype=dtype)
    if n == 0:
        return out
    packed = np.empty((len(inputs), n), dtype=dtype)
    for k, x in enumerate(inputs):
        packed[k] = x.reshape(-1) if x.size == n else x.reshape(())
    block = _block_size(program.rows, out.itemsize, n)
    _run_machine(program.codes, program.arg_a, program.arg_b, program.dest, program.rows,
                 packed, constants, out.reshape(-1), block)
    return out


@jit_mod.jit
def _apply(code, a, b, r, one):
    """r = op(a, b) on equal-length 1-D slices: one tight loop per opcode."""
    m = r.shape[0]
    if code == 0:
        for j in range(m):
            r[j] = a[j] + b[j]
    elif code == 1:
        for j in range(m):
            r[j] = a[j] - b[j]
    elif code == 2:
        for j in range(m):
            r[j] = a[j] * b[j]
    elif code == 3:
        for j in range(m):
            r[j] = a[j] / b[j]
    elif code == 4:
        for j in range(m):
            x = a[j]
            y = b[j]
            r[j] = x if (x > y or x != x) else y
    elif code == 5:
        for j in range(m):
            x = a[j]
            y = b[j]
            r[j] = x if (x < y or x != x) else y
    elif code == 6:
        for j in range(m):
            d = a[j] - b[j]
            r[j] = d * d
    elif code == 7:
        for j in range(m):
            r[j] = a[j] * (b[j] > 0)
    else:
        _apply_unary(code, a, r, one)



@jit_mod.jit
def _apply_unary(code, a, r, one):
    m = r.shape[0]
    if code == 8:
        for j in range(m):
            r[j] = -a[j]
    elif code == 9:
        for j in range(m):
            r[j] = abs(a[j])
    elif code == 10:
        for j in range(m):
            r[j] = a[j] * a[j]
    elif code == 11:
        for j in range(m):
            r[j] = np.sqrt(a[j])
    elif code == 12:
        for j in range(m):
            r[j] = one / np.sqrt(a[j])
    elif code == 13:
        for j in range(m):
            r[j] = one / a[j]
    elif code == 14:
        for j in range(m):
            r[j] = np.exp(a[j])
    elif code == 15:
        for j in range(m):
            r[j] = np.log(a[j])
    elif code == 16:
        for j in range(m):
            r[j] = np.tanh(a[j])
    elif code == 17:
        for j in range(m):
            x = a[j]
            e = np.exp(-abs(x))
            r[j] = one / (one + e) if x >= 0 else e / (one + e)
    elif code == 18:
        for j in range(m):
            x = a[j]
            # NOTE: x > 0, not x >= 0: np.maximum(-0.0, 0) is +0.0 (the Relu kernel's answer).
            r[j] = x if (x > 0 or x != x) else 0
    elif code == 19:
        for j in range(m):
            x = a[j]
            r[j] = x if x != x else min(max(x, 0), 6)
    elif code == 20:
        for j in range(m):
            x = a[j]
            r[j] = np.expm1(x) if x < 0 else x
    elif code == 21:
        for j in range(m):
            r[j] = np.log1p(a[j])
    elif code == 22:
        for j in range(m):
            r[j] = np.expm1(a[j])
    elif code == 23:
        for j in range(m):
            r[j] = np.floor(a[j])
    else:
        for j in range(m):
            r[j] = np.ceil(a[j])



@jit_mod.jit
def _run_machine(codes, arg_a, arg_b, dest, rows, inputs, constants, out, block):
    # NOTE: loops run over 1-D slices indexed from 0 (no `first + j` arithmetic), which lets
    # LLVM vectorise them; rows are `block + 16` apart so that no two rows sit a multiple of
    # 4 KiB apart (4K aliasing stalled loads behind stores: 3-4x slower).
    n = out.shape[0]
    n_inputs = inputs.shape[0]
    pitch = block + 16
    regs = np.empty(rows * pitch, dtype=out.dtype)
    for k in range(constants.shape[0]):
        row = regs[(n_inputs + k) * pitch:(n_inputs + k) * pitch + block]
        row[:] = constants[k]
    last = dest[codes.shape[0] - 1] * pitch
    one = np.ones(1, dtype=out.dtype)[0]  # 1 of the program's dtype: float32 stays float32
    if n == 1:  # scalars: no slices per instruction (their setup costs ~100 ns each)
        for k in range(n_inputs):
            regs[k * pitch] = inputs[k, 0]
        for i in range(codes.shape[0]):
            regs[dest[i] * pitch] = _scalar(codes[i], regs[arg_a[i] * pitch],
                                            regs[arg_b[i] * pitch], one)
        out[0] = regs[last]
        return
    for first in range(0, n, block):
        m = min(block, n - first)
        for k in range(n_inputs):
            _copy(inputs[k, first:first + m], regs[k * pitch:k * pitch + m])
        for i in range(codes.shape[0]):
            a = arg_a[i] * pitch
            b = arg_b[i] * pitch
            r = dest[i] * pitch
            _apply(codes[i], regs[a:a + m], regs[b:b + m], regs[r:r + m], one)
        _copy(regs[last:last + m], out[first:first + m])


@jit_mod.jit
def _scalar(code, x, y, one):
    """The opcode on one element: the formulas of `_apply`, without its loops."""
    if code == 0:
        return x + y
    if code == 1:
        return x - y
    if code == 2:
        return x * y
    if code == 3:
        return x / y
    if code == 4:
        return x if (x > y or x != x) else y
    if code == 5:
        return x if (x < y or x != x) else y
    if code == 6:
        d = x - y
        return d * d
    if code == 7:
        return x * (y > 0)
    if code == 8:
        return -x
    if code == 9:
        return abs(x)
    if code == 10:
        return x * x
    if code == 11:
        return np.sqrt(x)
    if code == 12:
        return one / np.sqrt(x)
    if code == 13:
        return one / x
    if code == 14:
        return np.exp(x)
    if code == 15:
        return np.log(x)
    if code == 16:
        return np.tanh(x)
    if code == 17:
        e = np.exp(-abs(x))
        return one / (one + e) if x >= 0 else e / (one + e)
    if code == 18:
        return x if (x > 0 or x != x) else one - one
    if code == 19:
        return x if x != x else min(max(x, 0), 6)
    if code == 20:
        return np.expm1(x) if x < 0 else x
    if code == 21:
        return np.log1p(x)
    if code == 22:
        return np.expm1(x)
    if code == 23:
        return np.floor(x)
    return np.ceil(x)


@jit_mod.jit
def _copy(src, dst):
    for j in range(src.shape[0]):
        dst[j] = src[j]
