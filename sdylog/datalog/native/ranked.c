/* sdylog.datalog._native (the module), and the rank-ordered evaluation of a
 * Datalog stratum in C: ranked_run, which db.c's run calls for a plan with
 * rank columns.
 *
 * See ranked.py's docstring for the semantics of the wave loop, mirrored by
 * ranked_run below; the programs it runs and their instructions: interp.h;
 * tables and indexes: table.h. The relations below the stratum, its seeds
 * and its result are tables of a Database (db.c).
 *
 *   A rank is a tuple of up to MAXRANK values (a relation's rank columns,
 *   compared lexicographically; every relation has as many).
 *
 *   pending rank -> its tuples (a buffer of records: relation, values),
 *           a min-heap of ranks, and `same`: the next wave of the current
 *           rank. A rank leaves the table when its wave starts; the buffer
 *           of a wave run goes back to a pool and holds a later rank's
 *           tuples (the memory pending tuples touch stays that of the ranks
 *           pending at once, not of all the tuples derived).
 */
#include "interp.h"
#include "db.h"

/* records: the relation's number, then its values */
typedef struct { i64 *w; int32_t n, cap; } Buf;

typedef struct { i64 w[MAXRANK]; } Rank;   /* (words past the evaluation's nrank are 0) */

typedef struct { Rank rank; Buf v; int used; } RankSlot;

typedef struct {
    Interp in;      /* (first: an Interp * is an Eval *) */
    Table *live;    /* (their sets hold the current rank's rows only: set_forget) */
    IdVec *gone;    /* per live relation, its rows removed (dominated), in row order */
    int nlive;
    Index *ix;      /* the live indexes (in.ix points at them, or at the database's) */
    int nrank;
    const int (*rank_col)[MAXRANK];   /* per live relation, its rank columns (the plan's) */
    Prog **delta;   int *ndelta;   /* per live relation */
    Prog **dom;     int *ndom;
    /* pending */
    RankSlot *rs; i64 rs_cap, rs_used; int rs_shift;   /* open addressing, Fibonacci hashing */
    Rank *heap; i64 nheap, capheap;
    Buf *pool; i64 npool, cappool;   /* empty buffers of waves run */
    Buf same;
    Rank cur;
} Eval;

/* <0, 0, >0: a before, equal to, after b (all MAXRANK words: those past
   nrank are 0 in every rank, and a loop of constant length unrolls) */
static inline int rank_cmp(const Rank *a, const Rank *b) {
    for (int i = 0; i < MAXRANK; i++)
        if (a->w[i] != b->w[i]) return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

/* the rank of a tuple of live relation ri */
static inline Rank rank_of(const Eval *ev, int ri, const i64 *vals) {
    Rank r = {{0}};
    for (int i = 0; i < ev->nrank; i++) r.w[i] = vals[ev->rank_col[ri][i]];
    return r;
}

static int heap_push(Eval *ev, Rank r) {
    if (ev->nheap == ev->capheap) {
        i64 cap = ev->capheap ? ev->capheap * 2 : 64;
        Rank *h = realloc(ev->heap, sizeof(Rank) * (size_t)cap);
        if (!h) return -1;
        ev->heap = h;
        ev->capheap = cap;
    }
    i64 i = ev->nheap++;
    while (i > 0) {
        i64 p = (i - 1) / 2;
        if (rank_cmp(&ev->heap[p], &r) <= 0) break;
        ev->heap[i] = ev->heap[p];
        i = p;
    }
    ev->heap[i] = r;
    return 0;
}

static Rank heap_pop(Eval *ev) {
    Rank top = ev->heap[0];
    Rank last = ev->heap[--ev->nheap];
    i64 i = 0, n = ev->nheap;
    for (;;) {
        i64 c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && rank_cmp(&ev->heap[c + 1], &ev->heap[c]) < 0) c++;
        if (rank_cmp(&ev->heap[c], &last) >= 0) break;
        ev->heap[i] = ev->heap[c];
        i = c;
    }
    if (n) ev->heap[i] = last;
    return top;
}

/* room for `k` more words in b: -1 out of memory */
static inline int buf_room(Buf *b, int k) {
    if (b->n + k <= b->cap) return 0;
    int32_t cap = b->cap ? b->cap : 32;
    while (cap < b->n + k) cap *= 2;
    i64 *w = realloc(b->w, sizeof(i64) * (size_t)cap);
    if (!w) return -1;
    b->w = w;
    b->cap = cap;
    return 0;
}

