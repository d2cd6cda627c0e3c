"""Ops with a computation region: reduce, reduce_window, select_and_scatter,
sort, and the shared `Combiner` that runs a reduction body on whole arrays.

A body made of element-wise ops runs vectorized: its block arguments receive
arrays instead of scalars. A body that is one known binary op per result
(add, maximum, ...) becomes the numpy ufunc itself (`ufunc.reduce`,
`ufunc.at`). Other bodies run element by element (slow, but exact).
"""
from __future__ import annotations

import itertools

import numpy as np

from sdylog.simulate.dtypes import compute_dtype, is_bool, is_float
from sdylog.simulate.registry import lowering

_SIMPLE = {"stablehlo.add": ("add", np.add), "stablehlo.multiply": ("mul", np.multiply),
           "stablehlo.maximum": ("max", np.maximum), "stablehlo.minimum": ("min", np.minimum),
           "stablehlo.and": ("and", np.bitwise_and), "stablehlo.or": ("or", np.bitwise_or),
           "stablehlo.xor": ("xor", np.bitwise_xor)}
_BOOL = {"add": np.logical_or, "mul": np.logical_and, "max": np.logical_or, "min": np.logical_and,
         "and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}
_VECTORIZABLE_EXTRA = {"stablehlo.constant"}


def _region_ops(region):
    return list(region.blocks[0].operations)


def simple_ufuncs(region, n: int, dtypes) -> list | None:
    """[ufunc per result] if the body is `return op_k(arg_k, arg_{n+k})` for each k."""
    block = region.blocks[0]
    args = list(block.arguments)
    ops = _region_ops(region)
    ret = ops[-1]
    if len(ops) != n + 1 or len(ret.operands) != n:
        return None
    ufs = []
    for k, v in enumerate(ret.operands):
        owner = v.owner
        if not hasattr(owner, "name") and hasattr(owner, "operation"):
            owner = owner.operation
        name = getattr(owner, "name", None)
        if name not in _SIMPLE or len(owner.operands) != 2:
            return None
        pair = {owner.operands[0], owner.operands[1]}
        if pair != {args[k], args[n + k]}:
            return None
        kind, uf = _SIMPLE[name]
        dt = dtypes[k]
        if is_bool(dt):
            uf = _BOOL[kind]
        elif kind in ("and", "or", "xor") and is_float(dt):
            return None
        ufs.append(uf)
    return ufs


def is_vectorizable(region) -> bool:
    from sdylog.simulate.ops.elementwise import ELEMENTWISE_OPS
    for op in _region_ops(region)[:-1]:
        name = op.operation.name
        if name not in ELEMENTWISE_OPS and name not in _VECTORIZABLE_EXTRA:
            return False
        if op.operation.regions:
            return False
    return True


def _is_replace(region, n: int) -> bool:
    """A scatter body that returns the update: `return %update`."""
    block = region.blocks[0]
    ops = _region_ops(region)
    return len(ops) == 1 and list(ops[0].operands) == list(block.arguments)[n:2 * n]


class Combiner:
    """A body (n accumulators, n values) -> n values, applied to arrays."""

    def __init__(self, ctx, region, n: int, dtypes):
        self.n = n
        self.dtypes = [np.dtype(d) for d in dtypes]
        self.ufuncs = simple_ufuncs(region, n, self.dtypes)
        self.replace = _is_replace(region, n)
        self.vectorized = is_vectorizable(region)
        self.body = ctx.compiler.compile_region(region)
        self.ctx = ctx

    # element-wise application ------------------------------------------------------
    def apply(self, accs, vals, env, rt) -> list:
        if self.ufuncs is not None:
            out = []
            for uf, a, b, dt in zip(self.ufuncs, accs, vals, self.dtypes):
                cdt = compute_dtype(dt)
                if cdt != dt:
                    r = uf(np.asarray(a, dtype=cdt), np.asarray(b, dtype=cdt)).astype(dt)
                else:
                    with np.errstate(all="ignore"):
                        r = uf(a, b)
                out.append(np.asarray(r, dtype=dt) if getattr(r, "dtype", None) != dt else r)
            return out
        if self.vectorized:
            res = self.body.run(env, rt, list(accs) + list(vals))
            shape = np.broadcast_shapes(*[np.shape(x) for x in list(accs) + list(vals)])
            return [np.broadcast_to(np.asarray(r, dtype=dt), shape) for r, dt in zip(res, self.dtypes)]
        return self._elementwise(accs, vals, env, rt)

    def _elementwise(self, accs, vals, env, rt) -> list:
        arrs = [np.asarray(x) for x in list(accs) + list(vals)]
        shape = np.broadcast_shapes(*[a.shape for a in arrs])
        arrs = [np.broadcast_to(a, shape) for a in arrs]
        outs = [np.empty(shape, dtype=dt) for dt in self.dtypes]
        for idx in np.ndindex(*shape):
            res = self.body.run(env, rt, [a[idx] for a in arrs])
            for o, r in zip(outs, res):
                o[idx] = r
        return outs

    # reductions ----------------------------------------------------------------------
    def reduce(self, xs, axes, inits, env, rt) -> list:
        """Reduce each array in `xs` over `axes`, then fold in the init values."""
        axes = tuple(sorted(axes))
        if any(np.shape(xs[0])[a] == 0 for a in axes):
            kept = tuple(n for d, n in enumerate(np.shape(xs[0])) if d not in axes)
            return [np.array(np.broadcast_to(np.asarray(i), kept), dtype=dt) for i, dt in zip(inits, self.dtypes)]
        if self.ufuncs is not None:
            red = []
            for uf, x, dt in zip(self.ufuncs, xs, self.dtypes):
                cdt = compute_dtype(dt)
                x = np.asarray(x)
                if cdt != dt:
                    x = x.astype(cdt)
                with np.errstate(all="ignore"):
                    r = uf.reduce(x, axis=axes, dtype=cdt) if axes else x
                red.append(np.asarray(r).astype(dt) if cdt != dt else np.asarray(r))
            return self.apply([np.asarray(i) for i in inits], red, env, rt)
        xs = [np.asarray(x) for x in xs]
        rank = xs[0].ndim
        keep = [d for d in range(rank) if d not in axes]
        kept_shape = tuple(xs[0].shape[d] for d in keep)
        k = int(np.prod([xs[0].shape[d] for d in axes], dtype=np.int64))
        flat = [np.transpose(x, keep + list(axes)).reshape(kept_shape + (k,)) for x in xs]
        inits_b = [np.broadcast_to(np.asarray(i), kept_shape) for i in inits]
        if k == 0:
            return [np.array(i) for i in inits_b]
        folded = self.fold_last(flat, env, rt)
        return [np.asarray(r) for r in self.apply(inits_b, folded, env, rt)]

    def fold_last(self, flat, env, rt) -> list:
        """Pairwise (order-keeping) reduction of the last axis; it must have size >= 1."""
        k = flat[0].shape[-1]
        while k > 1:
            h = k // 2
            left = [x[..., 0:2 * h:2] for x in flat]
            right = [x[..., 1:2 * h:2] for x in flat]
            comb = self.apply(left, right, env, rt)
            if k % 2:
                comb = [np.concatenate([np.asarray(c), x[..., k - 1:k]], axis=-1) for c, x in zip(comb, flat)]
            flat = comb
            k = flat[0].shape[-1]
        return [x[..., 0] for x in flat]

    # scatter ---------------------------------------------------------------------------
    def scatter(self, results, where, vals, env, rt) -> None:
        """results[where] = body(results[where], vals), duplicates combined in order."""
        if vals and vals[0].size == 0:
            return
        if self.ufuncs is not None:
            for r, uf, v, dt in zip(results, self.ufuncs, vals, self.dtypes):
                cdt = compute_dtype(dt)
                if cdt != dt:
                    tmp = r.astype(cdt)
                    uf.at(tmp, where, v.astype(cdt))
                    r[...] = tmp.astype(dt)
                else:
                    with np.errstate(all="ignore"):
                        uf.at(r, where, v)
            return
        if self.replace:
            for r, v in zip(results, vals):
                r[where] = v
            return
        # rounds: in each, the first remaining update of every target index
        shape = results[0].shape
        flat_idx = np.ravel_multi_index(where, shape) if where else np.zeros(len(vals[0]), np.int64)
        order = np.arange(flat_idx.size)
        remaining = order
        flats = [r.reshape(-1) for r in results]
        while remaining.size:
            ids = flat_idx[remaining]
            _, first = np.unique(ids, return_index=True)
            take = remaining[np.sort(first)]
            tgt = flat_idx[take]
            new = self.apply([f[tgt] for f in flats], [v[take] for v in vals], env, rt)
            for f, nv in zip(flats, new):
                f[tgt] = nv
            mask = np.ones(remaining.size, dtype=bool)
            mask[np.sort(first)] = False
            remaining = remaining[mask]
        for r, f in zip(results, flats):
            r[...] = f.reshape(shape)


def combiner_of(ctx, region, n: int, dtypes) -> Combiner:
    return Combiner(ctx, region, n, dtypes)


@lowering("stablehlo.reduce", alias="fresh")
def lower_reduce(ctx):
    n = len(ctx.operands) // 2
    dims = ctx.ints("dimensions")
    dtypes = [ctx.dtype(v) for v in ctx.results]
    comb = Combiner(ctx, ctx.op.regions[0], n, dtypes)
    ins, outs = ctx.ins(), ctx.outs()
    xs, inits = ins[:n], ins[n:]
    shapes = [ctx.shape(v) for v in ctx.results]

    def step(env, rt):
        res = comb.reduce([env[i] for i in xs], dims, [env[i] for i in inits], env, rt)
        for s, r, shp in zip(outs, res, shapes):
            env[s] = np.reshape(r, shp)
    return step


def _padding_pairs(ctx, rank):
    p = ctx.attr("padding")
    if p is None:
        return [(0, 0)] * rank
    vals = np.array(p).reshape(-1)
    return [(int(vals[2 * i]), int(vals[2 * i + 1])) for i in range(rank)]


def window_views(x, init, window, strides, base_dil, win_dil, padding):
    """Padded/dilated operand and, for each window offset, the strided view of it."""
    from sdylog.simulate.ops.shapes import pad_array
    x = np.asarray(x)
    rank = x.ndim
    lows = [p[0] for p in padding]
    highs = [p[1] for p in padding]
    interior = [b - 1 for b in base_dil]
    if any(lows) or any(highs) or any(interior):
        x = pad_array(x, np.asarray(init), lows, highs, interior)
    out_shape = []
    for d in range(rank):
        span = (window[d] - 1) * win_dil[d] + 1
        n = (x.shape[d] - span) // strides[d] + 1 if x.shape[d] >= span else 0
        out_shape.append(max(n, 0))
    views = []
    for offs in itertools.product(*[range(w) for w in window]):
        sl = tuple(slice(o * wd, o * wd + (n - 1) * s + 1 if n > 0 else o * wd, s)
                   for o, wd, n, s in zip(offs, win_dil, out_shape, strides))
        views.append(x[sl])
    return tuple(out_shape), views


@lowering("stablehlo.reduce_window", alias="fresh")
def lower_reduce_window(ctx):
    n = len(ctx.operands) // 2
    rank = len(ctx.shape(ctx.operands[0]))
    window = ctx.ints("window_dimensions")
    strides = ctx.ints("window_strides") or [1] * rank
    base_dil = ctx.ints("base_dilations") or [1] * rank
    win_dil = ctx.ints("window_dilations") or [1] * rank
    padding = _padding_pairs(ctx, rank)
    dtypes = [ctx.dtype(v) for v in ctx.results]
    comb = Combiner(ctx, ctx.op.regions[0], n, dtypes)
    ins, outs = ctx.ins(), ctx.outs()
    shapes = [ctx.shape(v) for v in ctx.results]

    def step(env, rt):
        inits = [np.asarray(env[i]) for i in ins[n:]]
        per_input = [window_views(env[i], init, window, strides, base_dil, win_dil, padding)
                     for i, init in zip(ins[:n], inits)]
        out_shape = per_input[0][0]
        accs = [np.broadcast_to(init, out_shape) for init in inits]
        for k in range(len(per_input[0][1])):
            accs = comb.apply(accs, [views[k] for _, views in per_input], env, rt)
        for s, a, shp, dt in zip(outs, accs, shapes, dtypes):
            env[s] = np.array(np.broadcast_to(a, shp), dtype=dt)
    return step


@lowering("stablehlo.select_and_scatter", alias="fresh")
def lower_select_and_scatter(ctx):
    operand_shape = ctx.shape(ctx.operands[0])
    rank = len(operand_shape)
    window = ctx.ints("window_dimensions") or [1] * rank
    strides = ctx.ints("window_strides") or [1] * rank
    padding = _padding_pairs(ctx, rank)
    dt = ctx.result_dtype
    select = ctx.compiler.compile_region(ctx.op.regions[0])
    select_vec = is_vectorizable(ctx.op.regions[0])
    comb = Combiner(ctx, ctx.op.regions[1], 1, [dt])
    a, src, init = ctx.ins()
    o = ctx.out_slot()

    def choose(best, cand, env, rt):
        if select_vec:
            return np.asarray(select.run(env, rt, [best, cand])[0], dtype=bool)
        out = np.empty(np.broadcast_shapes(np.shape(best), np.shape(cand)), dtype=bool)
        b, c = np.broadcast_to(best, out.shape), np.broadcast_to(cand, out.shape)
        for idx in np.ndindex(*out.shape):
            out[idx] = select.run(env, rt, [b[idx], c[idx]])[0]
        return out

    def step(env, rt):
        x = np.asarray(env[a])
        source = np.asarray(env[src])
        sshape = source.shape
        origin = [np.arange(n).reshape([n if j == d else 1 for j in range(rank)]) * strides[d] - padding[d][0]
                  for d, n in enumerate(sshape)]
        has = np.zeros(sshape, dtype=bool)
        best = np.zeros(sshape, dtype=x.dtype)
        best_pos = [np.zeros(sshape, dtype=np.int64) for _ in range(rank)]
        for offs in itertools.product(*[range(w) for w in window]):
            pos = [np.broadcast_to(origin[d] + offs[d], sshape) for d in range(rank)]
            valid = np.ones(sshape, dtype=bool)
            for d in range(rank):
                valid &= (pos[d] >= 0) & (pos[d] < operand_shape[d])
            clipped = tuple(np.clip(p, 0, operand_shape[d] - 1) for d, p in enumerate(pos))
            cand = x[clipped]
            keep = choose(best, cand, env, rt)
            take = valid & (~has | ~keep)
            best = np.where(take, cand, best)
            for d in range(rank):
                best_pos[d] = np.where(take, pos[d], best_pos[d])
            has |= valid
        out = np.full(operand_shape, np.asarray(env[init]), dtype=dt)
        where = tuple(p[has] for p in best_pos)
        comb.scatter([out], where, [source[has]], env, rt)
        env[o] = out
    return step


# --- sort --------------------------------------------------------------------------------

def _simple_sort_key(region, n: int):
    """(key operand, descending, compare type) if the comparator is one compare of a pair."""
    from jaxlib.mlir.dialects import stablehlo as shlo
    ops = _region_ops(region)
    if len(ops) != 2 or ops[0].operation.name != "stablehlo.compare":
        return None
    cmp, ret = ops[0].operation, ops[1]
    if list(ret.operands) != [cmp.results[0]]:
        return None
    args = list(region.blocks[0].arguments)
    try:
        i, j = args.index(cmp.operands[0]), args.index(cmp.operands[1])
    except ValueError:
        return None
    if i % 2 or j != i + 1:
        if j % 2 == 0 and i == j + 1:
            i, j, flip = j, i, True
        else:
            return None
    else:
        flip = False
    direction = shlo.ComparisonDirectionAttr(cmp.attributes["comparison_direction"]).value
    if direction not in ("LT", "GT"):
        return None
    desc = (direction == "GT") != flip
    ct = cmp.attributes["compare_type"] if "compare_type" in cmp.attributes else None
    ctype = shlo.ComparisonTypeAttr(ct).value if ct is not None else None
    return i // 2, desc, ctype


def _order_key(x, ctype):
    from sdylog.simulate.ops.elementwise import total_order_key
    x = np.asarray(x)
    if is_float(x.dtype):
        return total_order_key(x)
    if is_bool(x.dtype):
        return x.astype(np.int8)
    if ctype == "UNSIGNED" and x.dtype.kind == "i":
        return x.view(f"u{x.dtype.itemsize}")
    if x.dtype.kind == "V":
        return x.astype(np.int64)
    return x


@lowering("stablehlo.sort", alias="fresh")
def lower_sort(ctx):
    n = len(ctx.operands)
    dim = ctx.int_attr("dimension", -1)
    rank = len(ctx.shape(ctx.operands[0]))
    if dim < 0:
        dim += rank
    region = ctx.op.regions[0]
    simple = _simple_sort_key(region, n)
    comp = ctx.compiler.compile_region(region)
    vec = is_vectorizable(region)
    ins, outs = ctx.ins(), ctx.outs()

    def compare(a_list, b_list, env, rt):
        args = [v for pair in zip(a_list, b_list) for v in pair]
        if vec:
            return np.asarray(comp.run(env, rt, args)[0], dtype=bool)
        shape = np.broadcast_shapes(*[np.shape(v) for v in args])
        args = [np.broadcast_to(v, shape) for v in args]
        out = np.empty(shape, dtype=bool)
        for idx in np.ndindex(*shape):
            out[idx] = comp.run(env, rt, [v[idx] for v in args])[0]
        return out

    def step(env, rt):
        xs = [np.asarray(env[i]) for i in ins]
        perm = sort_order(xs, dim, simple, compare, env, rt)
        for s, x in zip(outs, xs):
            env[s] = np.take_along_axis(x, perm, axis=dim)
    return step


def sort_order(xs, dim, simple, compare, env, rt):
    """The stable order of `xs` along `dim` (indices, the shape of xs[0]): by
    one operand's key when the comparator is `simple` (_simple_sort_key's
    answer), else by `compare(a_list, b_list, env, rt)`, the comparator run
    on whole arrays."""
    if simple is None:
        return _rank_sort(xs, dim, compare, env, rt)
    k, desc, ctype = simple
    key = _order_key(xs[k], ctype)
    if desc:
        key = ~key if key.dtype.kind in "iu" else -key
    return np.argsort(key, axis=dim, kind="stable")


def _rank_sort(xs, dim, compare, env, rt):
    """Stable sort by any comparator: rank_i = #{j: j<i} + #{j ~ i, j < i}, all pairs at once."""
    moved = [np.moveaxis(x, dim, -1) for x in xs]
    lead = moved[0].shape[:-1]
    m = moved[0].shape[-1]
    rows = int(np.prod(lead, dtype=np.int64))
    flat = [x.reshape(rows, m) for x in moved]
    perm = np.empty((rows, m), dtype=np.int64)
    chunk = max(1, (1 << 22) // max(1, m * m))
    idx = np.arange(m)
    for start in range(0, rows, chunk):
        part = [f[start:start + chunk] for f in flat]
        a = [p[:, :, None] for p in part]   # element i
        b = [p[:, None, :] for p in part]   # element j
        less_ij = compare(a, b, env, rt)    # i before j
        less_ji = compare(b, a, env, rt)
        tie = ~less_ij & ~less_ji
        rank = less_ji.sum(axis=2) + (tie & (idx[None, None, :] < idx[None, :, None])).sum(axis=2)
        perm[start:start + chunk] = np.argsort(rank, axis=1, kind="stable")
    perm = perm.reshape(lead + (m,))
    return np.moveaxis(perm, -1, dim)
