/* _native.Database: every relation of a memory-engine run held in C, and the
 * evaluation of its plain and recursive strata (sdylog/datalog/native_db.py
 * drives it).
 *
 * A relation is a DbTable (db.h): int64 rows deduplicated by a hash set;
 * symbols are interned (one table of strings per database: equal strings,
 * equal ids). Indexes a stratum reads are built once per table version
 * (packed, see table.h) and reused by later strata until the table changes.
 *
 * run([(out, indexes, base, deltas, checks)]) evaluates strata semi-naively: the
 * base programs (clauses reading no relation of the stratum) run once, then
 * each delta program runs on every tuple new in the last round, until no
 * round adds any (a plain stratum has no delta programs: one round). A
 * delta program's EMIT appends to a buffer, inserted into the tables after
 * the round, and a base program's goes straight in (it reads none of them):
 * a table is never changed while a program reads it. Relations of the stratum are read
 * through indexes kept up to date on insert ("live" ones). run takes a list of
 * strata, each with the table sizes its plan was made for (checks): a run of
 * consecutive strata is one call, up to the first whose plan no longer fits.
 */
#include "interp.h"
#include "db.h"

/* ------------------------------------------------------------ Python values */
static int to_i64(PyObject *o, i64 *out) {
#if PY_VERSION_HEX < 0x030C0000
    /* (an int of at most one digit, most facts' values: read in place) */
    Py_ssize_t size = Py_SIZE(o);
    if (size >= -1 && size <= 1) {
        *out = (i64)size * (i64)((PyLongObject *)o)->ob_digit[0];
        return 0;
    }
#endif
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -1;
    }
    *out = v;
    return 0;
}

/* Python ints for int64 values, remembered in a direct-mapped cache: values
   repeat across tuples (ids, ranks), and one object each costs less to make */
typedef struct { i64 v; PyObject *o; } IntSlot;
#define INT_CACHE 4096

static PyObject *cached_int(IntSlot *cache, i64 v) {
    IntSlot *s = &cache[((u64)v * 0x9e3779b97f4a7c15ULL) >> 52];
    if (s->o && s->v == v) {
        Py_INCREF(s->o);
        return s->o;
    }
    PyObject *o = PyLong_FromLongLong(v);
    if (!o) return NULL;
    Py_XDECREF(s->o);
    Py_INCREF(o);
    s->v = v;
    s->o = o;
    return o;
}

/* the rows of t (in its set's order; a table whose set was dropped, in row
   order) as a Python set of tuples; the columns marked in `sym` (or none,
   NULL) hold symbol ids: their strings, from `names` */
static PyObject *table_to_set(Table *t, IntSlot *cache, const char *sym, PyObject *names) {
    PyObject *set = PySet_New(NULL);
    if (!set) return NULL;
    int by_set = t->set_cap > 0;
    for (i64 s = 0; s < (by_set ? t->set_cap : t->n); s++) {
        int32_t id = by_set ? t->set[s].id : (int32_t)s;
        if (id < 0) continue;
        const i64 *r = row(t, id);
        PyObject *tup = PyTuple_New(t->arity);
        if (!tup) { Py_DECREF(set); return NULL; }
        for (int i = 0; i < t->arity; i++) {
            PyObject *v;
            if (sym && sym[i]) {
                v = PyList_GET_ITEM(names, r[i]);   /* (ids come from `names`: in range) */
                Py_INCREF(v);
            } else {
                v = cached_int(cache, r[i]);
            }
            if (!v) { Py_DECREF(tup); Py_DECREF(set); return NULL; }
            PyTuple_SET_ITEM(tup, i, v);
        }
        int err = PySet_Add(set, tup);
        Py_DECREF(tup);
        if (err < 0) { Py_DECREF(set); return NULL; }
    }
    return set;
}

/* ------------------------------------------------------------ tables */
static void db_table_reset(DbTable *d) {
    int arity = d->t.arity;
    table_free(&d->t);
    memset(&d->t, 0, sizeof d->t);
    d->t.arity = arity;
}

