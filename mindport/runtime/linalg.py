"""Linear algebra that MindSpore 2.10 lacks or shapes differently: ``torch.linalg.*`` and the linear algebra among
``torch.*`` functions and Tensor methods (``torch.lu``, ``torch.qr``, ``torch.triangular_solve``,
``torch.cholesky_inverse``, ``torch.matrix_exp``, ``torch.pinverse``, ``torch.chain_matmul``, ``torch.ormqr``).

Converted code imports this module as ``mp_linalg``; a Tensor method (``A.matrix_exp()``) calls the same function
with the receiver first. Each function keeps torch's arguments and results (named tuples where torch returns them)
and says why MindSpore needs help. Where a ``torch.*`` name and a ``torch.linalg.*`` name differ in meaning, the
plain name is torch.linalg's (:func:`lu`) and the other says which API it is (:func:`lu_packed` is ``torch.lu``);
:func:`qr` is ``torch.qr`` (``torch.linalg.qr`` maps to ``ops.qr`` directly). Norms and dot products live in
:mod:`mindport.runtime.math`.
"""
from __future__ import annotations

import math
from collections import namedtuple

import mindspore as ms
from mindspore import ops
from mindspore.ops.auto_generate import solve_triangular as _solve_triangular
from mindspore.ops.operations.linalg_ops import Eigh as _Eigh
from mindspore.scipy.ops import LU as _LU

from mindport.runtime._float_limits import eps as _eps
from mindport.runtime._graph import named
from mindport.runtime.math import _empty_extent, _is_complex, _nonempty_extent, _or_empty, _singular_norm, real_abs

CholeskyEx = namedtuple("CholeskyEx", ["L", "info"])
InvEx = namedtuple("InvEx", ["inverse", "info"])
Eigh = namedtuple("Eigh", ["eigenvalues", "eigenvectors"])
LU = namedtuple("LU", ["P", "L", "U"])
LUFactor = namedtuple("LUFactor", ["LU", "pivots"])
LUFactorEx = namedtuple("LUFactorEx", ["LU", "pivots", "info"])
SolveEx = namedtuple("SolveEx", ["result", "info"])
SVD = namedtuple("SVD", ["U", "S", "Vh"])
Slogdet = namedtuple("Slogdet", ["sign", "logabsdet"])
Lstsq = namedtuple("Lstsq", ["solution", "residuals", "rank", "singular_values"])
TriangularSolve = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])

_COMPLEX = (ms.complex64, ms.complex128)


def _mT(a):
    return ops.swapaxes(a, -1, -2)


def _mH(a):
    return ops.conj(_mT(a)) if a.dtype in _COMPLEX else _mT(a)


def _broadcast_batch(a, b):
    """``a`` and ``b`` broadcast to one batch shape (their last two dims kept); MindSpore's batched linear algebra
    primitives want equal batch dims."""
    batch = (ops.zeros(a.shape[:-2], ms.int8) + ops.zeros(b.shape[:-2], ms.int8)).shape
    return ops.broadcast_to(a, batch + a.shape[-2:]), ops.broadcast_to(b, batch + b.shape[-2:])


def _batched(fn, a, *rest):
    """Apply a 2-D-only MindSpore routine to every matrix of a batch (MindSpore's Eigh and Lstsq accept 2-D only)."""
    if a.ndim == 2:
        return fn(a, *rest)
    batch = a.shape[:-2]
    flat = a.reshape((-1,) + a.shape[-2:])
    flat_rest = [r.reshape((-1,) + r.shape[-2:]) for r in rest]
    outs = [fn(flat[i], *[r[i] for r in flat_rest]) for i in range(flat.shape[0])]
    if isinstance(outs[0], tuple):
        return tuple(ops.stack(list(o)).reshape(batch + o[0].shape) for o in zip(*outs))
    return ops.stack(outs).reshape(batch + outs[0].shape)


# ----------------------------------------------------------------------------------------------------- LU family

def _lu(A):
    """mindspore.scipy's LU primitive (batched): (packed LU, 0-based pivots, permutation matrix). It returns wrong
    factors for tall matrices (measured on 4 x 3), so those raise."""
    if A.shape[-2] > A.shape[-1]:
        raise ValueError(f"mindport: LU of a matrix with more rows than columns {A.shape[-2:]} is not supported")
    return _LU()(A)


