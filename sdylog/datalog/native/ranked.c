/* sdylog.datalog._native: rank-ordered evaluation of a Datalog stratum in C.
 *
 * See ranked.py's docstring for the semantics of the wave loop, mirrored by
 * ranked_run below; the programs it runs and their instructions: interp.h;
 * tables and indexes: table.h. The relations below the stratum, its seeds
 * and its result are tables of a Database (db.c).
 *
 *   pending rank -> entries (relation, rule, values), a min-heap of ranks,
 *           and `same`: the next wave of the current rank.
 */
#include "interp.h"
#include "db.h"

typedef struct { int32_t ri, rule; i64 off; } Entry;

typedef struct { i64 rank; int state; IdVec v; } RankSlot;   /* state 0 empty, 1 pending, 2 done */

typedef struct {
    Interp in;      /* (first: an Interp * is an Eval *) */
    Table *live;
    int nlive;
    Index *ix;      /* the live indexes (in.ix points at them, or at the database's) */
    int *rank_col;
    Prog **delta;   int *ndelta;   /* per live relation */
    Prog **dom;     int *ndom;
    /* pending */
    Entry *e; i64 ne, cape;
    i64 *arena; i64 narena, caparena;
    RankSlot *rs; i64 rs_cap, rs_used;
    i64 *heap; i64 nheap, capheap;
    IdVec same;
    i64 cur;
    i64 err_rule, err_rank;
} Eval;

static int heap_push(Eval *ev, i64 r) {
    if (ev->nheap == ev->capheap) {
        i64 cap = ev->capheap ? ev->capheap * 2 : 64;
        i64 *h = realloc(ev->heap, sizeof(i64) * (size_t)cap);
        if (!h) return -1;
        ev->heap = h;
        ev->capheap = cap;
    }
    i64 i = ev->nheap++;
    while (i > 0) {
        i64 p = (i - 1) / 2;
        if (ev->heap[p] <= r) break;
        ev->heap[i] = ev->heap[p];
        i = p;
    }
    ev->heap[i] = r;
    return 0;
}

static i64 heap_pop(Eval *ev) {
    i64 top = ev->heap[0];
    i64 last = ev->heap[--ev->nheap];
    i64 i = 0, n = ev->nheap;
    for (;;) {
        i64 c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && ev->heap[c + 1] < ev->heap[c]) c++;
        if (ev->heap[c] >= last) break;
        ev->heap[i] = ev->heap[c];
        i = c;
    }
    if (n) ev->heap[i] = last;
    return top;
}

static int rs_grow(Eval *ev) {
    i64 cap = ev->rs_cap ? ev->rs_cap * 2 : 256;
    RankSlot *n = calloc((size_t)cap, sizeof(RankSlot));
    if (!n) return -1;
    for (i64 i = 0; i < ev->rs_cap; i++) {
        RankSlot *s = &ev->rs[i];
        if (!s->state) continue;
        i64 j = (i64)(hash_final((u64)s->rank * 0x9e3779b97f4a7c15ULL) & (u64)(cap - 1));
        while (n[j].state) j = (j + 1) & (cap - 1);
        n[j] = *s;
    }
    free(ev->rs);
    ev->rs = n;
    ev->rs_cap = cap;
    return 0;
}

/* the slot of rank r (created empty when `create`), NULL when absent */
static RankSlot *rs_get(Eval *ev, i64 r, int create) {
    if (create && (ev->rs_used + 1) * 2 > ev->rs_cap && rs_grow(ev) < 0) return NULL;
    if (!ev->rs_cap) return NULL;
    i64 mask = ev->rs_cap - 1;
    for (i64 j = (i64)(hash_final((u64)r * 0x9e3779b97f4a7c15ULL) & (u64)mask);; j = (j + 1) & mask) {
        RankSlot *s = &ev->rs[j];
        if (!s->state) {
            if (!create) return NULL;
            s->rank = r;
            s->state = 1;
            ev->rs_used++;
            return s;
        }
        if (s->rank == r) return s;
    }
}