/* a table whose set was dropped (db_drop_set) gets one again before rows go
   in (they are deduplicated by it): -1 out of memory */
static int db_table_ensure_set(DbTable *d) {
    Table *t = &d->t;
    d->no_set = 0;
    if (!t->n || t->set_cap) return 0;
    if (set_reserve(t, t->n) < 0) return -1;
    t->count = 0;
    for (i64 r = 0; r < t->n; r++)
        if (set_add(t, (int32_t)r, hash_vals(row(t, r), t->arity)) < 0) return -1;
    return 0;
}

void db_changed(Database *db, int tno) {
    DbTable *d = db->tab[tno];
    for (int i = 0; i < d->ncache; i++) {
        index_free(d->cache[i]);
        free(d->cache[i]);
    }
    free(d->cache);
    d->cache = NULL;
    d->ncache = 0;
}

int db_replace_rows(Database *db, int tno, Table *src) {
    DbTable *d = db->tab[tno];
    db_changed(db, tno);
    db_table_reset(d);
    /* Room for all at once (no doubling steps, each rehashing what is in),
       the set as large as those steps would make it (its order is the rows'
       order when read). The rows are distinct: no lookup before each goes in. */
    Table *t = &d->t;
    i64 n = src->count, cap = 64;
    if (n) {
        while (2 * n > cap) cap *= 2;
        if (!(t->data = malloc(sizeof(i64) * (size_t)(n * t->arity + 1)))) return -1;
        if (!d->no_set && set_resize(t, cap) < 0) return -1;
        t->cap = n;
    }
    for (i64 s = 0; n && s < src->set_cap; s++) {
        if (src->set[s].id < 0) continue;
        memcpy(row(t, t->n), row(src, src->set[s].id), sizeof(i64) * (size_t)t->arity);
        if (d->no_set)
            t->n++;
        else if (set_add(t, (int32_t)t->n++, src->set[s].h) < 0)   /* (no index watches it yet) */
            return -1;
    }
    return 0;
}

Index *db_index(Database *db, int tno, const int *key, int nkey) {
    DbTable *d = db->tab[tno];
    for (int i = 0; i < d->ncache; i++) {
        Index *ix = d->cache[i];
        if (ix->nkey == nkey && memcmp(ix->key, key, sizeof(int) * (size_t)nkey) == 0) return ix;
    }
    Index *ix = calloc(1, sizeof(Index));
    Index **c = realloc(d->cache, sizeof(Index *) * (size_t)(d->ncache + 1));
    if (!ix || !c) { free(ix); if (c) d->cache = c; PyErr_NoMemory(); return NULL; }
    d->cache = c;
    ix->t = &d->t;
    ix->nkey = nkey;
    memcpy(ix->key, key, sizeof(int) * (size_t)nkey);
    if (nkey && index_build_packed(ix, &db->scratch) < 0) { index_free(ix); free(ix); PyErr_NoMemory(); return NULL; }
    d->cache[d->ncache++] = ix;
    return ix;
}

/* the id of symbol s (a new one when first seen); -1 with a Python error */
static int intern(Database *db, PyObject *s, i64 *out) {
    PyObject *id = PyDict_GetItemWithError(db->ids, s);
    if (id) {
        *out = PyLong_AsLongLong(id);
        return 0;
    }
    if (PyErr_Occurred()) return -1;
    Py_ssize_t n = PyList_GET_SIZE(db->names);
    PyObject *o = PyLong_FromSsize_t(n);
    if (!o) return -1;
    int err = PyDict_SetItem(db->ids, s, o) < 0 || PyList_Append(db->names, s) < 0;
    Py_DECREF(o);
    if (err) return -1;
    *out = n;
    return 0;
}

static int table_number(Database *db, PyObject *o) {
    long t = PyLong_AsLong(o);
    if (t < 0 || t >= db->ntab) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "no such table");
        return -1;
    }
    return (int)t;
}