def _lu_info(lu):
    """LAPACK getrf's info: 1 + index of the first zero pivot of U, 0 when there is none (int32, batch-shaped)."""
    zero = (ops.diagonal(lu, 0, -2, -1) == 0).astype(ms.int32)
    return ops.where(zero.any(-1), zero.argmax(-1).astype(ms.int32) + 1, ops.zeros(zero.shape[:-1], ms.int32))


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """torch.linalg.lu_factor_ex: (LU, pivots, info); MindSpore has no linalg LU op (mindspore.scipy's LU primitive
    returns 0-based pivots: torch's are 1-based int32)."""
    if not pivot:
        raise ValueError("mindport: lu_factor with pivot=False has no MindSpore equivalent")
    lu, piv, _ = _lu(A)
    info = _lu_info(lu)
    if check_errors and bool(info.any()):
        raise ValueError("torch.linalg.lu_factor_ex: the factorization could not be completed (singular input)")
    return named(LUFactorEx, lu, piv.astype(ms.int32) + 1, info)


def lu_factor(A, *, pivot=True):
    """torch.linalg.lu_factor: (LU, pivots) with 1-based int32 pivots; see lu_factor_ex."""
    lu, piv, _ = lu_factor_ex(A, pivot=pivot)
    return named(LUFactor, lu, piv)


def lu_packed(A, pivot=True, get_infos=False):
    """torch.lu / Tensor.lu (deprecated in torch for torch.linalg.lu_factor): (LU, pivots), plus the int32 info
    with ``get_infos``; :func:`lu_factor_ex` under the old name and arguments. pivot=False raises (torch's CPU
    kernel lacks it too)."""
    lu, piv, info = lu_factor_ex(A, pivot=pivot)
    return (lu, piv, info) if get_infos else (lu, piv)


def lu(A, *, pivot=True):
    """torch.linalg.lu: (P, L, U) with A = P @ L @ U; built from mindspore.scipy's LU primitive (no linalg op)."""
    if not pivot:
        raise ValueError("mindport: lu with pivot=False has no MindSpore equivalent")
    lu_mat, _, perm = _lu(A)
    n = A.shape[-1]
    eye = ops.eye(n, n, A.dtype)
    lower = ops.tril(lu_mat, -1) + eye
    upper = ops.triu(lu_mat)
    return named(LU, _mT(perm.astype(A.dtype)), lower, upper)


# ------------------------------------------------------------------------------------------ Cholesky, inverses

def cholesky_ex(input, *, upper=False, check_errors=False):
    """torch.linalg.cholesky_ex: (L, info). MindSpore's cholesky raises on a matrix that is not positive-definite
    where torch returns info > 0, so here such an input raises (never a silent wrong result); info is 0 otherwise."""
    factor = ops.cholesky(input, upper=upper)
    return named(CholeskyEx, factor, ops.zeros(input.shape[:-2], ms.int32))


def cholesky_inverse(input, upper=False):
    """torch.cholesky_inverse / Tensor.cholesky_inverse: torch reads only the lower (upper) triangle of its input;
    ``ops.cholesky_inverse`` uses the whole matrix (measured max abs diff 73 on a full random matrix), so the other
    triangle is zeroed first."""
    return ops.cholesky_inverse(ops.triu(input) if upper else ops.tril(input), upper=upper)


def inv_ex(A, *, check_errors=False):
    """torch.linalg.inv_ex: (inverse, info); ops.inverse returns zeros for a singular matrix without telling, so
    info is computed from an LU factorization (LAPACK's definition) and the inverse is NaN-free as in MindSpore."""
    info = _lu_info(_lu(A)[0])
    if check_errors and bool(info.any()):
        raise ValueError("torch.linalg.inv_ex: the matrix is singular")
    return named(InvEx, ops.inverse(A), info)


def pinverse(input, rcond=1e-15):
    """torch.pinverse / Tensor.pinverse: Moore-Penrose pseudo-inverse from the SVD, dropping singular values below
    rcond * max singular value (torch's rule; ``ops.pinv`` takes atol/rtol instead)."""
    s, u, v = ops.svd(input, full_matrices=False)
    cutoff = rcond * ops.amax(s, axis=-1, keepdims=True)
    s_inv = ops.where(s > cutoff, 1 / s, ops.zeros_like(s))
    return ops.matmul(v * s_inv.expand_dims(-2), _mH(u))


