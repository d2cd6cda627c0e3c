"""dot_general, dot, einsum, convolution, fft, cholesky, triangular_solve, and
the LAPACK custom calls of JAX's linalg on CPU (with jaxlib's own
@tridiagonal_solve_perturbed_ffi, computed here: perturbed_tridiagonal_solve).

dot_general becomes one (batched) matmul: operands are transposed to
(batch, free, contracting) / (batch, contracting, free) and flattened, so
numpy hands BLAS the biggest GEMMs the op allows. A small float dot sums
its products one contracting index after the other instead, each product
and each sum rounded, as the StableHLO reference interpreter does: BLAS
fuses multiply and add and blocks the sum, so a dot computed in pieces on
several devices and summed would not give the sequential result bit for
bit (Shardy's executable tests compare them exactly). Convolution accumulates one
GEMM per kernel window offset over strided views of the padded input.
"""
from __future__ import annotations

import itertools

import numpy as np

from sdylog.simulate.dtypes import compute_dtype, is_bool
from sdylog.simulate.registry import lowering


def _compute_type(result_dtype):
    if is_bool(result_dtype):
        return np.dtype(np.int32)
    return compute_dtype(result_dtype)


def _blas_ready(x: np.ndarray) -> np.ndarray:
    """A 2-D/3-D operand BLAS can take without numpy's slow fallback loop."""
    if x.flags.c_contiguous or x.flags.f_contiguous:
        return x
    it = x.itemsize
    s1, s2 = x.strides[-2:]
    n1, n2 = x.shape[-2:]
    if (s2 == it and s1 >= it * max(n2, 1)) or (s1 == it and s2 >= it * max(n1, 1)):
        return x
    return np.ascontiguousarray(x)


# Multiply-adds below which a float dot sums in the reference interpreter's order.
_IN_ORDER_WORK = 1 << 16