/* ------------------------------------------------------------ methods: data in and out */
static PyObject *db_add_table(Database *db, PyObject *args) {
    int arity;
    PyObject *sym;
    if (!PyArg_ParseTuple(args, "iO!", &arity, &PyTuple_Type, &sym)) return NULL;
    if (arity < 0 || arity > MAXKEY * 2 || PyTuple_GET_SIZE(sym) != arity) {
        PyErr_SetString(PyExc_ValueError, "arity");
        return NULL;
    }
    if (db->ntab == db->cap) {
        int cap = db->cap ? db->cap * 2 : 64;
        DbTable **n = realloc(db->tab, sizeof(DbTable *) * (size_t)cap);
        if (!n) return PyErr_NoMemory();
        db->tab = n;
        db->cap = cap;
    }
    DbTable *d = calloc(1, sizeof(DbTable));
    char *s = calloc((size_t)arity + 1, 1);
    if (!d || !s) { free(d); free(s); return PyErr_NoMemory(); }
    for (int i = 0; i < arity; i++) s[i] = (char)PyObject_IsTrue(PyTuple_GET_ITEM(sym, i));
    d->t.arity = arity;
    d->sym = s;
    db->tab[db->ntab] = d;
    return PyLong_FromLong(db->ntab++);
}

/* a row's values in C form (symbols interned): 1, 0 when one has none
   (not a tuple of the table's arity, a value of another type, an int beyond
   64 bits), -1 with a Python error */
static int row_values(Database *db, DbTable *d, PyObject *tup, i64 *vals) {
    if (!PyTuple_Check(tup) || PyTuple_GET_SIZE(tup) != d->t.arity) return 0;
    for (int i = 0; i < d->t.arity; i++) {
        PyObject *v = PyTuple_GET_ITEM(tup, i);
        if (d->sym[i]) {
            if (!PyUnicode_Check(v)) return 0;
            if (intern(db, v, &vals[i]) < 0) return -1;
        } else if (!PyLong_Check(v) || to_i64(v, &vals[i]) < 0) {
            return 0;
        }
    }
    return 1;
}

static PyObject *db_insert(Database *db, PyObject *args) {
    PyObject *tno_o, *rows;
    if (!PyArg_ParseTuple(args, "OO", &tno_o, &rows)) return NULL;
    int tno = table_number(db, tno_o);
    if (tno < 0) return NULL;
    DbTable *d = db->tab[tno];
    PyObject *seq = PySequence_Fast(rows, "rows: an iterable of tuples");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    int a = d->t.arity, ok = 1;
    /* every row converted first, in one pass (its symbols interned: an id
       given to a string of a row that then does not go in is harmless):
       all go in, or none */
    i64 *vals = malloc(sizeof(i64) * (size_t)(n * a + 1));
    if (!vals) { Py_DECREF(seq); return PyErr_NoMemory(); }
    for (Py_ssize_t k = 0; k < n && ok == 1; k++) ok = row_values(db, d, items[k], vals + k * a);
    Py_DECREF(seq);
    if (ok == 1 && n) {
        db_changed(db, tno);
        if (db_table_ensure_set(d) < 0 || table_reserve(&d->t, n) < 0) { free(vals); return PyErr_NoMemory(); }
        for (Py_ssize_t k = 0; k < n; k++) {
            if (table_insert(&d->t, vals + k * a) == -2) { free(vals); return PyErr_NoMemory(); }
        }
    }
    free(vals);
    if (ok < 0) return NULL;
    return PyBool_FromLong(ok);
}

static PyObject *db_clear(Database *db, PyObject *arg) {
    int tno = table_number(db, arg);
    if (tno < 0) return NULL;
    db_changed(db, tno);
    db_table_reset(db->tab[tno]);
    db->tab[tno]->no_set = 0;
    Py_RETURN_NONE;
}