/* a new pending entry holding a copy of vals: its number, -1 out of memory */
static i64 new_entry(Eval *ev, int ri, int rule, const i64 *vals, int arity) {
    if (ev->ne == ev->cape) {
        i64 cap = ev->cape ? ev->cape * 2 : 1024;
        Entry *e = realloc(ev->e, sizeof(Entry) * (size_t)cap);
        if (!e) return -1;
        ev->e = e;
        ev->cape = cap;
    }
    while (ev->narena + arity > ev->caparena) {
        i64 cap = ev->caparena ? ev->caparena * 2 : 8192;
        i64 *a = realloc(ev->arena, sizeof(i64) * (size_t)cap);
        if (!a) return -1;
        ev->arena = a;
        ev->caparena = cap;
    }
    if (arity) memcpy(ev->arena + ev->narena, vals, sizeof(i64) * (size_t)arity);
    ev->e[ev->ne] = (Entry){ri, rule, ev->narena};
    ev->narena += arity;
    return ev->ne++;
}

/* a tuple derived while the wave of rank ev->cur runs (ranked.py's emit) */
static int emit(Interp *in, int ri, int rule, const i64 *vals) {
    Eval *ev = (Eval *)in;
    Table *t = &ev->live[ri];
    i64 r = vals[ev->rank_col[ri]];
    i64 en = new_entry(ev, ri, rule, vals, t->arity);
    if (en < 0) { ev->in.status = ST_NOMEM; return -1; }
    if (r == ev->cur) {
        if (idvec_push(&ev->same, (int32_t)en) < 0) { ev->in.status = ST_NOMEM; return -1; }
        return 0;
    }
    RankSlot *s = rs_get(ev, r, 0);
    if (!s || s->state != 1) {
        if (r < ev->cur) {
            ev->in.status = ST_RANK;
            ev->err_rule = rule;
            ev->err_rank = r;
            return -1;
        }
        s = rs_get(ev, r, 1);
        if (!s || heap_push(ev, r) < 0) { ev->in.status = ST_NOMEM; return -1; }
        s->state = 1;
    }
    if (idvec_push(&s->v, (int32_t)en) < 0) { ev->in.status = ST_NOMEM; return -1; }
    return 0;
}

/* the seeds: no rank check */
static int seed(Eval *ev, int ri, int rule, const i64 *vals) {
    Table *t = &ev->live[ri];
    i64 r = vals[ev->rank_col[ri]];
    i64 en = new_entry(ev, ri, rule, vals, t->arity);
    if (en < 0) return -1;
    RankSlot *s = rs_get(ev, r, 0);
    if (!s) {
        s = rs_get(ev, r, 1);
        if (!s || heap_push(ev, r) < 0) return -1;
    }
    return idvec_push(&s->v, (int32_t)en);
}

/* per live relation, a list of programs, checked (see load_checked) */
static int load_prog_lists(Eval *ev, PyObject *lists, Prog **progs, int *n) {
    if (!PyList_Check(lists) || PyList_GET_SIZE(lists) != ev->nlive) {
        PyErr_SetString(PyExc_ValueError, "one program list per relation");
        return -1;
    }
    for (int ri = 0; ri < ev->nlive; ri++)
        if (load_checked(PyList_GET_ITEM(lists, ri), &ev->in, ev->live[ri].arity, &progs[ri], &n[ri]) < 0) return -1;
    return 0;
}

static void eval_free(Eval *ev) {
    for (int i = 0; i < ev->in.nix; i++) index_free(&ev->ix[i]);
    free(ev->ix);
    free(ev->in.ix);
    free(ev->in.out);
    for (int i = 0; i < ev->nlive; i++) {
        table_free(&ev->live[i]);
        if (ev->delta && ev->delta[i]) {
            for (int k = 0; k < ev->ndelta[i]; k++) prog_free(&ev->delta[i][k]);
            free(ev->delta[i]);
        }
        if (ev->dom && ev->dom[i]) {
            for (int k = 0; k < ev->ndom[i]; k++) prog_free(&ev->dom[i][k]);
            free(ev->dom[i]);
        }
    }
    free(ev->live);
    free(ev->rank_col);
    free(ev->delta);
    free(ev->ndelta);
    free(ev->dom);
    free(ev->ndom);
    free(ev->e);
    free(ev->arena);
    for (i64 i = 0; i < ev->rs_cap; i++) free(ev->rs[i].v.v);
    free(ev->rs);
    free(ev->heap);
    free(ev->same.v);
}