def in_order_matmul_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for (B, M, K) and (B, K, N): from zero, each product rounded,
    then added in the order of k, each sum rounded."""
    r = np.zeros((a.shape[0], a.shape[1], b.shape[2]), np.result_type(a, b))
    for k in range(a.shape[2]):
        r += a[:, :, k:k + 1] * b[:, k:k + 1, :]
    return r


def in_order_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """in_order_matmul_reference with every product computed at once, by one
    multiply into a (K, B, M, N) array, then summed over k by one add.reduce
    from zero: numpy sums in order along an axis that is not the fast one in
    memory (pairwise summation is only used along the fast axis: numpy.sum's
    notes), so each element is the loop's sum. With a single element (B, M,
    N all 1) k would be the fast axis: the loop sums it."""
    (B, M, K), N = a.shape, b.shape[2]
    if B * M * N == 1:
        return in_order_matmul_reference(a, b)
    products = np.empty((K, B, M, N), np.result_type(a, b))
    np.multiply(a.transpose(2, 0, 1)[:, :, :, None], b.transpose(1, 0, 2)[:, :, None, :], out=products)
    return np.add.reduce(products, axis=0, initial=0)


class DotPlan:
    """Permutations and shapes for one dot_general, fixed at compile time."""

    def __init__(self, lhs_shape, rhs_shape, lb, rb, lc, rc, result_shape):
        lf = [d for d in range(len(lhs_shape)) if d not in lb and d not in lc]
        rf = [d for d in range(len(rhs_shape)) if d not in rb and d not in rc]
        size = lambda shape, dims: int(np.prod([shape[d] for d in dims], dtype=np.int64))
        self.B = size(lhs_shape, lb)
        self.M = size(lhs_shape, lf)
        self.K = size(lhs_shape, lc)
        self.N = size(rhs_shape, rf)
        self.lperm = tuple(lb) + tuple(lf) + tuple(lc)
        self.rperm = tuple(rb) + tuple(rc) + tuple(rf)
        self.lid = self.lperm == tuple(range(len(lhs_shape)))
        self.rid = self.rperm == tuple(range(len(rhs_shape)))
        self.result_shape = tuple(result_shape)
        self.batched = bool(lb)
        self.in_order = self.B * self.M * self.N * self.K <= _IN_ORDER_WORK

    def __call__(self, a, b, cdt):
        a = np.asarray(a)
        b = np.asarray(b)
        if a.dtype != cdt:
            a = a.astype(cdt)
        if b.dtype != cdt:
            b = b.astype(cdt)
        if not self.lid:
            a = np.transpose(a, self.lperm)
        if not self.rid:
            b = np.transpose(b, self.rperm)
        if self.in_order and cdt.kind == "f":
            r = in_order_matmul(a.reshape(self.B, self.M, self.K), b.reshape(self.B, self.K, self.N))
        elif self.batched:
            a = _blas_ready(a.reshape(self.B, self.M, self.K))
            b = _blas_ready(b.reshape(self.B, self.K, self.N))
            r = np.matmul(a, b)
        else:
            a = _blas_ready(a.reshape(self.M, self.K))
            b = _blas_ready(b.reshape(self.K, self.N))
            r = np.dot(a, b)
        return r.reshape(self.result_shape)


def _finish(r, out_dtype):
    if r.dtype == out_dtype:
        return r
    if is_bool(out_dtype):
        return r != 0
    return r.astype(out_dtype)


def _contraction_step(ctx, plan):
    """The step of a two-operand op computed by `plan(lhs, rhs, compute_dtype)` in
    a wider type, then rounded to the result type."""
    out = ctx.result_dtype
    cdt = _compute_type(out)
    a, b = ctx.ins()
    o = ctx.out_slot()

    def step(env, rt):
        env[o] = _finish(plan(env[a], env[b], cdt), out)
    return step


@lowering("stablehlo.dot_general", alias="fresh")
def lower_dot_general(ctx):
    from jaxlib.mlir.dialects import stablehlo as shlo
    d = shlo.DotDimensionNumbers(ctx.attr("dot_dimension_numbers"))
    lhs, rhs = ctx.operands
    plan = DotPlan(ctx.shape(lhs), ctx.shape(rhs), list(d.lhs_batching_dimensions),
                   list(d.rhs_batching_dimensions), list(d.lhs_contracting_dimensions),
                   list(d.rhs_contracting_dimensions), ctx.result_shape)
    return _contraction_step(ctx, plan)


@lowering("stablehlo.dot", alias="fresh")
def lower_dot(ctx):
    lhs, rhs = ctx.operands
    ls, rs = ctx.shape(lhs), ctx.shape(rhs)
    plan = DotPlan(ls, rs, [], [], [len(ls) - 1], [0], ctx.result_shape)
    return _contraction_step(ctx, plan)


@lowering("stablehlo.einsum", "stablehlo.unary_einsum", alias="fresh")
def lower_einsum(ctx):
    """numpy's einsum takes StableHLO's config ("ab,bc->ac", "ab->a") as is."""
    from jaxlib.mlir import ir
    config = ir.StringAttr(ctx.attr("einsum_config")).value
    out = ctx.result_dtype
    cdt = _compute_type(out)
    ins, o = ctx.ins(), ctx.out_slot()

    def step(env, rt):
        args = [np.asarray(env[i]).astype(cdt, copy=False) for i in ins]
        env[o] = _finish(np.asarray(np.einsum(config, *args)), out)
    return step


class ConvPlan:
    def __init__(self, ctx):
        from jaxlib.mlir.dialects import stablehlo as shlo
        dn = shlo.ConvDimensionNumbers(ctx.attr("dimension_numbers"))
        self.in_b, self.in_f = dn.input_batch_dimension, dn.input_feature_dimension
        self.in_s = list(dn.input_spatial_dimensions)
        self.k_i, self.k_o = dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension
        self.k_s = list(dn.kernel_spatial_dimensions)
        self.out_b, self.out_f = dn.output_batch_dimension, dn.output_feature_dimension
        self.out_s = list(dn.output_spatial_dimensions)
        n = len(self.in_s)
        self.strides = ctx.ints("window_strides") or [1] * n
        pad = ctx.attr("padding")
        if pad is None:
            self.padding = [(0, 0)] * n
        else:
            flat = np.array(pad).reshape(-1)
            self.padding = [(int(flat[2 * i]), int(flat[2 * i + 1])) for i in range(n)]
        self.lhs_dil = ctx.ints("lhs_dilation") or [1] * n
        self.rhs_dil = ctx.ints("rhs_dilation") or [1] * n
        rev = ctx.attr("window_reversal")
        if rev is None:
            self.reversal = [False] * n
        else:
            from sdylog.simulate.program import bool_list
            self.reversal = bool_list(rev)
        self.fgc = ctx.int_attr("feature_group_count", 1)
        self.bgc = ctx.int_attr("batch_group_count", 1)
        self.result_shape = ctx.result_shape

    def __call__(self, lhs, rhs, cdt):
        from sdylog.simulate.ops.shapes import pad_array
        x = np.asarray(lhs).astype(cdt, copy=False)
        k = np.asarray(rhs).astype(cdt, copy=False)
        x = np.transpose(x, [self.in_b, self.in_f] + self.in_s)       # N, C, S...
        k = np.transpose(k, [self.k_o, self.k_i] + self.k_s)          # O, I, K...
        for d, r in enumerate(self.reversal):
            if r:
                k = np.flip(k, 2 + d)
        n = len(self.in_s)
        if any(p != (0, 0) for p in self.padding) or any(d != 1 for d in self.lhs_dil):
            x = pad_array(x, np.zeros((), dtype=cdt), [0, 0] + [p[0] for p in self.padding],
                          [0, 0] + [p[1] for p in self.padding], [0, 0] + [d - 1 for d in self.lhs_dil])
        N, C = x.shape[:2]
        O, I = k.shape[:2]
        ksp = k.shape[2:]
        out_sp = []
        for d in range(n):
            span = (ksp[d] - 1) * self.rhs_dil[d] + 1
            out_sp.append(max(0, (x.shape[2 + d] - span) // self.strides[d] + 1))
        G, BG = self.fgc, self.bgc
        Cg, Og = C // G, O // G
        Nb, Ob = N // BG, O // BG
        P = int(np.prod(out_sp, dtype=np.int64))
        if BG > 1:
            acc = np.zeros((BG, Nb * P, Ob), dtype=cdt)
            kg = k.reshape((BG, Ob, I) + ksp)
        else:
            acc = np.zeros((G, N * P, Og), dtype=cdt)
            kg = k.reshape((G, Og, I) + ksp)
        for offs in itertools.product(*[range(s) for s in ksp]):
            sl = tuple(slice(o * rd, o * rd + (m - 1) * st + 1 if m > 0 else o * rd, st)
                       for o, rd, m, st in zip(offs, self.rhs_dil, out_sp, self.strides))
            patch = x[(slice(None), slice(None)) + sl]                   # N, C, out...
            w = kg[(slice(None), slice(None), slice(None)) + offs]        # G, Og, Cg
            if BG > 1:
                p = patch.reshape(BG, Nb, C, P).transpose(0, 1, 3, 2).reshape(BG, Nb * P, C)
            else:
                p = patch.reshape(N, G, Cg, P).transpose(1, 0, 3, 2).reshape(G, N * P, Cg)
            acc += np.matmul(p, np.transpose(w, (0, 2, 1)))
        if BG > 1:
            r = acc.reshape(BG, Nb, P, Ob).transpose(1, 0, 3, 2).reshape((Nb, O) + tuple(out_sp))
        else:
            r = acc.reshape(G, N, P, Og).transpose(1, 0, 3, 2).reshape((N, O) + tuple(out_sp))
        order = [self.out_b, self.out_f] + self.out_s   # result dim of each of r's axes
        inv = [order.index(i) for i in range(len(order))]
        return np.transpose(r, inv).reshape(self.result_shape)


@lowering("stablehlo.convolution", alias="fresh")
def lower_convolution(ctx):
    plan = ConvPlan(ctx)
    return _contraction_step(ctx, plan)


@lowering("stablehlo.fft", alias="fresh")
def lower_fft(ctx):
    from jaxlib.mlir.dialects import stablehlo as shlo
    kind = shlo.FftTypeAttr(ctx.attr("fft_type")).value
    lengths = ctx.ints("fft_length")
    rank = len(ctx.shape(ctx.operands[0]))
    axes = tuple(range(rank - len(lengths), rank))
    out = ctx.result_dtype
    a, o = ctx.in_slot(), ctx.out_slot()
    fn = {"FFT": lambda x: np.fft.fftn(x, axes=axes),
          "IFFT": lambda x: np.fft.ifftn(x, axes=axes),
          "RFFT": lambda x: np.fft.rfftn(x, s=lengths, axes=axes),
          "IRFFT": lambda x: np.fft.irfftn(x, s=lengths, axes=axes)}[kind]

    def step(env, rt):
        env[o] = np.asarray(fn(np.asarray(env[a]))).astype(out)
    return step


@lowering("stablehlo.cholesky", alias="fresh")
def lower_cholesky(ctx):
    lower = ctx.bool_attr("lower", False)
    out = ctx.result_dtype
    cdt = _compute_type(out)
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        x = np.asarray(env[a]).astype(cdt)
        try:
            low = np.linalg.cholesky(x)
        except np.linalg.LinAlgError:
            low = np.full(x.shape, np.nan, dtype=cdt)
        r = low if lower else np.conj(np.swapaxes(low, -1, -2))
        env[o] = r.astype(out)
    return step


@lowering("stablehlo.triangular_solve", alias="fresh")
def lower_triangular_solve(ctx):
    from jaxlib.mlir.dialects import stablehlo as shlo
    left = ctx.bool_attr("left_side")
    lower = ctx.bool_attr("lower")
    unit = ctx.bool_attr("unit_diagonal")
    ta = ctx.attr("transpose_a")
    transpose = shlo.TransposeAttr(ta).value if ta is not None else "NO_TRANSPOSE"
    out = ctx.result_dtype
    cdt = _compute_type(out)
    a, b = ctx.ins()
    o = ctx.out_slot()

    def step(env, rt):
        m = np.asarray(env[a]).astype(cdt)
        m = np.tril(m) if lower else np.triu(m)
        if unit:
            eye = np.eye(m.shape[-1], dtype=bool)
            m = np.where(eye, np.ones((), cdt), m)
        if transpose == "TRANSPOSE":
            m = np.swapaxes(m, -1, -2)
        elif transpose == "ADJOINT":
            m = np.conj(np.swapaxes(m, -1, -2))
        rhs = np.asarray(env[b]).astype(cdt)
        if left:
            x = np.linalg.solve(m, rhs)
        else:
            x = np.swapaxes(np.linalg.solve(np.swapaxes(m, -1, -2), np.swapaxes(rhs, -1, -2)), -1, -2)
        env[o] = x.astype(out)
    return step


# --- LAPACK custom calls (what JAX's linalg lowers to on CPU) --------------------------
# custom_call @lapack_<t><routine>_ffi, t the element type (s, d, c, z). Each
# matrix of the batch (all dimensions but the last two) goes through SciPy's
# LAPACK wrapper of the same routine; mhlo.backend_config holds the options
# as ASCII codes (uplo 'L'/'U', side 'L'/'R', trans_x 'N'/'T'/'C', diag
# 'N'/'U', mode 'V'/'N').

def _lapack_options(ctx) -> dict:
    from jaxlib.mlir import ir
    config = ctx.attr("mhlo.backend_config")
    if not isinstance(config, ir.DictAttr):
        return {}
    return {a.name: chr(ir.IntegerAttr(a.attr).value) for a in config
            if isinstance(a.attr, ir.IntegerAttr)}


def _per_matrix(ctx, compute, batch=None):
    """A step applying compute(*matrices) -> [result per ctx result, batch
    elements only] to each matrix of the batch of every operand (`batch`:
    the batch dimensions, by default all but operand 0's last two)."""
    ins, outs = ctx.ins(), ctx.outs()
    if batch is None:
        batch = ctx.shape(ctx.operands[0])[:-2]
    shapes = [ctx.shape(r) for r in ctx.results]
    dtypes = [ctx.dtype(r) for r in ctx.results]
    cdt = compute_dtype(ctx.dtype(ctx.operands[0]))

    def step(env, rt):
        xs = [np.asarray(env[i]) for i in ins]
        xs = [x.astype(cdt, copy=False) if x.dtype.kind in "fc" else x for x in xs]
        rs = [np.empty(s, dtype=d) for s, d in zip(shapes, dtypes)]
        for index in np.ndindex(*batch):
            for r, value in zip(rs, compute(*(x[index] for x in xs))):
                r[index] = value
        for s, r in zip(outs, rs):
            env[s] = r
    return step


def _lapack_routine(ctx, target: str):
    import scipy.linalg.lapack as lapack
    return getattr(lapack, target[len("lapack_"):-len("_ffi")])


def _lapack_potrf(ctx, target):
    """Cholesky: the factor in the `uplo` triangle, the other triangle kept
    from the operand (the result aliases it); info."""
    fn, lower = _lapack_routine(ctx, target), _lapack_options(ctx).get("uplo", "L") == "L"
    return _per_matrix(ctx, lambda a: fn(a, lower=lower, clean=0))


def _lapack_syevd(ctx, target):
    """Symmetric / Hermitian eigendecomposition: eigenvectors, eigenvalues, info."""
    opts = _lapack_options(ctx)
    fn = _lapack_routine(ctx, target)
    lower, vectors = opts.get("uplo", "L") == "L", opts.get("mode", "V") == "V"

    def compute(a):
        w, v, info = fn(a, compute_v=int(vectors), lower=int(lower))
        return (v if vectors else a), w, info
    return _per_matrix(ctx, compute)


def _lapack_geqrf(ctx, target):
    """QR: R above the diagonal and the Householder vectors below it; their taus."""
    fn = _lapack_routine(ctx, target)
    return _per_matrix(ctx, lambda a: fn(a)[:2])


def _lapack_orgqr(ctx, target):
    """Q from geqrf's Householder vectors and taus."""
    fn = _lapack_routine(ctx, target)
    return _per_matrix(ctx, lambda a, tau: fn(a, tau)[:1])


def _lapack_trsm(ctx, target):
    """Triangular solve: op(a) x = b (side 'L') or x op(a) = b (side 'R')."""
    from scipy.linalg import solve_triangular
    opts = _lapack_options(ctx)
    left, lower = opts.get("side", "L") == "L", opts.get("uplo", "L") == "L"
    trans = {"N": 0, "T": 1, "C": 2}[opts.get("trans_x", "N")]
    unit = opts.get("diag", "N") == "U"

    def compute(a, b):
        if left:
            return [solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)]
        # x op(a) = b  <=>  op(a)^T x^T = b^T; transposing op(a) flips the transpose it
        # takes (conjugating both sides for 'C').
        if trans == 2:
            return [np.conj(solve_triangular(a, np.conj(b).T, trans=0, lower=lower, unit_diagonal=unit).T)]
        return [solve_triangular(a, b.T, trans=1 - trans, lower=lower, unit_diagonal=unit).T]
    return _per_matrix(ctx, compute)