/* a record into b: -1 out of memory */
static inline int buf_add(Buf *b, int ri, const i64 *vals, int arity) {
    if (buf_room(b, arity + 1) < 0) return -1;
    i64 *w = b->w + b->n;
    w[0] = ri;
    for (int i = 0; i < arity; i++) w[1 + i] = vals[i];
    b->n += arity + 1;
    return 0;
}

static inline i64 rank_home(Eval *ev, const Rank *r) {
    u64 h = 0;
    for (int i = 0; i < MAXRANK; i++) h = hash_step(h, r->w[i]);
    return (i64)(h >> ev->rs_shift);
}

static int rs_grow(Eval *ev) {
    i64 cap = ev->rs_cap ? ev->rs_cap * 2 : 256;
    RankSlot *n = calloc((size_t)cap, sizeof(RankSlot));
    if (!n) return -1;
    RankSlot *old = ev->rs;
    i64 oldcap = ev->rs_cap;
    ev->rs = n;
    ev->rs_cap = cap;
    ev->rs_shift = 64 - __builtin_ctzll((u64)cap);
    for (i64 i = 0; i < oldcap; i++) {
        if (!old[i].used) continue;
        i64 j = rank_home(ev, &old[i].rank);
        while (n[j].used) j = (j + 1) & (cap - 1);
        n[j] = old[i];
    }
    free(old);
    return 0;
}

/* the slot of pending rank r, NULL when none */
static inline RankSlot *rs_find(Eval *ev, const Rank *r) {
    if (!ev->rs_cap) return NULL;
    i64 mask = ev->rs_cap - 1;
    for (i64 j = rank_home(ev, r);; j = (j + 1) & mask) {
        RankSlot *s = &ev->rs[j];
        if (!s->used) return NULL;
        if (rank_cmp(&s->rank, r) == 0) return s;
    }
}

/* a new pending rank r (not in the table), its buffer from the pool, pushed
   on the heap: NULL out of memory */
static RankSlot *rs_add(Eval *ev, const Rank *r) {
    if ((ev->rs_used + 1) * 2 > ev->rs_cap && rs_grow(ev) < 0) return NULL;
    if (heap_push(ev, *r) < 0) return NULL;
    i64 mask = ev->rs_cap - 1;
    i64 j = rank_home(ev, r);
    while (ev->rs[j].used) j = (j + 1) & mask;
    RankSlot *s = &ev->rs[j];
    s->rank = *r;
    s->used = 1;
    s->v = ev->npool ? ev->pool[--ev->npool] : (Buf){0};
    ev->rs_used++;
    return s;
}

/* rank r's tuples, its slot removed (linear probing: the slots after it
   that would no longer be found move back) */
static Buf rs_take(Eval *ev, const Rank *r) {
    RankSlot *s = rs_find(ev, r);
    Buf b = s->v;
    i64 mask = ev->rs_cap - 1, i = s - ev->rs;
    for (i64 j = (i + 1) & mask; ev->rs[j].used; j = (j + 1) & mask) {
        i64 k = rank_home(ev, &ev->rs[j].rank);
        /* slot j may move to i when its home is not in (i, j] (cyclically) */
        if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
            ev->rs[i] = ev->rs[j];
            i = j;
        }
    }
    ev->rs[i].used = 0;
    ev->rs[i].v = (Buf){0};
    ev->rs_used--;
    return b;
}

/* a run wave's buffer, emptied, for a later rank: -1 out of memory */
static int pool_put(Eval *ev, Buf b) {
    if (!b.w) return 0;
    if (ev->npool == ev->cappool) {
        i64 cap = ev->cappool ? ev->cappool * 2 : 64;
        Buf *p = realloc(ev->pool, sizeof(Buf) * (size_t)cap);
        if (!p) { free(b.w); return -1; }
        ev->pool = p;
        ev->cappool = cap;
    }
    b.n = 0;
    ev->pool[ev->npool++] = b;
    return 0;
}