static PyObject *db_drop_set(Database *db, PyObject *arg) {
    int tno = table_number(db, arg);
    if (tno < 0) return NULL;
    Table *t = &db->tab[tno]->t;
    free(t->set);
    t->set = NULL;
    t->set_cap = t->set_used = 0;
    db->tab[tno]->no_set = 1;
    Py_RETURN_NONE;
}

static PyObject *db_size(Database *db, PyObject *arg) {
    int tno = table_number(db, arg);
    if (tno < 0) return NULL;
    return PyLong_FromLongLong(db->tab[tno]->t.n);
}

static PyObject *db_rows(Database *db, PyObject *arg) {
    int tno = table_number(db, arg);
    if (tno < 0) return NULL;
    DbTable *d = db->tab[tno];
    IntSlot *cache = calloc(INT_CACHE, sizeof(IntSlot));
    if (!cache) return PyErr_NoMemory();
    PyObject *set = table_to_set(&d->t, cache, d->sym, db->names);
    for (int i = 0; i < INT_CACHE; i++) Py_XDECREF(cache[i].o);
    free(cache);
    return set;
}

/* the rows of a table as one buffer of int64s, row after row, in the order
   rows() gives them, symbol columns as symbol ids (symbols() names them):
   what a columnar writer (a DuckDB file) reads without a Python tuple per row */
static PyObject *db_rows_array(Database *db, PyObject *arg) {
    int tno = table_number(db, arg);
    if (tno < 0) return NULL;
    Table *t = &db->tab[tno]->t;
    int by_set = t->set_cap > 0;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(t->n * t->arity * (i64)sizeof(i64)));
    if (!out) return NULL;
    i64 *dst = (i64 *)PyBytes_AS_STRING(out), k = 0;
    for (i64 s = 0; s < (by_set ? t->set_cap : t->n); s++) {
        int32_t id = by_set ? t->set[s].id : (int32_t)s;
        if (id < 0) continue;
        memcpy(dst + k * t->arity, row(t, id), sizeof(i64) * (size_t)t->arity);
        k++;
    }
    if (k != t->n && _PyBytes_Resize(&out, (Py_ssize_t)(k * t->arity * (i64)sizeof(i64))) < 0) return NULL;
    return out;
}

static PyObject *db_symbols(Database *db, PyObject *Py_UNUSED(arg)) {
    return PyList_GetSlice(db->names, 0, PyList_GET_SIZE(db->names));
}

static PyObject *db_index_keys(Database *db, PyObject *args) {
    PyObject *tno_o, *key_o;
    int key[MAXKEY];
    if (!PyArg_ParseTuple(args, "OO", &tno_o, &key_o)) return NULL;
    int tno = table_number(db, tno_o);
    if (tno < 0) return NULL;
    int nkey = key_columns(key_o, db->tab[tno]->t.arity, key);
    if (nkey < 0) return NULL;
    Index *ix = db_index(db, tno, key, nkey);
    if (!ix) return NULL;
    return PyLong_FromLongLong(nkey ? ix->used : (db->tab[tno]->t.n > 0));
}

static PyObject *db_distinct(Database *db, PyObject *args) {
    int tno, col;
    Py_ssize_t sample;
    if (!PyArg_ParseTuple(args, "iin", &tno, &col, &sample)) return NULL;
    if (tno < 0 || tno >= db->ntab || col < 0 || col >= db->tab[tno]->t.arity || sample < 1) {
        PyErr_SetString(PyExc_ValueError, "distinct");
        return NULL;
    }
    Table *t = &db->tab[tno]->t;
    i64 n = t->n < sample ? t->n : sample, cap = 16, count = 0;
    while (cap < 2 * n) cap *= 2;
    i64 *vals = malloc(sizeof(i64) * (size_t)cap);
    char *used = calloc((size_t)cap, 1);
    if (!vals || !used) { free(vals); free(used); return PyErr_NoMemory(); }
    for (i64 r = 0; r < n; r++) {
        i64 v = row(t, r)[col];
        for (i64 s = (i64)(hash_vals(&v, 1) & (u64)(cap - 1));; s = (s + 1) & (cap - 1)) {
            if (!used[s]) { used[s] = 1; vals[s] = v; count++; break; }
            if (vals[s] == v) break;
        }
    }
    free(vals);
    free(used);
    return PyLong_FromLongLong(count);
}