def _lapack_getrf(ctx, target):
    """LU with partial pivoting, P a = L U: L (unit diagonal, not stored)
    below the diagonal and U on and above it; the pivots as LAPACK numbers
    them (row i was swapped with row ipiv[i], from 1: JAX subtracts 1);
    info (> 0: U[info-1, info-1] is zero, the factors are still returned;
    JAX only refuses info < 0). SciPy's wrapper counts the pivots from 0."""
    fn = _lapack_routine(ctx, target)
    pivots = ctx.shape(ctx.results[1])[-1]

    def compute(a):
        if a.size == 0:   # (LAPACK would call lda = 0 illegal)
            return a, np.zeros(pivots, np.int32), 0
        lu, ipiv, info = fn(a)
        return lu, ipiv + 1, info
    return _per_matrix(ctx, compute)


def _lapack_gtsv(ctx, target):
    """Tridiagonal solve A x = b, A's diagonals dl (A[i, i-1], dl[0] unused),
    d, du (A[i, i+1], du[m-1] unused), b (m, nrhs): the results are what
    LAPACK leaves in the four (JAX's kernel hands it dl + 1, as LAPACK's
    dl has m - 1 elements: the second superdiagonal of U; U's diagonal; its
    first superdiagonal; x) and info (> 0: U[info-1, info-1] is zero, and b
    stops being solved there; JAX then puts NaN in x)."""
    fn = _lapack_routine(ctx, target)
    batch = ctx.shape(ctx.operands[3])[:-2]

    def compute(dl, d, du, b):
        if d.size <= 1:   # (SciPy's wrapper wants m - 1 > 0 elements in dl)
            if d.size == 0:
                return dl, d, du, b, 0
            if d[0] == 0:
                return dl, d, du, b, 1
            return dl, d, du, b / d[0], 0
        dl2, d_out, du_out, x, info = fn(dl[1:], d, du[:-1], b)
        return (np.concatenate([dl[:1], dl2]), d_out, np.concatenate([du_out, du[-1:]]), x, info)
    return _per_matrix(ctx, compute, batch)