def tensorinv(input, ind=2):
    """torch.linalg.tensorinv: the inverse of A seen as a (prod(A.shape[:ind]), prod(A.shape[ind:])) matrix, shaped
    A.shape[ind:] + A.shape[:ind]. No MindSpore op."""
    rows = math.prod(input.shape[:ind])
    inv = ops.inverse(input.reshape(rows, -1))
    return inv.reshape(input.shape[ind:] + input.shape[:ind])


# ------------------------------------------------------------------------------------------------------ solvers

def solve(A, B, *, left=True):
    """torch.linalg.solve: X with A @ X = B (left) or X @ A = B; ops.matrix_solve takes matrices only, so a vector
    right-hand side (B.ndim == 1 or B.ndim == A.ndim - 1) is solved as a column, as torch does."""
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    if vector:
        B = B.expand_dims(-1)
    A, B = _broadcast_batch(A, B)
    if left:
        X = ops.matrix_solve(A, B)
    else:
        X = _mT(ops.matrix_solve(_mT(A), _mT(B)))
    return X.squeeze(-1) if vector else X


def solve_ex(A, B, *, left=True, check_errors=False):
    """torch.linalg.solve_ex: (result, info) with info from an LU factorization of A (see inv_ex)."""
    info = _lu_info(_lu(A)[0])
    if check_errors and bool(info.any()):
        raise ValueError("torch.linalg.solve_ex: the matrix is singular")
    return named(SolveEx, solve(A, B, left=left), info)


def _triangular(A, B, trans, lower, unit):
    """The SolveTriangular primitive (what mindspore.scipy.linalg.solve_triangular calls) on A and B broadcast to
    one batch shape: it wants equal batch dims."""
    A, B = _broadcast_batch(A, B)
    return _solve_triangular(A, B, trans, lower, unit)