/* bytes written in a table's arrays: its rows, its set, its indexes */
static PyObject *db_memory(Database *db, PyObject *arg) {
    int tno = table_number(db, arg);
    if (tno < 0) return NULL;
    DbTable *d = db->tab[tno];
    Table *t = &d->t;
    i64 ix = 0;
    for (int i = 0; i < d->ncache; i++) {
        Index *x = d->cache[i];
        ix += x->cap * (i64)sizeof(Bucket) + (x->packed ? x->npacked * (i64)sizeof(int32_t) : 0);
    }
    return Py_BuildValue("(LLL)", (long long)(t->n * t->arity * (i64)sizeof(i64)),
                         (long long)(t->set_cap * (i64)sizeof(SetSlot)), (long long)ix);
}

static PyObject *db_intern(Database *db, PyObject *s) {
    if (!PyUnicode_Check(s)) { PyErr_SetString(PyExc_TypeError, "a symbol is a str"); return NULL; }
    i64 id;
    if (intern(db, s, &id) < 0) return NULL;
    return PyLong_FromLongLong(id);
}

/* ------------------------------------------------------------ evaluation of a stratum */
typedef struct {
    Interp in;     /* (first: an Interp * is a Run *) */
    Table *buf;    /* per relation of the stratum: tuples emitted this round */
} Run;

static int buffer_emit(Interp *in, int rel, int rule, const i64 *vals) {
    (void)rule;
    if (table_append(&((Run *)in)->buf[rel], vals) < 0) { in->status = ST_NOMEM; return -1; }
    return 0;
}

/* the base programs' tuples: appended to their tables, and put in their
   sets once they are all there (table_absorb; no program reads them before:
   a base program reads no relation of the stratum) */
static int direct_emit(Interp *in, int rel, int rule, const i64 *vals) {
    (void)rule;
    if (table_append(in->out[rel], vals) < 0) { in->status = ST_NOMEM; return -1; }
    return 0;
}

/* the buffered tuples into their tables: -1 out of memory */
static int flush(Run *run) {
    for (int ri = 0; ri < run->in.nout; ri++) {
        Table *b = &run->buf[ri];
        Table *t = run->in.out[ri];
        /* (room for them at once: one copy of the rows, not one per doubling) */
        if (table_grow_rows(t, t->n + b->n) < 0) return -1;
        for (i64 k = 0; k < b->n; k++)
            if (table_insert(run->in.out[ri], row(b, k)) == -2) return -1;
        b->n = 0;
    }
    return 0;
}