/* the wave loop (ranked.py's RankedEvaluation.run); -1 stop (ev->in.status) */
static int waves_run(Eval *ev, i64 *waves_out) {
    IdVec wave = {0}, order = {0};
    IdVec *fresh = calloc((size_t)ev->nlive, sizeof(IdVec));
    char *seen = calloc((size_t)ev->nlive, 1);
    char *out = NULL;   /* per fresh tuple of a relation: dominated (grown as needed, not per wave) */
    int32_t outcap = 0;
    int rc = 0;
    i64 waves = 0;
    if (!fresh || !seen) { ev->in.status = ST_NOMEM; rc = -1; goto done; }
    for (;;) {
        if (ev->same.n) {
            IdVec tmp = wave;
            wave = ev->same;
            ev->same = tmp;
            ev->same.n = 0;
        } else if (ev->nheap) {
            ev->cur = heap_pop(ev);
            RankSlot *s = rs_get(ev, ev->cur, 0);
            free(wave.v);
            wave = s->v;
            s->v = (IdVec){0};
            s->state = 2;
        } else {
            break;
        }
        waves++;
        if (wave.n == 1) {
            Entry *e = &ev->e[wave.v[0]];
            int ri = e->ri;
            Table *t = &ev->live[ri];
            i64 vals[MAXKEY * 2];
            memcpy(vals, ev->arena + e->off, sizeof(i64) * (size_t)t->arity);
            if (set_find(t, vals, hash_vals(vals, t->arity)) >= 0) continue;
            int d = run_programs(&ev->in, ev->dom[ri], ev->ndom[ri], vals, t->arity);
            if (d < 0) { rc = -1; goto done; }
            if (d) continue;
            if (table_insert(t, vals) == -2) { ev->in.status = ST_NOMEM; rc = -1; goto done; }
            if (run_programs(&ev->in, ev->delta[ri], ev->ndelta[ri], vals, t->arity) < 0) { rc = -1; goto done; }
            continue;
        }
        order.n = 0;
        for (int32_t k = 0; k < wave.n; k++) {
            Entry *e = &ev->e[wave.v[k]];
            Table *t = &ev->live[e->ri];
            i64 id = table_insert(t, ev->arena + e->off);
            if (id == -2) { ev->in.status = ST_NOMEM; rc = -1; goto done; }
            if (id < 0) continue;
            if (!seen[e->ri]) {
                seen[e->ri] = 1;
                if (idvec_push(&order, e->ri) < 0) { ev->in.status = ST_NOMEM; rc = -1; goto done; }
            }
            if (idvec_push(&fresh[e->ri], (int32_t)id) < 0) { ev->in.status = ST_NOMEM; rc = -1; goto done; }
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
            memset(out, 0, (size_t)f->n);
            int any = 0;
            for (int32_t k = 0; k < f->n; k++) {
                i64 vals[MAXKEY * 2];
                memcpy(vals, row(t, f->v[k]), sizeof(i64) * (size_t)t->arity);
                int d = run_programs(&ev->in, ev->dom[ri], ev->ndom[ri], vals, t->arity);
                if (d < 0) { rc = -1; goto done; }
                if (d) { out[k] = 1; any = 1; }
            }
            if (any) {
                int32_t m = 0;
                for (int32_t k = 0; k < f->n; k++) {
                    if (out[k]) table_remove(t, f->v[k]);
                    else f->v[m++] = f->v[k];
                }
                f->n = m;
            }
        }
        for (int32_t o = 0; o < order.n; o++) {
            int ri = order.v[o];
            Table *t = &ev->live[ri];
            IdVec *f = &fresh[ri];
            for (int32_t k = 0; k < f->n && ev->ndelta[ri]; k++) {
                i64 vals[MAXKEY * 2];
                memcpy(vals, row(t, f->v[k]), sizeof(i64) * (size_t)t->arity);
                if (run_programs(&ev->in, ev->delta[ri], ev->ndelta[ri], vals, t->arity) < 0) { rc = -1; goto done; }
            }
            f->n = 0;
            seen[ri] = 0;
        }
    }
done:
    *waves_out = waves;
    free(wave.v);
    free(order.v);
    if (fresh)
        for (int i = 0; i < ev->nlive; i++) free(fresh[i].v);
    free(fresh);
    free(seen);
    free(out);
    return rc;
}