/* a tuple derived while the wave of rank ev->cur runs (ranked.py's emit) */
static int emit(Interp *in, int ri, const i64 *vals) {
    Eval *ev = (Eval *)in;
    int arity = ev->live[ri].arity;
    Rank r = rank_of(ev, ri, vals);
    Buf *b = &ev->same;
    if (rank_cmp(&r, &ev->cur) != 0) {
        RankSlot *s = rs_find(ev, &r);
        if (!s) {
            /* (ranks pending are never below the current one: check new ones only) */
            if (rank_cmp(&r, &ev->cur) < 0) {   /* (Python evaluates the stratum again, and reports it) */
                ev->in.status = ST_RANK;
                return -1;
            }
            if (!(s = rs_add(ev, &r))) { ev->in.status = ST_NOMEM; return -1; }
        }
        b = &s->v;
    }
    if (buf_add(b, ri, vals, arity) < 0) { ev->in.status = ST_NOMEM; return -1; }
    return 0;
}

/* table t without its rows removed (gone, in row order), the others in their order */
static void drop_gone(Table *t, const IdVec *gone) {
    i64 m = 0;
    for (i64 r = 0, g = 0; r < t->n; r++)
        if (g < gone->n && gone->v[g] == r) g++;
        else memmove(row(t, m++), row(t, r), sizeof(i64) * (size_t)t->arity);
    t->n = m;
}

static void eval_free(Eval *ev) {
    for (int i = 0; i < ev->in.nix; i++) index_free(&ev->ix[i]);
    free(ev->ix);
    free(ev->in.ix);
    free(ev->in.out);
    for (int i = 0; i < ev->nlive; i++) {
        table_free(&ev->live[i]);
        free(ev->gone[i].v);
    }
    free(ev->live);
    free(ev->gone);
    for (i64 i = 0; i < ev->rs_cap; i++) free(ev->rs[i].v.w);
    free(ev->rs);
    for (i64 i = 0; i < ev->npool; i++) free(ev->pool[i].w);
    free(ev->pool);
    free(ev->heap);
    free(ev->same.w);
}

/* A tuple is of one rank (its rank columns) and none below the current one
   comes: a live table's set, which finds the tuples derived again, forgets
   the rows of a rank done. It stays small, in cache (one of every row misses). */
static void set_forget(Table *t) {
    if (t->set_cap > 256) { free(t->set); t->set = NULL; t->set_cap = 0; }
    else if (t->set_used) memset(t->set, 0xff, sizeof(SetSlot) * (size_t)t->set_cap);
    t->set_used = 0;
}