/* the rounds (see the header comment): 0, or -1 stop (run->in.status) */
static int rounds(Run *run, Prog *base, int nbase, Prog **delta, int *ndelta, i64 *iterations) {
    Interp *in = &run->in;
    static const i64 no_delta[1];
    i64 *lo = calloc((size_t)in->nout + 1, sizeof(i64)), *hi = calloc((size_t)in->nout + 1, sizeof(i64));
    if (!lo || !hi) { free(lo); free(hi); in->status = ST_NOMEM; return -1; }
    for (int ri = 0; ri < in->nout; ri++) hi[ri] = in->out[ri]->n;   /* (the rows before the base programs') */
    in->emit = direct_emit;
    for (int k = 0; k < nbase; k++)
        if (run_programs(in, &base[k], 1, no_delta, 0) < 0) { free(lo); free(hi); return -1; }
    for (int ri = 0; ri < in->nout; ri++)
        if (table_absorb(in->out[ri], hi[ri]) < 0) { free(lo); free(hi); in->status = ST_NOMEM; return -1; }
    in->emit = buffer_emit;
    int rc = 0;
    for (;;) {
        int any = 0;
        for (int ri = 0; ri < in->nout; ri++) {
            hi[ri] = in->out[ri]->n;
            if (hi[ri] > lo[ri] && ndelta[ri]) any = 1;
        }
        if (!any) break;
        (*iterations)++;
        for (int ri = 0; ri < in->nout && rc == 0; ri++) {
            Table *t = in->out[ri];
            for (i64 r = lo[ri]; r < hi[ri] && ndelta[ri]; r++)
                if (run_programs(in, delta[ri], ndelta[ri], row(t, r), t->arity) < 0) { rc = -1; break; }
            lo[ri] = hi[ri];
        }
        if (rc == 0 && flush(run) < 0) { in->status = ST_NOMEM; rc = -1; }
        if (rc) break;
    }
    free(lo);
    free(hi);
    return rc;
}

PyDoc_STRVAR(db_run_doc,
"run(strata): evaluate strata in order (see db.c), each (out, indexes, base, deltas, checks):\n"
"out: [table] the relations of the stratum (EMIT's relation numbers);\n"
"indexes: [(table, key columns, live?)] (live: of a relation of the stratum);\n"
"base: [program]; deltas: per relation of out, [program] run on its new tuples;\n"
"a program: (nregs, ntup, words, [register, constant, ...]);\n"
"checks: [(table, lo, hi)]: the stratum runs only if each table holds lo..hi rows.\n"
"Returns (status, k, [rounds of each stratum run]): 'ok' (k: all of them), 'stale' (stratum k's\n"
"checks failed: it did not run) or 'abort' (stratum k's tables are partly filled).");