/* a tuple of a base program: a seed */
static int seed_emit(Interp *in, int ri, int rule, const i64 *vals) {
    if (seed((Eval *)in, ri, rule, vals) < 0) { in->status = ST_NOMEM; return -1; }
    return 0;
}

/* the seeds (the rows the stratum's tables hold, then the base programs'
   tuples) and the waves: 0, or -1 stop (ev->in.status) */
static int evaluate(Eval *ev, Database *db, const int *tables, Prog *base, int nbase, i64 *waves) {
    static const i64 no_delta[1];
    for (int ri = 0; ri < ev->nlive; ri++) {
        Table *t = &db->tab[tables[ri]]->t;
        for (i64 r = 0; r < t->n; r++)
            if (seed(ev, ri, -1, row(t, r)) < 0) { ev->in.status = ST_NOMEM; return -1; }
    }
    ev->in.emit = seed_emit;
    for (int k = 0; k < nbase; k++)
        if (run_programs(&ev->in, &base[k], 1, no_delta, 0) < 0) return -1;
    ev->in.emit = emit;
    return waves_run(ev, waves);
}

PyDoc_STRVAR(ranked_run_doc,
"ranked_run(db, relations, indexes, delta_programs, domination_programs, base_programs)\n"
"db: the Database holding the relations; relations: [(table, rank column)] of the stratum;\n"
"indexes: [(live?, relation number (live) or table, key columns)]; delta_ and domination_programs:\n"
"per relation [program]; base_programs: [program] (clauses reading no relation of the stratum);\n"
"a program: (nregs, ntup, words, [register, constant, ...]).\n"
"The seeds are the rows the stratum's tables hold and the base programs' tuples; the tables\n"
"then hold the result. Returns ('ok', waves), ('rank', rule id, rank, current rank) or\n"
"('abort', reason) (the tables unchanged).");