def _pivot_made_safe(pivot, row, perturb, safemin, bignum):
    """The pivot of a row of the back substitution, and the row, changed
    where row / pivot could overflow (LAPACK's xLAGTS with JOB = -1): a
    pivot of magnitude below 1 is pushed away from zero (in the direction
    of its real part's sign) by `perturb`, then 2, 4, ... times it, until
    dividing by it is safe; a nonzero pivot below safemin that the row does
    not need pushed is scaled up by bignum with the row instead."""
    size = abs(pivot)
    if size >= 1:
        return pivot, row
    step = np.copysign(max(abs(perturb), safemin), pivot.real)
    largest = abs(row).max() if row.size else size.dtype.type(0)
    while size < 1:
        if size < safemin:
            if size == 0 or largest * safemin > size:
                pivot, step = pivot + step, step * 2
            else:
                return pivot * bignum, row * bignum
        elif largest > size * bignum:
            pivot, step = pivot + step, step * 2
        else:
            break
        size = abs(pivot)
    return pivot, row


def perturbed_tridiagonal_solve(dl, d, du, b):
    """x with A x = b for the tridiagonal A of diagonals dl (A[i, i-1]), d,
    du (A[i, i+1]), b of shape (m, nrhs), by LU with row pivoting (each
    step keeps the row whose leading entry is the larger relative to its
    row's size), solving b along; where U's diagonal holds a zero or tiny
    pivot (A singular, or nearly), the pivot is perturbed by about eps *
    max |U| (_pivot_made_safe) so that x stays finite: what JAX's
    `tridiagonal_solve(..., perturb_singular=True)` computes on CPU, for
    inverse iteration (LAPACK's xLAGTF then xLAGTS, fused)."""
    real = np.empty(0, d.dtype).real.dtype.type
    info = np.finfo(real)
    eps, one = real(info.eps), real(1)
    small = one / real(info.max)
    safemin = real(info.tiny) if small < real(info.tiny) else small * (one + eps)
    bignum = one / safemin
    m = d.shape[0]
    x = np.array(b, copy=True)
    if m == 0:
        return x
    if m == 1:
        pivot, row = _pivot_made_safe(d[0], b[0], eps * abs(d[0]), safemin, bignum)
        x[0] = row / pivot
        return x
    # U's diagonal, first and second superdiagonals; x holds the rows of b
    # as the elimination leaves them (swapped and reduced)
    u0, u1, u2 = np.zeros_like(d), np.zeros_like(d), np.zeros_like(d)
    u0[0], u1[0] = d[0], du[0]
    largest_u = max(abs(u0[0]), abs(u1[0]))
    size_k = abs(u0[0]) + abs(u1[0])      # row k's size, as it stands
    for k in range(m - 1):
        last = k == m - 2
        u0[k + 1] = d[k + 1]
        size_next = abs(dl[k + 1]) + abs(u0[k + 1]) + (real(0) if last else abs(du[k + 1]))
        if dl[k + 1] == 0:                  # nothing to eliminate
            size_k = size_next
            u1[k + 1], u2[k] = du[k + 1], 0
            x[k + 1] = b[k + 1]
        elif abs(dl[k + 1]) / size_next <= (real(0) if u0[k] == 0 else abs(u0[k]) / size_k):
            size_k = size_next              # row k stays the pivot row
            factor = dl[k + 1] / u0[k]
            u0[k + 1] -= factor * u1[k]
            u1[k + 1], u2[k] = du[k + 1], 0
            x[k + 1] = b[k + 1] - factor * x[k]
        else:                               # row k + 1 becomes the pivot row
            factor = u0[k] / dl[k + 1]
            above = u1[k]
            u0[k], u1[k] = dl[k + 1], d[k + 1]
            u0[k + 1] = above - factor * d[k + 1]
            if not last:
                u2[k], u1[k + 1] = du[k + 1], -factor * du[k + 1]
            x[k + 1] = x[k] - factor * b[k + 1]
            x[k] = b[k + 1]
            size_k = abs(u0[k + 1]) + abs(u1[k + 1])
        if not last:
            largest_u = max(largest_u, abs(u0[k]), abs(u1[k]), abs(u2[k]))
    largest_u = max(largest_u, abs(u0[m - 1]))
    perturb = eps * largest_u
    for k in range(m - 1, -1, -1):
        row = x[k]
        if k + 1 < m:
            row = row - u1[k] * x[k + 1]
        if k + 2 < m:
            row = row - u2[k] * x[k + 2]
        pivot, row = _pivot_made_safe(u0[k], row, perturb, safemin, bignum)
        x[k] = row * (one / pivot)
    return x