/* one stratum: 0 done, 1 aborted (see db_run_doc), -1 a Python error */
static int run_stratum(Database *db, PyObject *out_l, PyObject *ix_l, PyObject *base_l, PyObject *delta_l,
                       i64 *iterations) {
    Run run;
    memset(&run, 0, sizeof run);
    Interp *in = &run.in;
    int nout = (int)PyList_GET_SIZE(out_l), nix = (int)PyList_GET_SIZE(ix_l), nbase = 0;
    int *outno = calloc((size_t)nout + 1, sizeof(int));
    Index **owned = calloc((size_t)nix + 1, sizeof(Index *));   /* the live indexes, built for this run */
    Prog *base = NULL, **delta = calloc((size_t)nout + 1, sizeof(Prog *));
    int *ndelta = calloc((size_t)nout + 1, sizeof(int));
    int result = -1;
    in->nout = nout;
    in->nix = nix;
    in->out = calloc((size_t)nout + 1, sizeof(Table *));
    in->ix = calloc((size_t)nix + 1, sizeof(Index *));
    in->emit = buffer_emit;
    run.buf = calloc((size_t)nout + 1, sizeof(Table));
    if (!outno || !owned || !delta || !ndelta || !in->out || !in->ix || !run.buf) { PyErr_NoMemory(); goto out; }
    if (PyList_GET_SIZE(delta_l) != nout) { PyErr_SetString(PyExc_ValueError, "one delta list per relation"); goto out; }
    for (int ri = 0; ri < nout; ri++) {
        if ((outno[ri] = table_number(db, PyList_GET_ITEM(out_l, ri))) < 0) goto out;
        db_changed(db, outno[ri]);
        in->out[ri] = &db->tab[outno[ri]]->t;
        if (db_table_ensure_set(db->tab[outno[ri]]) < 0) { PyErr_NoMemory(); goto out; }
        run.buf[ri].arity = in->out[ri]->arity;
    }
    for (int i = 0; i < nix; i++) {
        PyObject *tno_o, *key_o;
        int live, key[MAXKEY];
        if (!PyArg_ParseTuple(PyList_GET_ITEM(ix_l, i), "OOp", &tno_o, &key_o, &live)) goto out;
        int tno = table_number(db, tno_o);
        if (tno < 0) goto out;
        int nkey = key_columns(key_o, db->tab[tno]->t.arity, key);
        if (nkey < 0) goto out;
        if (!live) {
            if (!(in->ix[i] = db_index(db, tno, key, nkey))) goto out;
            continue;
        }
        /* a relation of the stratum: an index kept up to date as its table grows
           (no key: a scan of the table's rows, nothing to keep) */
        Index *ix = owned[i] = in->ix[i] = calloc(1, sizeof(Index));
        if (!ix) { PyErr_NoMemory(); goto out; }
        Table *t = ix->t = &db->tab[tno]->t;
        ix->nkey = nkey;
        memcpy(ix->key, key, sizeof(int) * (size_t)nkey);
        if (!nkey) continue;
        for (i64 r = 0; r < t->n; r++)
            if (index_add(ix, (int32_t)r) < 0) { PyErr_NoMemory(); goto out; }
        if (table_watch(t, ix) < 0) { PyErr_NoMemory(); goto out; }
    }
    if (load_checked(base_l, in, 0, &base, &nbase) < 0) goto out;
    for (int ri = 0; ri < nout; ri++)
        if (load_checked(PyList_GET_ITEM(delta_l, ri), in, in->out[ri]->arity, &delta[ri], &ndelta[ri]) < 0) goto out;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rounds(&run, base, nbase, delta, ndelta, iterations);
    Py_END_ALLOW_THREADS
    if (rc < 0 && in->status == ST_NOMEM)
        PyErr_NoMemory();
    else
        result = rc < 0;   /* (an integer overflow, a division by zero or a bad shift) */
out:
    for (int ri = 0; ri < nout && outno && in->out; ri++) {
        if (!in->out[ri]) continue;
        Table *t = in->out[ri];   /* the live indexes go: later strata read packed ones */
        free(t->idx);
        t->idx = NULL;
        t->nidx = 0;
        db_changed(db, outno[ri]);
    }
    for (int i = 0; owned && i < nix; i++) {
        if (owned[i]) { index_free(owned[i]); free(owned[i]); }
    }
    for (int k = 0; base && k < nbase; k++) prog_free(&base[k]);
    free(base);
    for (int ri = 0; delta && ri < nout; ri++) {
        for (int k = 0; delta[ri] && k < ndelta[ri]; k++) prog_free(&delta[ri][k]);
        free(delta[ri]);
    }
    for (int ri = 0; run.buf && ri < nout; ri++) table_free(&run.buf[ri]);
    free(run.buf);
    free(delta);
    free(ndelta);
    free(owned);
    free(outno);
    free(in->out);
    free(in->ix);
    return result;
}

/* the checks of a stratum hold: 1, 0, or -1 a Python error */
static int checks_hold(Database *db, PyObject *checks) {
    if (!PyList_Check(checks)) { PyErr_SetString(PyExc_TypeError, "a list of checks"); return -1; }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(checks); i++) {
        PyObject *tno_o;
        long long lo, hi;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(checks, i), "OLL", &tno_o, &lo, &hi)) return -1;
        int tno = table_number(db, tno_o);
        if (tno < 0) return -1;
        i64 n = db->tab[tno]->t.n;
        if (n < lo || n > hi) return 0;
    }
    return 1;
}