/* the wave loop (ranked.py's RankedEvaluation.run); -1 stop (ev->in.status) */
static int waves_run(Eval *ev, i64 *waves_out) {
    Buf wave = {0};
    IdVec order = {0};
    IdVec *fresh = calloc((size_t)ev->nlive, sizeof(IdVec));
    char *seen = calloc((size_t)ev->nlive, 1);
    char *out = NULL;   /* per fresh tuple of a relation: dominated (grown as needed, not per wave) */
    int32_t outcap = 0;
    int rc = 0;
    i64 waves = 0;
    if (!fresh || !seen) { ev->in.status = ST_NOMEM; rc = -1; goto done; }
    for (;;) {
        /* the wave run last goes back to the pool (or, for `same`, becomes it) */
        if (ev->same.n) {
            Buf tmp = wave;
            wave = ev->same;
            ev->same = tmp;
            ev->same.n = 0;
        } else if (ev->nheap) {
            ev->cur = heap_pop(ev);
            for (int ri = 0; ri < ev->nlive; ri++) set_forget(&ev->live[ri]);
            if (pool_put(ev, wave) < 0) { wave = (Buf){0}; ev->in.status = ST_NOMEM; rc = -1; goto done; }
            wave = rs_take(ev, &ev->cur);
        } else {
            break;
        }
        waves++;
        const i64 *w = wave.w;
        int ri0 = (int)w[0];
        if (1 + ev->live[ri0].arity == wave.n) {
            /* most waves: one tuple */
            int ri = ri0;
            Table *t = &ev->live[ri];
            const i64 *vals = w + 1;
            u64 h = hash_vals(vals, t->arity);
            if (set_find(t, vals, h) >= 0) continue;
            /* (tested before it goes in: the test skips the tuple itself,
               and the lookups it makes then find fewer tuples) */
            int d = run_programs(&ev->in, ev->dom[ri], ev->ndom[ri], vals, t->arity);
            if (d < 0) { rc = -1; goto done; }
            if (d) continue;
            if (table_insert_new(t, vals, h) < 0) { ev->in.status = ST_NOMEM; rc = -1; goto done; }
            if (run_programs(&ev->in, ev->delta[ri], ev->ndelta[ri], vals, t->arity) < 0) { rc = -1; goto done; }
            continue;
        }
        order.n = 0;
        for (int32_t at = 0; at < wave.n;) {
            int ri = (int)w[at];
            Table *t = &ev->live[ri];
            i64 id = table_insert(t, w + at + 1);
            at += 1 + t->arity;
            if (id == -2) { ev->in.status = ST_NOMEM; rc = -1; goto done; }
            if (id < 0) continue;
            if (!seen[ri]) {
                seen[ri] = 1;
                if (idvec_push(&order, ri) < 0) { ev->in.status = ST_NOMEM; rc = -1; goto done; }
            }
            if (idvec_push(&fresh[ri], (int32_t)id) < 0) { ev->in.status = ST_NOMEM; rc = -1; goto done; }
        }
        /* domination once the whole wave is in: tied tuples all go */
        for (int32_t o = 0; o < order.n; o++) {
            int ri = order.v[o];
            if (!ev->ndom[ri]) continue;
            Table *t = &ev->live[ri];
            IdVec *f = &fresh[ri];
            if (f->n > outcap) {
                char *o = realloc(out, (size_t)f->n);
                if (!o) { ev->in.status = ST_NOMEM; rc = -1; goto done; }
                out = o;
                outcap = f->n;
            }
            int any = 0;
            for (int32_t k = 0; k < f->n; k++) {
                /* (rows stay where they are while programs run: nothing goes in) */
                int d = run_programs(&ev->in, ev->dom[ri], ev->ndom[ri], row(t, f->v[k]), t->arity);
                if (d < 0) { rc = -1; goto done; }
                out[k] = (char)d;
                any |= d;
            }
            if (any) {
                int32_t m = 0;
                for (int32_t k = 0; k < f->n; k++) {
                    if (!out[k]) f->v[m++] = f->v[k];
                    else if (table_remove(t, f->v[k]), idvec_push(&ev->gone[ri], f->v[k]) < 0) { ev->in.status = ST_NOMEM; rc = -1; goto done; }
                }
                f->n = m;
            }
        }
        for (int32_t o = 0; o < order.n; o++) {
            int ri = order.v[o];
            Table *t = &ev->live[ri];
            IdVec *f = &fresh[ri];
            for (int32_t k = 0; k < f->n && ev->ndelta[ri]; k++)
                if (run_programs(&ev->in, ev->delta[ri], ev->ndelta[ri], row(t, f->v[k]), t->arity) < 0) { rc = -1; goto done; }
            f->n = 0;
            seen[ri] = 0;
        }
    }
done:
    *waves_out = waves;
    free(wave.w);
    free(order.v);
    if (fresh)
        for (int i = 0; i < ev->nlive; i++) free(fresh[i].v);
    free(fresh);
    free(seen);
    free(out);
    return rc;
}

/* the seeds (the rows the stratum's tables hold, then the base programs'
   tuples, emitted below every rank: pending) and the waves: 0, or -1 stop (ev->in.status) */
static int evaluate(Eval *ev, Database *db, const int *tables, Prog *base, int nbase, i64 *waves) {
    static const i64 no_delta[1];
    for (int i = 0; i < ev->nrank; i++) ev->cur.w[i] = INT64_MIN;
    for (int ri = 0; ri < ev->nlive; ri++) {
        Table *t = &db->tab[tables[ri]]->t;
        for (i64 r = 0; r < t->n; r++)
            if (emit(&ev->in, ri, row(t, r)) < 0) return -1;
    }
    for (int k = 0; k < nbase; k++)
        if (run_programs(&ev->in, &base[k], 1, no_delta, 0) < 0) return -1;
    return waves_run(ev, waves);
}