def _tridiagonal_solve_perturbed(ctx):
    """JAX's `tridiagonal_solve(dl, d, du, b, perturb_singular=True)` on CPU
    (perturbed_tridiagonal_solve on each matrix of the batch): one result,
    x, of b's shape."""
    return _per_matrix(ctx, lambda dl, d, du, b: [perturbed_tridiagonal_solve(dl, d, du, b)],
                       ctx.shape(ctx.operands[3])[:-2])


_REAL = {"potrf": _lapack_potrf, "syevd": _lapack_syevd, "geqrf": _lapack_geqrf, "orgqr": _lapack_orgqr,
         "trsm": _lapack_trsm, "getrf": _lapack_getrf, "gtsv": _lapack_gtsv}
_COMPLEX = {"potrf": _lapack_potrf, "heevd": _lapack_syevd, "geqrf": _lapack_geqrf, "ungqr": _lapack_orgqr,
            "trsm": _lapack_trsm, "getrf": _lapack_getrf, "gtsv": _lapack_gtsv}


def _register_lapack():
    from sdylog.simulate.registry import custom_call_target
    for letters, routines in (("sd", _REAL), ("cz", _COMPLEX)):
        for letter in letters:
            for routine, build in routines.items():
                target = f"lapack_{letter}{routine}_ffi"
                custom_call_target(target)(lambda ctx, target=target, build=build: build(ctx, target))
    custom_call_target("tridiagonal_solve_perturbed_ffi")(_tridiagonal_solve_perturbed)


_register_lapack()