def solve_triangular(input, B, *, upper, left=True, unitriangular=False):
    """torch.linalg.solve_triangular: MindSpore's solve_triangular has scipy's arguments (lower=, trans=,
    unit_diagonal=) and no left=False; X @ A = B is solved as A^T X^T = B^T."""
    if left:
        return _triangular(input, B, 0, not upper, unitriangular)
    return _mT(_triangular(input, _mT(B), 1, not upper, unitriangular))


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve / Tensor.triangular_solve: (solution of A X = input, a copy of A broadcast to the
    batch) as a named tuple. Tensor.triangular_solve fails on CPU in 2.10 and mint.triangular_solve has no CPU
    kernel; the SolveTriangular primitive solves the same system."""
    A, input = _broadcast_batch(A, input)
    solution = _solve_triangular(A, input, 1 if transpose else 0, not upper, unitriangular)
    return named(TriangularSolve, solution, A.copy())


def tensorsolve(input, other, dims=None):
    """torch.linalg.tensorsolve: X with tensordot(A, X, X.ndim) = B; dims of A are moved to the end first.
    No MindSpore op."""
    A, B = input, other
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = ops.transpose(A, tuple([d for d in range(A.ndim) if d not in dims] + dims))
    out_shape = A.shape[B.ndim:]
    x = ops.matrix_solve(A.reshape(B.size, -1), B.reshape(-1, 1))
    return x.reshape(out_shape)


def lstsq(input, b, rcond=None, *, driver=None):
    """torch.linalg.lstsq with torch's CPU default driver 'gelsy': (solution, residuals, rank, singular_values) where
    residuals and singular_values are empty and rank (int64) counts singular values above eps * max(m, n) * s_max.
    ops.lstsq returns the solution only and accepts 2-D inputs (applied per matrix here). A vector B is not
    supported by torch either."""
    if driver not in (None, "gelsy"):
        raise ValueError(f"mindport: lstsq driver={driver!r} has no MindSpore equivalent (only 'gelsy' semantics)")
    solution = _batched(ops.lstsq, input, b)
    rank = matrix_rank(input, rtol=rcond)
    empty = ops.zeros((0,), input.dtype)
    return named(Lstsq, solution, empty, rank, empty)


# ------------------------------------------------------------------------------------ decompositions, spectra

def qr(input, some=True):
    """torch.qr(input, some) (the deprecated form; torch.linalg.qr maps to ops.qr directly): ``ops.qr`` takes
    mode='reduced'/'complete' instead of the boolean ``some``."""
    return ops.qr(input, "reduced" if some else "complete")


def ormqr(input, tau, other, left=True, transpose=False):
    """torch.ormqr / Tensor.ormqr: multiplies ``other`` by Q (or Q^H) of a geqrf result (Householder vectors below
    the diagonal of ``input``, scales ``tau``). Ormqr has no CPU kernel in 2.10; Q = H_1 ... H_k is built from the
    reflectors H_i = I - tau_i v_i v_i^H and applied with ops.matmul."""
    m = input.shape[-2]
    k = tau.shape[-1]
    vectors = ops.tril(input[..., :, :k], -1) + ops.eye(m, k, dtype=input.dtype)
    q = ops.broadcast_to(ops.eye(m, m, dtype=input.dtype), (*input.shape[:-2], m, m))
    for i in range(k):
        v = vectors[..., :, i:i + 1]
        q = q - ops.matmul(ops.matmul(q, v), _mH(v)) * tau[..., i:i + 1].unsqueeze(-1)
    if transpose:
        q = _mH(q)
    return ops.matmul(q, other) if left else ops.matmul(other, q)


def eigh(input, UPLO="L"):
    """torch.linalg.eigh: (eigenvalues ascending, eigenvectors); MindSpore has the Eigh primitive (2-D only, applied
    per matrix here). Each eigenvector is defined up to sign in torch as well (LAPACK may pick another sign)."""
    op = _Eigh(True, lower=UPLO == "L")
    values, vectors = _batched(lambda a: tuple(op(a)), input)
    if values.dtype in (ms.complex64, ms.complex128):  # a Hermitian matrix's eigenvalues are real, as torch gives
        values = ops.real(values)
    return named(Eigh, values, vectors)


def pinv(input, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """torch.linalg.pinv: ``ops.pinv(hermitian=True)`` drops the batch dims in 2.10 ((2, 3, 3) in, (2, 2) out). A
    Hermitian input is read from its lower triangle as torch's eigh reads it, then inverted without the hint.
    ``rcond`` (torch's other overload, ``pinv(A, 1e-5)``) is rtol=rcond, atol=0, as torch reads it."""
    if rcond is not None:
        atol, rtol = 0.0, float(rcond)
    if hermitian:
        input = _from_lower(input)
    return ops.pinv(input, atol=atol, rtol=rtol)


def _from_lower(input):
    """The Hermitian matrix whose lower triangle ``input`` holds: what torch's ``hermitian=True`` paths read (eigh)."""
    strict = ops.tril(input, -1).swapaxes(-1, -2)
    if input.dtype in (ms.complex64, ms.complex128):
        strict = strict.conj()
    return ops.tril(input) + strict


def slogdet(A):
    """torch.linalg.slogdet / torch.slogdet / Tensor.slogdet: (sign, log|det|); log|det| is real for a complex matrix
    too (``ops.slogdet`` returns it complex)."""
    sign, logabsdet = ops.slogdet(A)
    if logabsdet.dtype in (ms.complex64, ms.complex128):
        logabsdet = ops.real(logabsdet)
    return named(Slogdet, sign, logabsdet)


def eigvalsh(input, UPLO="L"):
    """torch.linalg.eigvalsh: eigenvalues of a symmetric (Hermitian) matrix, ascending (MindSpore's Eigh primitive).
    For complex input MindSpore 2.10's Eigh returns the eigenvalues complex-typed and not in ascending order, and
    reads more than the UPLO triangle: it is given the Hermitian matrix of that triangle (the diagonal's real part, as
    torch reads it) and the real parts come back sorted."""
    op = _Eigh(False, lower=UPLO == "L")
    if input.dtype not in (ms.complex64, ms.complex128):
        return _batched(op, input)
    # torch reads one triangle and the diagonal's real part; MindSpore's complex Eigh reads more than that: the
    # Hermitian matrix of that triangle is what it is given.
    n = input.shape[-1]
    mask = ops.tril(ops.ones((n, n), ms.float32), -1) if UPLO == "L" else ops.triu(ops.ones((n, n), ms.float32), 1)
    tri = input * mask.astype(input.dtype)
    eye = ops.eye(n, n, ms.float32)
    diag = ops.real(input) * eye
    hermitian = tri + ops.conj(tri.swapaxes(-1, -2)) + diag.astype(input.dtype)
    return ops.sort(ops.real(_batched(op, hermitian)), axis=-1)[0]


def svd(A, full_matrices=True, *, driver=None):
    """torch.linalg.svd: (U, S, Vh). ops.svd returns (S, U, V) with V not transposed and full_matrices=False by
    default. Singular vectors are defined up to sign (per pair) in torch as well."""
    s, u, v = ops.svd(A, full_matrices=full_matrices, compute_uv=True)
    return named(SVD, u, s, _mH(v))


def svd_usv(input, some=True, compute_uv=True):
    """torch.svd / Tensor.svd (the older API): (U, S, V) with V not transposed; ``some`` is full_matrices=False.
    With compute_uv=False, U and V are zero-filled (m, m) and (n, n) matrices, as in torch. Singular vectors are
    defined up to sign (per pair), in torch as well."""
    if not compute_uv:
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return named(SVD, ops.zeros(batch + (m, m), input.dtype), ops.svd(input, compute_uv=False),
                   ops.zeros(batch + (n, n), input.dtype))
    s, u, v = ops.svd(input, full_matrices=not some, compute_uv=True)
    return named(SVD, u, s, v)


def svdvals(A, *, driver=None):
    """torch.linalg.svdvals: singular values, descending (ops.svd with compute_uv=False); real for complex A."""
    values = ops.svd(A, compute_uv=False)
    return ops.real(values) if values.dtype in (ms.complex64, ms.complex128) else values


def matrix_rank(input, tol=None, hermitian=False, *, atol=None, rtol=None):
    """torch.linalg.matrix_rank: number of singular values > max(atol, rtol * s_max), with torch's default
    rtol = eps(dtype) * max(m, n) when neither is given; int64. No MindSpore op. ``hermitian=True`` reads the lower
    triangle, as torch's eigvalsh does (the singular values of a Hermitian matrix are its |eigenvalues|). ``tol``
    (torch's other overload, ``matrix_rank(A, 1e-3)``) is atol=tol, rtol=0, as torch reads it."""
    if tol is not None:
        atol, rtol = float(tol), 0.0
    if hermitian:
        input = _from_lower(input)
    s = ops.svd(input, compute_uv=False)
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else _eps(input.dtype) * max(input.shape[-2:])
    tol = ops.maximum(ms.Tensor(0.0 if atol is None else atol, s.dtype), rtol * s.max(-1, keepdims=True))
    return (s > tol).astype(ms.int64).sum(-1)


# ------------------------------------------------------------------------------------------- products, powers

def multi_dot(tensors):
    """torch.linalg.multi_dot: chained matmul, a 1-D first (last) tensor is a row (column) vector. torch picks the
    cheapest multiplication order; results agree to float rounding. No MindSpore op."""
    mats = list(tensors)
    first_vec, last_vec = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_vec:
        mats[0] = mats[0].expand_dims(0)
    if last_vec:
        mats[-1] = mats[-1].expand_dims(-1)
    out = mats[0]
    for m in mats[1:]:
        out = ops.matmul(out, m)
    if first_vec:
        out = out.squeeze(0)
    if last_vec:
        out = out.squeeze(-1)
    for m in mats:  # a 0-sized inner dimension: MindSpore's matmul leaves the product uninitialised, torch gives 0
        if _empty_extent(m.shape, None):
            return ops.zeros_like(out)
    return out


def chain_matmul(*matrices, out=None):
    """torch.chain_matmul (deprecated product of 2-D matrices): :func:`multi_dot` of the matrices in order."""
    if out is not None:
        raise TypeError("chain_matmul: out= is not supported, assign the result")
    return multi_dot(matrices)


def matrix_exp(input):
    """torch.matrix_exp / torch.linalg.matrix_exp / Tensor.matrix_exp: ``ops.matrix_exp`` has no CPU kernel in 2.10
    (Unsupported op [MatrixExp] on CPU). Scaling and squaring: A / 2^s with 1-norm <= 0.5, an order-18 Taylor
    polynomial (truncation below float64 rounding), s squarings. The 1-norm is read back to the host (s is a
    Python int)."""
    A = input
    n = A.shape[-1]
    bound = float(ops.abs(A).sum(-2).max()) if A.size else 0.0
    s = max(0, int(math.ceil(math.log2(bound / 0.5)))) if bound > 0.5 else 0
    x = A / (2.0 ** s)
    eye = ops.broadcast_to(ops.eye(n, n, A.dtype), A.shape)
    result = eye
    for k in range(18, 0, -1):  # Horner: I + X/1 (I + X/2 (I + ...))
        result = eye + ops.matmul(x, result) / k
    for _ in range(s):
        result = ops.matmul(result, result)
    return result


def vander(x, *, N=None):
    """torch.linalg.vander: powers x^0 .. x^(N-1) in increasing order along the last dim (batched x allowed);
    ops.vander has decreasing powers and 1-D input only. Built by cumulative products, as torch does."""
    if x.ndim == 0:
        x = x.reshape(1)  # torch treats a 0-d input as one value
    n = x.shape[-1] if N is None else N
    if n <= 1:
        return ops.ones(x.shape + (n,), x.dtype)
    cols = ops.broadcast_to(x.expand_dims(-1), x.shape + (n - 1,))
    return ops.cat([ops.ones(x.shape + (1,), x.dtype), ops.cumprod(cols, -1)], -1)


# ---------------------------------------------------------------------------------------------------------------
# torch.linalg's norms. Over an empty extent MindSpore 2.10's norm kernels return uninitialised memory
# (torch.linalg.norm of a (0, 3) tensor is 0; MindSpore gave 0.355): the norms with an identity give torch's 0, the
# others raise, as torch does for the inf norms. A complex input's norm is real (that of its magnitudes), and the
# singular-value norms of complex and float64 input come from ops.svd (mindport.runtime.math._singular_norm).

_INF = float("inf")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002 - torch's argument name
    """torch.linalg.vector_norm: ops.vector_norm of the (real) magnitudes, 0 over an empty extent; the inf norms
    raise there, as torch."""
    if ord == _INF or ord == -_INF:
        _nonempty_extent("linalg.vector_norm", x, dim)
    return _or_empty(ops.vector_norm(real_abs(x), ord, dim, keepdim, dtype=dtype), x, dim, keepdim, 0)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):  # noqa: A002
    """torch.linalg.matrix_norm: ops.matrix_norm of the magnitudes; ord 2 / -2 / 'nuc' of complex or float64 input
    from the singular values (ops.matrix_norm drops the imaginary part and computes float64 in float32 there). The
    Frobenius and nuclear norms of an empty matrix are 0 (torch); the other orders raise there."""
    if dtype is not None:
        A = A.astype(dtype)
    if _empty_extent(A.shape, dim):
        if ord == "fro" or ord == "nuc":
            real = (ms.float64 if A.dtype == ms.complex128 else ms.float32) if _is_complex(A.dtype) else A.dtype
            return _or_empty(ops.zeros((), real), A, dim, keepdim, 0)
        _nonempty_extent("linalg.matrix_norm", A, dim)
    if (ord == 2 or ord == -2 or ord == "nuc") and (_is_complex(A.dtype) or A.dtype == ms.float64):
        return _singular_norm(A, ord, tuple(dim), keepdim)
    return ops.matrix_norm(real_abs(A), ord, dim, keepdim)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """torch.linalg.norm: a vector or matrix norm by ``dim``/``ord`` (ops.norm of the magnitudes; the matrix ord 2 /
    -2 / 'nuc' through :func:`matrix_norm`). Over an empty extent the vector norms (ord None or a finite number, a
    vector or a single dim) and the Frobenius/nuclear norms are 0 as in torch, the other orders raise."""
    matrix = (dim is None and ord is not None and A.ndim == 2) or (isinstance(dim, (tuple, list)) and len(dim) == 2)
    if matrix and (ord == 2 or ord == -2 or ord == "nuc"):
        return matrix_norm(A, ord, (-2, -1) if dim is None else tuple(dim), keepdim, dtype=dtype)
    result = ops.norm(real_abs(A), ord, dim, keepdim, dtype=dtype)
    if not _empty_extent(A.shape, dim):
        return result
    if ord is None or ord == "fro" or ord == "nuc" or (not matrix and ord != _INF and ord != -_INF):
        return _or_empty(result, A, dim, keepdim, 0)
    _nonempty_extent("linalg.norm", A, dim)
    return result


def nuclear_norm(input, dim=None, keepdim=False):
    """torch.nuclear_norm (sum of singular values; also called as nuclear_norm(input, keepdim)): MindSpore has it
    only as ``ops.matrix_norm(A, 'nuc')``; computed by :func:`matrix_norm`."""
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)