static PyObject *db_run(Database *db, PyObject *args) {
    PyObject *strata;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &strata)) return NULL;
    PyObject *rounds = PyList_New(0);
    if (!rounds) return NULL;
    Py_ssize_t k = 0, n = PyList_GET_SIZE(strata);
    const char *status = "ok";
    for (; k < n; k++) {
        PyObject *out_l, *ix_l, *base_l, *delta_l, *checks;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(strata, k), "O!O!O!O!O", &PyList_Type, &out_l, &PyList_Type, &ix_l,
                              &PyList_Type, &base_l, &PyList_Type, &delta_l, &checks))
            goto error;
        int fresh = checks_hold(db, checks);
        if (fresh < 0) goto error;
        if (!fresh) { status = "stale"; break; }
        i64 iterations = 0;
        int rc = run_stratum(db, out_l, ix_l, base_l, delta_l, &iterations);
        if (rc < 0) goto error;
        if (rc) { status = "abort"; break; }
        PyObject *it = PyLong_FromLongLong(iterations);
        if (!it || PyList_Append(rounds, it) < 0) { Py_XDECREF(it); goto error; }
        Py_DECREF(it);
    }
    return Py_BuildValue("(snN)", status, k, rounds);
error:
    Py_DECREF(rounds);
    return NULL;
}

/* ------------------------------------------------------------ the type */
static PyObject *db_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    if (!PyArg_ParseTuple(args, ":Database")) return NULL;
    Database *db = (Database *)type->tp_alloc(type, 0);
    if (!db) return NULL;
    db->names = PyList_New(0);
    db->ids = PyDict_New();
    if (!db->names || !db->ids) { Py_DECREF(db); return NULL; }
    return (PyObject *)db;
}

static void db_dealloc(Database *db) {
    for (int i = 0; i < db->ntab; i++) {
        db_changed(db, i);
        table_free(&db->tab[i]->t);
        free(db->tab[i]->sym);
        free(db->tab[i]);
    }
    free(db->tab);
    free(db->scratch.b);
    Py_XDECREF(db->names);
    Py_XDECREF(db->ids);
    Py_TYPE(db)->tp_free((PyObject *)db);
}

static PyMethodDef db_methods[] = {
    {"add_table", (PyCFunction)db_add_table, METH_VARARGS,
     "add_table(arity, symbol columns: tuple of bools) -> table number"},
    {"insert", (PyCFunction)db_insert, METH_VARARGS,
     "insert(table, rows) -> False (nothing inserted) when a row has no C form (not a tuple of the\n"
     "table's arity, an int beyond 64 bits, a value of another type)"},
    {"clear", (PyCFunction)db_clear, METH_O, "clear(table)"},
    {"drop_set", (PyCFunction)db_drop_set, METH_O,
     "drop_set(table): free the hash set that deduplicates its rows, for as long as no row goes in\n"
     "by insert or run (rows(table) then gives them in row order; a rank-ordered run's result\n"
     "is stored without one)"},
    {"size", (PyCFunction)db_size, METH_O, "size(table) -> tuple count"},
    {"rows", (PyCFunction)db_rows, METH_O, "rows(table) -> a set of tuples (symbols as str)"},
    {"rows_array", (PyCFunction)db_rows_array, METH_O,
     "rows_array(table) -> bytes: its rows as int64s, row after row (symbols as ids)"},
    {"symbols", (PyCFunction)db_symbols, METH_NOARGS, "symbols() -> list: symbol id -> its string"},
    {"index_keys", (PyCFunction)db_index_keys, METH_VARARGS,
     "index_keys(table, key columns) -> distinct keys (the index is built and kept)"},
    {"distinct", (PyCFunction)db_distinct, METH_VARARGS,
     "distinct(table, column, sample) -> distinct values among the first `sample` rows"},
    {"intern", (PyCFunction)db_intern, METH_O, "intern(str) -> its symbol id"},
    {"memory", (PyCFunction)db_memory, METH_O,
     "memory(table) -> bytes written in its (rows, hash set, indexes)"},
    {"run", (PyCFunction)db_run, METH_VARARGS, db_run_doc},
    {NULL, NULL, 0, NULL},
};

PyTypeObject DatabaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sdylog.datalog._native.Database",
    .tp_basicsize = sizeof(Database),
    .tp_dealloc = (destructor)db_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The relations of a memory-engine run, held in C (see sdylog/datalog/native/db.c).",
    .tp_methods = db_methods,
    .tp_new = db_new,
};