static PyObject *ranked_run(PyObject *self, PyObject *args) {
    Database *db;
    PyObject *rels, *indexes, *deltas, *doms, *base_l;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!", &DatabaseType, &db, &PyList_Type, &rels, &PyList_Type, &indexes,
                          &PyList_Type, &deltas, &PyList_Type, &doms, &PyList_Type, &base_l))
        return NULL;
    Eval ev;
    memset(&ev, 0, sizeof ev);
    PyObject *result = NULL;
    Prog *base = NULL;
    int nbase = 0;
    ev.nlive = (int)PyList_GET_SIZE(rels);
    ev.in.nix = (int)PyList_GET_SIZE(indexes);
    ev.in.nout = ev.nlive;
    ev.in.emit = emit;
    int *tables = calloc((size_t)ev.nlive + 1, sizeof(int));
    ev.live = calloc((size_t)ev.nlive + 1, sizeof(Table));
    ev.ix = calloc((size_t)ev.in.nix + 1, sizeof(Index));
    ev.in.ix = calloc((size_t)ev.in.nix + 1, sizeof(Index *));
    ev.in.out = calloc((size_t)ev.nlive + 1, sizeof(Table *));
    ev.rank_col = calloc((size_t)ev.nlive + 1, sizeof(int));
    ev.delta = calloc((size_t)ev.nlive + 1, sizeof(Prog *));
    ev.dom = calloc((size_t)ev.nlive + 1, sizeof(Prog *));
    ev.ndelta = calloc((size_t)ev.nlive + 1, sizeof(int));
    ev.ndom = calloc((size_t)ev.nlive + 1, sizeof(int));
    if (!tables || !ev.live || !ev.ix || !ev.rank_col || !ev.delta || !ev.dom || !ev.ndelta || !ev.ndom
        || !ev.in.ix || !ev.in.out) {
        PyErr_NoMemory();
        goto out;
    }
    for (int i = 0; i < ev.nlive; i++) {
        Table *t = &ev.live[i];
        if (!PyArg_ParseTuple(PyList_GET_ITEM(rels, i), "ii", &tables[i], &ev.rank_col[i])) goto out;
        if (tables[i] < 0 || tables[i] >= db->ntab) { PyErr_SetString(PyExc_ValueError, "no such table"); goto out; }
        t->arity = db->tab[tables[i]]->t.arity;
        if (t->arity < 1 || ev.rank_col[i] < 0 || ev.rank_col[i] >= t->arity) {
            PyErr_SetString(PyExc_ValueError, "rank column");
            goto out;
        }
        t->live = 1;
        ev.in.out[i] = t;
    }
    for (int i = 0; i < ev.in.nix; i++) {
        int live, tno, key[MAXKEY];
        PyObject *key_o;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(indexes, i), "iiO!", &live, &tno, &PyTuple_Type, &key_o)) goto out;
        if (tno < 0 || tno >= (live ? ev.nlive : db->ntab)) {
            PyErr_SetString(PyExc_ValueError, "index spec");
            goto out;
        }
        Table *t = live ? &ev.live[tno] : &db->tab[tno]->t;
        int nkey = key_columns(key_o, t->arity, key);
        if (nkey < 0) goto out;
        if (!live) {   /* below the stratum: the database's index */
            if (!(ev.in.ix[i] = db_index(db, tno, key, nkey))) goto out;
            continue;
        }
        Index *ix = ev.in.ix[i] = &ev.ix[i];
        ix->t = t;
        ix->nkey = nkey;
        memcpy(ix->key, key, sizeof(int) * (size_t)nkey);
        if (table_watch(t, ix) < 0) { PyErr_NoMemory(); goto out; }
    }
    /* (the programs' operands are checked once, so that the interpreter need not) */
    if (load_prog_lists(&ev, deltas, ev.delta, ev.ndelta) < 0) goto out;
    if (load_prog_lists(&ev, doms, ev.dom, ev.ndom) < 0) goto out;
    if (load_checked(base_l, &ev.in, 0, &base, &nbase) < 0) goto out;
    i64 waves = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = evaluate(&ev, db, tables, base, nbase, &waves);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        if (ev.in.status == ST_RANK)
            result = Py_BuildValue("(sLLL)", "rank", (long long)ev.err_rule, (long long)ev.err_rank, (long long)ev.cur);
        else if (ev.in.status == ST_NOMEM)
            PyErr_NoMemory();
        else
            result = Py_BuildValue("(ss)", "abort", "integer overflow, division by zero or a bad shift");
        goto out;
    }
    for (int i = 0; i < ev.nlive; i++)
        if (db_replace_rows(db, tables[i], &ev.live[i]) < 0) { PyErr_NoMemory(); goto out; }
    result = Py_BuildValue("(sL)", "ok", (long long)waves);
out:
    for (int k = 0; base && k < nbase; k++) prog_free(&base[k]);
    free(base);
    free(tables);
    eval_free(&ev);
    return result;
}

static PyMethodDef methods[] = {
    {"ranked_run", ranked_run, METH_VARARGS, ranked_run_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native",
    "Datalog evaluation in C: rank-ordered strata (ranked_run, native/ranked.c) and a database of "
    "relations with its plain and recursive strata (Database, native/db.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "MAXKEY", MAXKEY) < 0 || PyType_Ready(&DatabaseType) < 0) { Py_DECREF(m); return NULL; }
    Py_INCREF(&DatabaseType);
    if (PyModule_AddObject(m, "Database", (PyObject *)&DatabaseType) < 0) {
        Py_DECREF(&DatabaseType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