int ranked_run(Database *db, Plan *p, i64 *waves) {
    Eval ev;
    memset(&ev, 0, sizeof ev);
    int result = -1, nlive = ev.nlive = p->nout, nix = ev.in.nix = p->nix;
    PlanCopies copies;   /* (in the database's run arena: nothing to free) */
    if (!plan_copies(db, p, 0, &copies)) { PyErr_NoMemory(); return -1; }
    ev.delta = copies.delta;
    ev.dom = copies.dom;
    ev.nrank = p->nrank;
    ev.rank_col = (const int (*)[MAXRANK])p->rank_col;
    ev.ndelta = p->ndelta;
    ev.ndom = p->ndom;
    ev.in.nout = nlive;
    ev.in.emit = emit;
    ev.in.symbols = db->symbols;
    ev.in.nsymbols = PyList_GET_SIZE(db->names);
    ev.live = calloc((size_t)nlive + 1, sizeof(Table));
    ev.gone = calloc((size_t)nlive + 1, sizeof(IdVec));
    ev.ix = calloc((size_t)nix + 1, sizeof(Index));
    ev.in.ix = calloc((size_t)nix + 1, sizeof(Index *));
    ev.in.out = calloc((size_t)nlive + 1, sizeof(Table *));
    if (!ev.live || !ev.gone || !ev.ix || !ev.in.ix || !ev.in.out) { PyErr_NoMemory(); goto out; }
    for (int ri = 0; ri < nlive; ri++) {
        ev.live[ri].arity = p->arity[ri];
        ev.live[ri].live = 1;
        ev.in.out[ri] = &ev.live[ri];
        /* (room for the rows of the plan's last run at once: see Plan.rows_seen) */
        if (table_grow_rows(&ev.live[ri], p->rows_seen[ri]) < 0) { PyErr_NoMemory(); goto out; }
    }
    for (int i = 0; i < nix; i++) {
        IndexSpec *x = &p->ix[i];
        if (!x->live) {   /* below the stratum: the database's index */
            if (!(ev.in.ix[i] = db_index(db, x->tno, x->key, x->nkey))) goto out;
            continue;
        }
        int ri = 0;
        while (p->out[ri] != x->tno) ri++;   /* (a live index is of a relation of the stratum: plan_load) */
        Index *ix = ev.in.ix[i] = &ev.ix[i];
        ix->t = &ev.live[ri];
        ix->nkey = x->nkey;
        memcpy(ix->key, x->key, sizeof(int) * (size_t)x->nkey);
        if (index_reserve(ix, x->keys_seen) < 0 || table_watch(ix->t, ix) < 0) { PyErr_NoMemory(); goto out; }
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = evaluate(&ev, db, p->out, copies.base, p->nbase, waves);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        if (ev.in.status == ST_NOMEM) PyErr_NoMemory();
        else result = 1;
        goto out;
    }
    for (int ri = 0; ri < nlive; ri++) p->rows_seen[ri] = ev.live[ri].n;
    for (int i = 0; i < nix; i++)
        if (p->ix[i].live) p->ix[i].keys_seen = ev.ix[i].used;
    /* The result into the database's tables. What the waves kept goes first
       (the live indexes, then each live table once copied), so that the
       copies reuse its memory rather than touch new pages. */
    for (int i = 0; i < nix; i++) {
        index_free(&ev.ix[i]);
        memset(&ev.ix[i], 0, sizeof(Index));
    }
    for (int ri = 0; ri < nlive; ri++) {
        drop_gone(&ev.live[ri], &ev.gone[ri]);
        if (db_replace_rows(db, p->out[ri], &ev.live[ri]) < 0) { PyErr_NoMemory(); goto out; }
        table_free(&ev.live[ri]);
        memset(&ev.live[ri], 0, sizeof(Table));
    }
    result = 0;
out:
    eval_free(&ev);
    return result;
}

static PyObject *plain_indexes(PyObject *self, PyObject *flag) {
    int on = PyObject_IsTrue(flag);
    if (on < 0) return NULL;
    db_plain_indexes = on;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"plain_indexes", plain_indexes, METH_O,
     "plain_indexes(flag): indexes of tables built row by row (the plain reference), not packed; for tests"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native",
    "Datalog evaluation in C: a database of relations (Database, native/db.c) and the evaluation "
    "of a run's strata there (plain, recursive, rank-ordered: native/ranked.c, stepped).", -1, methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    /* (PyModule_AddType readies the type and takes its reference only when it is added) */
    if (!PlanRefused)
        PlanRefused = PyErr_NewException("sdylog.datalog._native.PlanRefused", PyExc_ValueError, NULL);
    if (!PlanRefused || PyModule_AddIntConstant(m, "MAXKEY", MAXKEY) < 0 || PyModule_AddIntConstant(m, "MAXRANK", MAXRANK) < 0
        || PyModule_AddType(m, &DatabaseType) < 0 || PyModule_AddType(m, &PlanType) < 0
        || PyModule_AddObjectRef(m, "PlanRefused", PlanRefused) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
