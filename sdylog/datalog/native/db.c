/* _native.Database: every relation of a memory-engine run held in C, and the
 * evaluation of its strata (sdylog/datalog/native_db.py drives it).
 *
 * A relation is a DbTable (db.h): int64 rows deduplicated by a hash set;
 * symbols are interned (one table of strings per database: equal strings,
 * equal ids). Indexes a stratum reads are built once per table version
 * (packed, see table.h) and reused by later strata until the table changes.
 *
 * A stratum's plan (its programs and indexes, the table sizes it was made
 * for: checks) is a Plan of its words: its head (tables, indexes, checks)
 * loads when a database first offers it, its programs when it first runs;
 * run() runs it as often as asked, for any database of the same table
 * shapes. run([[plan, ...], ...])
 * evaluates strata semi-naively: the
 * base programs (clauses reading no relation of the stratum) run once, then
 * each delta program runs on every tuple new in the last round, until no
 * round adds any (a plain stratum has no delta programs: one round). A
 * delta program's EMIT appends to a buffer, inserted into the tables after
 * the round, and a base program's goes straight in (it reads none of them):
 * a table is never changed while a program reads it. Relations of the stratum are read
 * through indexes kept up to date on insert ("live" ones). run takes a list of
 * strata, each with the plans kept for it and the table sizes each was made
 * for (checks): a run of consecutive strata is one call, each running the
 * first of its plans that fits the sizes, up to the first with none. A plan
 * with rank columns is of a rank-ordered stratum (ranked.c evaluates it),
 * and a stratum may be a stepped one (run_stepped, its seed and step
 * programs' strata run here too): a whole evaluation run of a program is
 * one call while its plans fit.
 */
#include "interp.h"
#include "db.h"

/* ------------------------------------------------------------ programs from Python */
/* an array of n programs, then the array itself (NULL: nothing) */
static void progs_free(Prog *ps, int n) {
    for (int k = 0; ps && k < n; k++) {
        free(ps[k].code);
        free(ps[k].regs);
    }
    free(ps);
}

/* a plan's words (native_plan.plan_words), read in order, each read checked
   against their end: int64s, or int32s (`width` 4: a plan saved when all fit) */
typedef struct { const char *w; int width; Py_ssize_t n, at; } Words;

static i64 word_at(const Words *r, Py_ssize_t i) {
    if (r->width == 4) {
        int32_t v;
        memcpy(&v, r->w + 4 * i, 4);
        return v;
    }
    i64 v;
    memcpy(&v, r->w + 8 * i, 8);
    return v;
}

/* the next word, in lo..hi: 0, or -1 with a Python error naming `what` */
static int next_word(Words *r, i64 lo, i64 hi, const char *what, i64 *out) {
    if (r->at >= r->n) { PyErr_Format(PlanRefused, "a plan cut short (%s)", what); return -1; }
    *out = word_at(r, r->at++);
    if (*out < lo || *out > hi) { PyErr_Format(PlanRefused, "a plan's %s out of range", what); return -1; }
    return 0;
}

/* the next word as an int in lo..hi */
static int next_int(Words *r, int lo, int hi, const char *what, int *out) {
    i64 v;
    if (next_word(r, lo, hi, what, &v) < 0) return -1;
    *out = (int)v;
    return 0;
}

static int load_prog(Words *r, Prog *p) {
    /* nregs, ntup, n, n words, k, k (register, value) pairs */
    i64 len, nconsts;
    if (next_int(r, 1, MAX_REGS, "registers", &p->nregs) < 0 || next_int(r, 0, MAX_TUPLES, "tuples", &p->ntup) < 0
        || next_word(r, 0, r->n - r->at - 1, "program length", &len) < 0)
        return -1;
    p->len = len;
    p->code = malloc(sizeof(i64) * (size_t)(len + 1));
    p->regs = calloc((size_t)p->nregs, sizeof(i64));
    if (!p->code || !p->regs) { PyErr_NoMemory(); return -1; }
    for (i64 i = 0; i < len; i++) p->code[i] = word_at(r, r->at++);
    p->code[len] = OP_END;
    if (next_word(r, 0, p->nregs, "constants", &nconsts) < 0) return -1;
    for (i64 i = 0; i < nconsts; i++) {
        i64 reg;
        if (next_word(r, 0, p->nregs - 1, "constant register", &reg) < 0
            || next_word(r, INT64_MIN, INT64_MAX, "constant", &p->regs[reg]) < 0)
            return -1;
    }
    return 0;
}

static int check_prog(Interp *ev, Prog *p, int arity);

/* A count, then that many programs, into a new array *out, each checked
   against the interpreter `in` (`arity`: the columns of the tuple a program
   starts from, 0 for none): 0, or -1 with a Python error. *n is the array's
   length from the start, so that the caller frees every program (progs_free)
   either way. */
static int load_checked(Words *r, Interp *in, int arity, Prog **out, int *n) {
    int len;
    if (next_int(r, 0, (int)(r->n - r->at), "programs", &len) < 0) return -1;
    *out = calloc((size_t)len + 1, sizeof(Prog));
    if (!*out) { PyErr_NoMemory(); return -1; }
    *n = len;
    for (int k = 0; k < len; k++)
        if (load_prog(r, &(*out)[k]) < 0 || check_prog(in, &(*out)[k], arity) < 0) return -1;
    return 0;
}


/* the operands of a program in range (the interpreter does not check them),
   and the words BRANCH and JOIN go on at the start of an instruction. A
   column of a tuple slot (BIND, CHECK) is below the arity of every table a
   SCAN or LOOKUP before it put in that slot: a plan's words come from disk
   too (saved plans), and the interpreter reads t[c] unchecked. (ev's indexes
   may be stand-ins: their nkey and t, whose arity, are what is read.) */
static int check_prog(Interp *ev, Prog *p, int arity) {
    const i64 *c = p->code;
    Py_ssize_t pc = 0, ntargets = 0;
    int columns[MAX_TUPLES];   /* tuple slot -> the fewest columns of a table put in it, -1 none yet */
    for (int i = 0; i < MAX_TUPLES; i++) columns[i] = -1;
    char *start = calloc((size_t)p->len + 1, 1);                     /* word -> starts an instruction */
    Py_ssize_t *target = malloc(sizeof(Py_ssize_t) * (size_t)(p->len + 1));   /* words jumped to */
    if (!start || !target) { free(start); free(target); PyErr_NoMemory(); return -1; }
#define REG(x) ((x) >= 0 && (x) < p->nregs)
#define TUP(x) ((x) >= 0 && (x) < p->ntup)
#define IDX(x) ((x) >= 0 && (x) < ev->nix)
#define FITS(k) (pc + (k) <= p->len)
#define FILL(slot, index) do { int a_ = ev->ix[index]->t->arity; \
        if (columns[slot] < 0 || a_ < columns[slot]) columns[slot] = a_; } while (0)
    if (p->nregs < arity) goto bad;
    while (pc < p->len) {
        i64 op = c[pc];
        Py_ssize_t n = 0;
        start[pc] = 1;
        switch (op) {
        case OP_SCAN:
            if (!FITS(3) || !IDX(c[pc + 1]) || ev->ix[c[pc + 1]]->nkey || !TUP(c[pc + 2])) goto bad;
            FILL(c[pc + 2], c[pc + 1]);
            pc += 3;
            break;
        case OP_LOOKUP: case OP_NOTIN: {
            int at = op == OP_LOOKUP ? 4 : 3;
            if (!FITS(at) || !IDX(c[pc + 1])) goto bad;
            n = c[pc + at - 1];
            if (n < 1 || n > MAXKEY || n != ev->ix[c[pc + 1]]->nkey || !FITS(at + n)) goto bad;
            if (op == OP_LOOKUP) {
                if (!TUP(c[pc + 2])) goto bad;
                FILL(c[pc + 2], c[pc + 1]);
            }
            for (Py_ssize_t i = 0; i < n; i++) if (!REG(c[pc + at + i])) goto bad;
            pc += at + n;
            break;
        }
        case OP_BIND: case OP_CHECK: {
            int r = op == OP_BIND ? 1 : 3, t = op == OP_BIND ? 2 : 1, col = op == OP_BIND ? 3 : 2;
            if (!FITS(4) || !REG(c[pc + r]) || !TUP(c[pc + t]) || c[pc + col] < 0 || c[pc + col] >= columns[c[pc + t]])
                goto bad;
            pc += 4;
            break;
        }
        case OP_ARITH:
            if (!FITS(5) || !REG(c[pc + 2]) || !REG(c[pc + 3]) || !REG(c[pc + 4])) goto bad;
            pc += 5;
            break;
        case OP_UNARY: if (!FITS(4) || !REG(c[pc + 2]) || !REG(c[pc + 3])) goto bad; pc += 4; break;
        case OP_CMP:
            if (!FITS(4) || c[pc + 1] < C_EQ || c[pc + 1] > C_SGE || !REG(c[pc + 2]) || !REG(c[pc + 3])) goto bad;
            pc += 4;
            break;
        case OP_ANY: {   /* (options of m >= 1 comparisons filling its n words exactly) */
            if (!FITS(2) || c[pc + 1] < 0 || !FITS(2 + c[pc + 1])) goto bad;
            Py_ssize_t w = pc + 2, end = w + c[pc + 1];
            while (w < end) {
                Py_ssize_t m = c[w++];
                if (m < 1 || m > (end - w) / 3) goto bad;
                for (; m > 0; m--, w += 3)
                    if (c[w] < C_EQ || c[w] > C_SGE || !REG(c[w + 1]) || !REG(c[w + 2])) goto bad;
            }
            pc = end;
            break;
        }
        case OP_BRANCH: {   /* (n options of m >= 2 words each, the instructions that follow) */
            if (!FITS(2) || c[pc + 1] < 1 || !FITS(2 + c[pc + 1])) goto bad;
            Py_ssize_t at = pc + 2 + c[pc + 1];
            for (i64 k = 0; k < c[pc + 1]; k++) {
                if (c[pc + 2 + k] < 2 || c[pc + 2 + k] > p->len - at) goto bad;
                target[ntargets++] = at;
                at += c[pc + 2 + k];
            }
            pc += 2 + c[pc + 1];
            break;
        }
        case OP_JOIN:
            if (!FITS(2) || c[pc + 1] < 2 || !FITS(c[pc + 1])) goto bad;
            target[ntargets++] = pc + c[pc + 1];
            pc += 2;
            break;
        case OP_MOVE: if (!FITS(3) || !REG(c[pc + 1]) || !REG(c[pc + 2])) goto bad; pc += 3; break;
        case OP_EMPTY: if (!FITS(2) || !IDX(c[pc + 1])) goto bad; pc += 2; break;
        case OP_DISTINCT:   /* (compares the slot's tuple with the tested one, of `arity` columns) */
            if (!FITS(2) || !TUP(c[pc + 1]) || columns[c[pc + 1]] < arity) goto bad;
            pc += 2;
            break;
        case OP_FAIL: case OP_TRUE: pc += 1; break;
        case OP_AGG:   /* (its body's words are checked as the next instructions) */
            if (!FITS(5) || c[pc + 1] < G_COUNT || c[pc + 1] > G_MAX || !REG(c[pc + 2]) || !REG(c[pc + 3])
                || c[pc + 4] < 0 || !FITS(5 + c[pc + 4])) goto bad;
            target[ntargets++] = pc + 5 + c[pc + 4];
            pc += 5;
            break;
        case OP_ACC:
            if (!FITS(5) || c[pc + 1] < G_COUNT || c[pc + 1] > G_MAX || !REG(c[pc + 2]) || !REG(c[pc + 3])
                || !REG(c[pc + 4])) goto bad;
            pc += 5;
            break;
        case OP_EMIT:
            if (!FITS(3) || c[pc + 1] < 0 || c[pc + 1] >= ev->nout) goto bad;
            n = c[pc + 2];
            if (n != ev->out[c[pc + 1]]->arity || !FITS(3 + n)) goto bad;
            for (Py_ssize_t i = 0; i < n; i++) if (!REG(c[pc + 3 + i])) goto bad;
            pc += 3 + n;
            break;
        default: goto bad;
        }
    }
    start[p->len] = 1;   /* (OP_END) */
    for (Py_ssize_t i = 0; i < ntargets; i++)
        if (!start[target[i]]) { pc = target[i]; goto bad; }
    free(start);
    free(target);
    return 0;
bad:
    free(start);
    free(target);
    PyErr_Format(PlanRefused, "malformed program at word %zd", pc);
    return -1;
#undef REG
#undef TUP
#undef IDX
#undef FITS
#undef FILL
}

/* key columns (a tuple of ints) into key[]: their number, -1 with a Python error */
static int key_columns(PyObject *tup, int arity, int *key) {
    if (!PyTuple_Check(tup) || PyTuple_GET_SIZE(tup) > MAXKEY) {
        PyErr_SetString(PyExc_ValueError, "index key");
        return -1;
    }
    int n = (int)PyTuple_GET_SIZE(tup);
    for (int k = 0; k < n; k++) {
        key[k] = (int)PyLong_AsLong(PyTuple_GET_ITEM(tup, k));
        if (key[k] < 0 || key[k] >= arity) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "index column");
            return -1;
        }
    }
    return n;
}

/* ------------------------------------------------------------ Python values */
static int to_i64(PyObject *o, i64 *out) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -1;
    }
    *out = v;
    return 0;
}

/* the rows of table tno (distinct: a table never removes one), in row order,
   as Python tuples added to the set `out`: 0, -1 with a Python error. A
   symbol column's ids are given as their strings */
static int table_tuples(Database *db, int tno, PyObject *out) {
    Table *t = &db->tab[tno]->t;
    const char *sym = db->tab[tno]->sym;
    for (i64 id = 0; id < t->n; id++) {
        const i64 *r = row(t, id);
        PyObject *tup = PyTuple_New(t->arity);
        if (!tup) return -1;
        for (int c = 0; c < t->arity; c++) {
            PyObject *v;
            if (sym[c]) {
                /* (a malformed plan, its words read from disk, can put any int in a symbol column) */
                if (r[c] < 0 || r[c] >= PyList_GET_SIZE(db->names)) {
                    Py_DECREF(tup);
                    PyErr_Format(PyExc_ValueError, "symbol id %lld out of range", (long long)r[c]);
                    return -1;
                }
                v = PyList_GET_ITEM(db->names, r[c]);
                Py_INCREF(v);
            } else {
                v = PyLong_FromLongLong(r[c]);
            }
            if (!v) { Py_DECREF(tup); return -1; }
            PyTuple_SET_ITEM(tup, c, v);
        }
        int err = PySet_Add(out, tup);
        Py_DECREF(tup);
        if (err < 0) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ tables */
static void db_table_reset(DbTable *d) {
    int arity = d->t.arity;
    table_free(&d->t);
    memset(&d->t, 0, sizeof d->t);
    d->t.arity = arity;
}

/* a table whose set was dropped (drop_sets) gets one again before rows go
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
       the set as large as those steps would make it. The rows are distinct:
       no lookup before each goes in. */
    Table *t = &d->t;
    i64 n = src->n, cap = 64;
    if (n) {
        while (2 * n > cap) cap *= 2;
        if (!(t->data = malloc(sizeof(i64) * (size_t)(n * t->arity + 1)))) return -1;
        if (!d->no_set && set_resize(t, cap) < 0) return -1;
        t->cap = n;
    }
    for (i64 r = 0; r < n; r++) {
        memcpy(row(t, t->n), row(src, r), sizeof(i64) * (size_t)t->arity);
        if (d->no_set)
            t->n++;
        else if (set_add(t, (int32_t)t->n++, hash_vals(row(src, r), t->arity)) < 0)   /* (no index watches it yet) */
            return -1;
    }
    return 0;
}

int db_plain_indexes = 0;

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
    if (nkey && (db_plain_indexes ? index_build_plain(ix) : index_build_packed(ix, &db->scratch)) < 0) { index_free(ix); free(ix); PyErr_NoMemory(); return NULL; }
    d->cache[d->ncache++] = ix;
    return ix;
}

/* symbol s (the next id) into db->symbols: -1 with a Python error. Its
   UTF-8 is Python's, kept with the str (db->names holds it); a string with a
   lone surrogate has none: encoded with it kept as is, which keeps the
   order of code points. */
static int add_symbol_text(Database *db, PyObject *s) {
    Py_ssize_t id = PyList_GET_SIZE(db->names);
    if (id == db->symbols_cap) {
        Py_ssize_t cap = id ? 2 * id : 64;
        Symbol *m = realloc(db->symbols, sizeof(Symbol) * (size_t)cap);
        if (!m) { PyErr_NoMemory(); return -1; }
        db->symbols = m;
        db->symbols_cap = cap;
    }
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (!u) {
        PyErr_Clear();
        PyObject *b = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
        if (!b || (!db->encoded && !(db->encoded = PyList_New(0))) || PyList_Append(db->encoded, b) < 0) {
            Py_XDECREF(b);
            return -1;
        }
        u = PyBytes_AS_STRING(b);
        n = PyBytes_GET_SIZE(b);
        Py_DECREF(b);
    }
    db->symbols[id] = (Symbol){u, n};
    return 0;
}

/* the id of symbol s (a new one when first seen); -1 with a Python error */
static int intern(Database *db, PyObject *s, i64 *out) {
    PyObject *id = PyDict_GetItemWithError(db->ids, s);
    if (id) {
        *out = PyLong_AsLongLong(id);
        return 0;
    }
    if (PyErr_Occurred() || add_symbol_text(db, s) < 0) return -1;
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
/* a new empty table of `arity` columns, those whose item of the tuple `sym`
   is true holding symbol ids: its number, -1 with a Python error */
static int new_table(Database *db, int arity, PyObject *sym) {
    if (!PyTuple_Check(sym) || arity < 0 || arity > MAXKEY * 2 || PyTuple_GET_SIZE(sym) != arity) {
        PyErr_SetString(PyExc_ValueError, "a table is (arity, a tuple of arity bools: symbol columns)");
        return -1;
    }
    char sym_col[MAXKEY * 2];   /* (read before any allocation: a __bool__ that raises leaves no table) */
    for (int i = 0; i < arity; i++)
        if ((sym_col[i] = (char)PyObject_IsTrue(PyTuple_GET_ITEM(sym, i))) < 0) return -1;
    if (db->ntab == db->cap) {
        int cap = db->cap ? db->cap * 2 : 64;
        DbTable **n = realloc(db->tab, sizeof(DbTable *) * (size_t)cap);
        if (!n) { PyErr_NoMemory(); return -1; }
        db->tab = n;
        db->cap = cap;
    }
    DbTable *d = db->ntab < db->nmade ? &db->made[db->ntab] : calloc(1, sizeof(DbTable));
    if (!d) { PyErr_NoMemory(); return -1; }
    memcpy(d->sym, sym_col, (size_t)arity);
    d->t.arity = arity;
    db->tab[db->ntab] = d;
    return db->ntab++;
}

/* new_table of a shape (arity, symbol columns), as the constructor takes
   each (read from the tuple itself: a run's database has hundreds, and
   PyArg_ParseTuple per table cost most of making one) */
static int new_table_of(Database *db, PyObject *shape) {
    if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) != 2) {
        PyErr_SetString(PyExc_TypeError, "a table is (arity, a tuple of arity bools: symbol columns)");
        return -1;
    }
    /* (held: the shape is borrowed from the caller's list, which an __index__ may empty) */
    Py_INCREF(shape);
    long arity = PyLong_AsLong(PyTuple_GET_ITEM(shape, 0));
    int tno = arity == -1 && PyErr_Occurred()
        ? -1 : new_table(db, arity < 0 || arity > MAXKEY * 2 ? -1 : (int)arity, PyTuple_GET_ITEM(shape, 1));
    Py_DECREF(shape);
    return tno;
}

static PyObject *db_add_table(Database *db, PyObject *args) {
    int arity;
    PyObject *sym;
    if (!PyArg_ParseTuple(args, "iO", &arity, &sym)) return NULL;
    int tno = new_table(db, arity, sym);
    return tno < 0 ? NULL : PyLong_FromLong(tno);
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

/* f(db, tno) for each table number of the sequence `tables`: None, NULL
   with a Python error */
static PyObject *each_table(Database *db, PyObject *tables, void (*f)(Database *, int)) {
    PyObject *seq = PySequence_Fast(tables, "a sequence of table numbers");
    if (!seq) return NULL;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        int tno = table_number(db, PySequence_Fast_GET_ITEM(seq, i));
        if (tno < 0) { Py_DECREF(seq); return NULL; }
        f(db, tno);
    }
    Py_DECREF(seq);
    Py_RETURN_NONE;
}

static void clear_table(Database *db, int tno) {
    DbTable *d = db->tab[tno];
    d->no_set = 0;
    /* (most tables a run frees never held a row: nothing to free) */
    if (!d->t.data && !d->t.set && !d->t.idx && !d->cache) return;
    db_changed(db, tno);
    db_table_reset(d);
}

static void drop_set(Database *db, int tno) {
    Table *t = &db->tab[tno]->t;
    free(t->set);
    t->set = NULL;
    t->set_cap = t->set_used = 0;
    db->tab[tno]->no_set = 1;
}

static PyObject *db_clear(Database *db, PyObject *tables) {
    return each_table(db, tables, clear_table);
}

static PyObject *db_drop_sets(Database *db, PyObject *tables) {
    return each_table(db, tables, drop_set);
}

static PyObject *db_size(Database *db, PyObject *arg) {
    int tno = table_number(db, arg);
    if (tno < 0) return NULL;
    return PyLong_FromLongLong(db->tab[tno]->t.n);
}

static PyObject *db_rows(Database *db, PyObject *arg) {
    int tno = table_number(db, arg);
    if (tno < 0) return NULL;
    PyObject *out = PySet_New(NULL);
    if (out && table_tuples(db, tno, out) < 0) Py_CLEAR(out);
    return out;
}

/* the rows of a table as one buffer of int64s, row after row, in the order
   rows() gives them, symbol columns as symbol ids (symbols() names them):
   what a columnar writer (a DuckDB file) reads without a Python tuple per row */
static PyObject *db_rows_array(Database *db, PyObject *arg) {
    int tno = table_number(db, arg);
    if (tno < 0) return NULL;
    Table *t = &db->tab[tno]->t;
    return PyBytes_FromStringAndSize(t->n ? (const char *)t->data : NULL, (Py_ssize_t)(t->n * t->arity * (i64)sizeof(i64)));
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

/* the indexes built on a table (packed, kept until it changes) that have
   key columns: [(key columns, distinct keys)] */
static PyObject *db_built(Database *db, PyObject *arg) {
    int tno = table_number(db, arg);
    if (tno < 0) return NULL;
    DbTable *d = db->tab[tno];
    PyObject *out = PyList_New(0);
    for (int i = 0; out && i < d->ncache; i++) {
        Index *ix = d->cache[i];
        if (!ix->nkey) continue;
        PyObject *key = PyTuple_New(ix->nkey);
        for (int k = 0; key && k < ix->nkey; k++) {
            PyObject *col = PyLong_FromLong(ix->key[k]);
            if (!col) Py_CLEAR(key);
            else PyTuple_SET_ITEM(key, k, col);
        }
        PyObject *item = key ? Py_BuildValue("(NL)", key, (long long)ix->used) : NULL;
        if (!item || PyList_Append(out, item) < 0) Py_CLEAR(out);
        Py_XDECREF(item);
    }
    return out;
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

static int buffer_emit(Interp *in, int rel, const i64 *vals) {
    if (table_append(&((Run *)in)->buf[rel], vals) < 0) { in->status = ST_NOMEM; return -1; }
    return 0;
}

/* the base programs' tuples: appended to their tables, and put in their
   sets once they are all there (table_absorb; no program reads them before:
   a base program reads no relation of the stratum) */
static int direct_emit(Interp *in, int rel, const i64 *vals) {
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
static int rounds(Run *run, Prog *base, int nbase, Prog **delta, int *ndelta, i64 *lo, i64 *hi, i64 *iterations) {
    Interp *in = &run->in;
    static const i64 no_delta[1];
    for (int ri = 0; ri < in->nout; ri++) hi[ri] = in->out[ri]->n;   /* (the rows before the base programs') */
    in->emit = direct_emit;
    for (int k = 0; k < nbase; k++)
        if (run_programs(in, &base[k], 1, no_delta, 0) < 0) return -1;
    for (int ri = 0; ri < in->nout; ri++)
        if (table_absorb(in->out[ri], hi[ri]) < 0) { in->status = ST_NOMEM; return -1; }
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
    return rc;
}

/* ------------------------------------------------------------ a stratum's plan, loaded once */
static void plan_free(Plan *p) {
    if (!p) return;
    progs_free(p->base, p->nbase);
    for (int ri = 0; ri < p->nout; ri++) {
        if (p->delta && p->delta[ri]) progs_free(p->delta[ri], p->ndelta[ri]);
        if (p->dom && p->dom[ri]) progs_free(p->dom[ri], p->ndom[ri]);
    }
    free(p->delta);
    free(p->ndelta);
    free(p->dom);
    free(p->ndom);
    free(p->rank_col);
    free(p->out);
    free(p->arity);
    free(p->rows_seen);
    free(p->ix);
    free(p->checks);
    free(p);
}

/* a rank-ordered stratum's parts of its plan: per relation, its rank
   columns (as many for every relation, 1 to MAXRANK) and its domination
   tests (programs checked against `in`); every live index is of a relation
   of the stratum. 0, or -1 with a Python error. */
static int plan_load_ranks(Plan *p, Interp *in, Words *r) {
    int nout = p->nout;
    p->rank_col = calloc((size_t)nout + 1, sizeof *p->rank_col);
    p->dom = calloc((size_t)nout + 1, sizeof(Prog *));
    p->ndom = calloc((size_t)nout + 1, sizeof(int));
    if (!p->rank_col || !p->dom || !p->ndom) { PyErr_NoMemory(); return -1; }
    for (int ri = 0; ri < nout; ri++) {
        for (int k = 0; k < p->nrank; k++)
            if (next_int(r, 0, p->arity[ri] - 1, "rank column", &p->rank_col[ri][k]) < 0) return -1;
        if (load_checked(r, in, p->arity[ri], &p->dom[ri], &p->ndom[ri]) < 0) return -1;
    }
    for (int i = 0; i < p->nix; i++) {
        int of_stratum = 0;
        for (int ri = 0; ri < nout; ri++) of_stratum |= p->out[ri] == p->ix[i].tno;
        if (p->ix[i].live != of_stratum) {
            PyErr_SetString(PlanRefused, "a live index is one of a relation of the stratum");
            return -1;
        }
    }
    return 0;
}

/* the plan's head from its words (see Plan's doc) against db's tables: its
   relations, indexes and checks, all its checks need (a plan whose checks
   fail is not loaded further). 0, or -1 with a Python error (the caller
   frees p either way) */
static int plan_load_head(Plan *p, Database *db, Words *r) {
    int ntab = db->ntab - 1, words = (int)(r->n < INT32_MAX ? r->n : INT32_MAX);
    if (next_int(r, 1, words, "relations", &p->nout) < 0 || next_int(r, 0, words, "indexes", &p->nix) < 0
        || next_int(r, 0, words, "checks", &p->nchecks) < 0 || next_int(r, 0, MAXRANK, "rank columns", &p->nrank) < 0)
        return -1;
    int nout = p->nout, nix = p->nix, nchecks = p->nchecks;
    p->out = calloc((size_t)nout + 1, sizeof(int));
    p->arity = calloc((size_t)nout + 1, sizeof(int));
    p->rows_seen = calloc((size_t)nout + 1, sizeof(i64));
    p->ix = calloc((size_t)nix + 1, sizeof(IndexSpec));
    p->delta = calloc((size_t)nout + 1, sizeof(Prog *));
    p->ndelta = calloc((size_t)nout + 1, sizeof(int));
    p->checks = calloc(3 * (size_t)nchecks + 1, sizeof(i64));
    if (!p->out || !p->arity || !p->rows_seen || !p->ix || !p->delta || !p->ndelta || !p->checks) { PyErr_NoMemory(); return -1; }
    for (int ri = 0; ri < nout; ri++) {
        if (next_int(r, 0, ntab, "table", &p->out[ri]) < 0) return -1;
        p->arity[ri] = db->tab[p->out[ri]]->t.arity;
    }
    for (int i = 0; i < nix; i++) {
        IndexSpec *x = &p->ix[i];
        if (next_int(r, 0, ntab, "table", &x->tno) < 0) return -1;
        x->arity = db->tab[x->tno]->t.arity;
        if (next_int(r, 0, 1, "live", &x->live) < 0 || next_int(r, 0, MAXKEY, "key", &x->nkey) < 0) return -1;
        for (int k = 0; k < x->nkey; k++)
            if (next_int(r, 0, x->arity - 1, "index column", &x->key[k]) < 0) return -1;
    }
    for (int i = 0; i < nchecks; i++)
        if (next_word(r, 0, ntab, "table", &p->checks[3 * i]) < 0
            || next_word(r, INT64_MIN, INT64_MAX, "check", &p->checks[3 * i + 1]) < 0
            || next_word(r, INT64_MIN, INT64_MAX, "check", &p->checks[3 * i + 2]) < 0)
            return -1;
    p->programs_at = r->at;
    return 0;
}

/* the programs of a plan whose head is loaded, from its words at
   programs_at, checked against stand-ins of the indexes and tables they
   read: 0, or -1 with a Python error (the caller frees p either way) */
static int plan_load_programs(Plan *p, Database *db, Words *r) {
    int nout = p->nout, nix = p->nix;
    Interp in;
    memset(&in, 0, sizeof in);
    in.nout = nout;
    in.nix = nix;
    in.out = calloc((size_t)nout + 1, sizeof(Table *));
    in.ix = calloc((size_t)nix + 1, sizeof(Index *));
    Index *stand_in = calloc((size_t)nix + 1, sizeof(Index));
    int rc = -1;
    if (!in.out || !in.ix || !stand_in) { PyErr_NoMemory(); goto out; }
    for (int ri = 0; ri < nout; ri++) in.out[ri] = &db->tab[p->out[ri]]->t;
    for (int i = 0; i < nix; i++) {
        stand_in[i].nkey = p->ix[i].nkey;
        stand_in[i].t = &db->tab[p->ix[i].tno]->t;   /* (check_prog reads its arity) */
        in.ix[i] = &stand_in[i];
    }
    r->at = p->programs_at;
    if (load_checked(r, &in, 0, &p->base, &p->nbase) < 0) goto out;
    for (int ri = 0; ri < nout; ri++)
        if (load_checked(r, &in, p->arity[ri], &p->delta[ri], &p->ndelta[ri]) < 0) goto out;
    if (p->nrank && plan_load_ranks(p, &in, r) < 0) goto out;
    if (r->at != r->n) { PyErr_SetString(PlanRefused, "words after the plan"); goto out; }
    p->loaded = 1;
    rc = 0;
out:
    free(in.out);
    free(in.ix);
    free(stand_in);
    return rc;
}

/* _native.Plan(words): a plan of a stratum as its words, loaded when a database
   first offered it reads it (plan_of, plan_ready); pickled as its words */
typedef struct { PyObject_HEAD PyObject *words; int width; Plan *p; } PlanObject;

static Words plan_words(PlanObject *po) {
    return (Words){PyBytes_AS_STRING(po->words), po->width, PyBytes_GET_SIZE(po->words) / po->width, 0};
}

static PyObject *planobj_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *words;
    int width = 8;
    if (!PyArg_ParseTuple(args, "O!|i", &PyBytes_Type, &words, &width)) return NULL;
    if ((width != 8 && width != 4) || PyBytes_GET_SIZE(words) % width)
        return PyErr_Format(PyExc_ValueError, "a plan is int64 (or int32) words");
    PlanObject *self = (PlanObject *)type->tp_alloc(type, 0);
    if (self) { Py_INCREF(words); self->words = words; self->width = width; }
    return (PyObject *)self;
}

static void planobj_dealloc(PlanObject *self) {
    plan_free(self->p);
    Py_XDECREF(self->words);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* pickled as its words, int32s when all fit: half the bytes of the file that
   saves it (every start reads and checks it whole) */
static PyObject *planobj_reduce(PlanObject *self, PyObject *Py_UNUSED(arg)) {
    Words r = plan_words(self);
    int fit = r.width == 8;
    for (Py_ssize_t i = 0; fit && i < r.n; i++) fit = word_at(&r, i) == (int32_t)word_at(&r, i);
    if (!fit) return Py_BuildValue("O(Oi)", Py_TYPE(self), self->words, r.width);
    PyObject *narrow = PyBytes_FromStringAndSize(NULL, 4 * r.n);
    if (!narrow) return NULL;
    for (Py_ssize_t i = 0; i < r.n; i++) {
        int32_t v = (int32_t)word_at(&r, i);
        memcpy(PyBytes_AS_STRING(narrow) + 4 * i, &v, 4);
    }
    return Py_BuildValue("O(Ni)", Py_TYPE(self), narrow, 4);
}

static PyMethodDef planobj_methods[] = {
    {"__reduce__", (PyCFunction)planobj_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sdylog.datalog._native.Plan",
    .tp_basicsize = sizeof(PlanObject),
    .tp_dealloc = (destructor)planobj_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Plan(words[, width]): a plan of a stratum (run takes it; any database whose tables have the shapes of\n"
              "the first one to run it runs it), loaded when first offered (its programs when first run).\n"
              "words: int64s (bytes; native_plan.plan_words makes them), int32s with width 4: nout, nix,\n"
              "nchecks, nrank (0: not a rank-ordered stratum),\n"
              "then nout tables: the relations of the stratum (EMIT's relation numbers);\n"
              "nix indexes: table, live (of a relation of the stratum), nkey, nkey key columns;\n"
              "nchecks checks: table, lo, hi: the plan runs only if each table holds lo..hi rows;\n"
              "the base programs, then per relation of out its delta programs (run on its new tuples), each a\n"
              "count then programs: nregs, ntup, n, n words, k, k (register, constant) pairs;\n"
              "a rank-ordered stratum (see ranked.py; base then gives its seeds): per relation of out, its nrank\n"
              "rank columns and its domination tests (programs).",
    .tp_methods = planobj_methods,
    .tp_new = planobj_new,
};

PyObject *PlanRefused;

/* the Plan's plan, its head loaded against db's tables the first time (its
   programs: plan_ready): NULL with a Python error (PlanRefused: its words
   do not load) */
static Plan *plan_of(PyObject *o, Database *db) {
    if (!PyObject_TypeCheck(o, &PlanType)) { PyErr_SetString(PyExc_TypeError, "a stratum's plans: Plans"); return NULL; }
    PlanObject *po = (PlanObject *)o;
    if (po->p) return po->p;
    Words r = plan_words(po);
    Plan *p = calloc(1, sizeof(Plan));
    if (!p) return (Plan *)PyErr_NoMemory();
    if (plan_load_head(p, db, &r) < 0) { plan_free(p); return NULL; }
    return po->p = p;
}

/* the plan of plan_of(o, db), its programs loaded the first time: NULL with
   a Python error (the plan is then dropped: loaded again, it is refused again) */
static Plan *plan_ready(PyObject *o, Database *db) {
    PlanObject *po = (PlanObject *)o;
    if (po->p->loaded) return po->p;
    Words r = plan_words(po);
    if (plan_load_programs(po->p, db, &r) < 0) {
        plan_free(po->p);
        po->p = NULL;
        return NULL;
    }
    return po->p;
}

/* the plan's tables are in db with the shapes it was made for: 0, or -1 with a Python error */
static int plan_fits_tables(Plan *p, Database *db) {
    for (int ri = 0; ri < p->nout; ri++)
        if (p->out[ri] >= db->ntab || db->tab[p->out[ri]]->t.arity != p->arity[ri]) goto other;
    for (int i = 0; i < p->nix; i++)
        if (p->ix[i].tno >= db->ntab || db->tab[p->ix[i].tno]->t.arity != p->ix[i].arity) goto other;
    for (int i = 0; i < p->nchecks; i++)
        if (p->checks[3 * i] >= db->ntab) goto other;
    return 0;
other:
    PyErr_SetString(PyExc_ValueError, "a plan made for the tables of another database");
    return -1;
}

/* the plan's checks hold on db's tables */
static int plan_checks_hold(Plan *p, Database *db) {
    for (int i = 0; i < p->nchecks; i++) {
        i64 n = db->tab[p->checks[3 * i]]->t.n;
        if (n < p->checks[3 * i + 1] || n > p->checks[3 * i + 2]) return 0;
    }
    return 1;
}

/* n bytes from the database's run arena, zeroed: the arrays of one
   stratum's run, which end with it (strata run one after another). NULL
   out of memory. */
static void *run_arena(Database *db, size_t n) {
    if (db->arena_cap < n) {
        free(db->arena);
        db->arena_cap = 0;
        if (!(db->arena = malloc(n))) return NULL;
        db->arena_cap = n;
    }
    memset(db->arena, 0, n);
    return db->arena;
}

/* the next n bytes of an arena block at *at (kept 16-byte aligned) */
static void *carve(char **at, size_t n) {
    void *p = *at;
    *at += (n + 15) & ~(size_t)15;
    return p;
}

/* n programs copied to `into`, with registers of their own from *regs */
static void copy_programs(const Prog *progs, int n, Prog *into, i64 **regs) {
    for (int k = 0; k < n; k++) {
        into[k] = progs[k];
        into[k].regs = *regs;
        memcpy(*regs, progs[k].regs, sizeof(i64) * (size_t)progs[k].nregs);
        *regs += progs[k].nregs;
    }
}

char *plan_copies(Database *db, Plan *p, size_t extra, PlanCopies *c) {
    int nout = p->nout, nprogs = p->nbase;
    i64 nregs = 0;
    for (int k = 0; k < p->nbase; k++) nregs += p->base[k].nregs;
    for (int ri = 0; ri < nout; ri++) {
        int ndom = p->dom ? p->ndom[ri] : 0;
        nprogs += p->ndelta[ri] + ndom;
        for (int k = 0; k < p->ndelta[ri]; k++) nregs += p->delta[ri][k].nregs;
        for (int k = 0; k < ndom; k++) nregs += p->dom[ri][k].nregs;
    }
    size_t lists = sizeof(Prog *) * ((size_t)nout + 1);
    char *at = run_arena(db, 2 * (lists + 16) + sizeof(Prog) * ((size_t)nprogs + 1) + 16
                             + sizeof(i64) * (size_t)(nregs + 1) + 16 + extra + 16);
    if (!at) return NULL;
    c->delta = carve(&at, lists);
    c->dom = carve(&at, lists);
    Prog *progs = c->base = carve(&at, sizeof(Prog) * ((size_t)nprogs + 1));
    i64 *regs = carve(&at, sizeof(i64) * (size_t)(nregs + 1));
    copy_programs(p->base, p->nbase, progs, &regs);
    progs += p->nbase;
    for (int ri = 0; ri < nout; ri++) {
        c->delta[ri] = progs;
        copy_programs(p->delta[ri], p->ndelta[ri], progs, &regs);
        progs += p->ndelta[ri];
        if (!p->dom) continue;
        c->dom[ri] = progs;
        copy_programs(p->dom[ri], p->ndom[ri], progs, &regs);
        progs += p->ndom[ri];
    }
    return at;
}

/* one stratum by plan p: 0 done, 1 aborted (an integer overflow, a division
   by zero or a bad shift), -1 a Python error */
static int run_plan(Database *db, Plan *p, i64 *iterations) {
    Run run;
    memset(&run, 0, sizeof run);
    Interp *in = &run.in;
    int nout = p->nout, nix = p->nix;
    /* the run's arrays, after its programs' copies: (live) indexes, tables,
       emit buffers, each relation's round bounds */
    size_t ptrs = sizeof(void *) * ((size_t)nix + 1), outs = sizeof(void *) * ((size_t)nout + 1);
    size_t bounds = sizeof(i64) * ((size_t)nout + 1);
    PlanCopies copies;
    char *at = plan_copies(db, p, 2 * (ptrs + 16) + outs + 16 + sizeof(Table) * ((size_t)nout + 1) + 16
                                  + 2 * (bounds + 16), &copies);
    if (!at) { PyErr_NoMemory(); return -1; }
    Index **owned = carve(&at, ptrs);   /* the live indexes, built for this run */
    in->ix = carve(&at, ptrs);
    in->out = carve(&at, outs);
    run.buf = carve(&at, sizeof(Table) * ((size_t)nout + 1));
    i64 *lo = carve(&at, bounds), *hi = carve(&at, bounds);
    int result = -1;
    in->nout = nout;
    in->nix = nix;
    in->emit = buffer_emit;
    in->symbols = db->symbols;
    in->nsymbols = PyList_GET_SIZE(db->names);
    for (int ri = 0; ri < nout; ri++) {
        db_changed(db, p->out[ri]);
        in->out[ri] = &db->tab[p->out[ri]]->t;
        if (db_table_ensure_set(db->tab[p->out[ri]]) < 0) { PyErr_NoMemory(); goto out; }
        Table *t = in->out[ri];
        if (t->n < p->rows_seen[ri] && table_reserve(t, p->rows_seen[ri] - t->n) < 0) { PyErr_NoMemory(); goto out; }
        run.buf[ri].arity = t->arity;
    }
    for (int i = 0; i < nix; i++) {
        IndexSpec *x = &p->ix[i];
        if (!x->live) {
            if (!(in->ix[i] = db_index(db, x->tno, x->key, x->nkey))) goto out;
            continue;
        }
        /* a relation of the stratum: an index kept up to date as its table grows
           (no key: a scan of the table's rows, nothing to keep) */
        Index *ix = owned[i] = in->ix[i] = calloc(1, sizeof(Index));
        if (!ix) { PyErr_NoMemory(); goto out; }
        Table *t = ix->t = &db->tab[x->tno]->t;
        ix->nkey = x->nkey;
        memcpy(ix->key, x->key, sizeof(int) * (size_t)x->nkey);
        if (!x->nkey) continue;
        if (index_reserve(ix, x->keys_seen) < 0 || index_build_plain(ix) < 0) { PyErr_NoMemory(); goto out; }
        if (table_watch(t, ix) < 0) { PyErr_NoMemory(); goto out; }
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rounds(&run, copies.base, p->nbase, copies.delta, p->ndelta, lo, hi, iterations);
    Py_END_ALLOW_THREADS
    if (rc < 0 && in->status == ST_NOMEM)
        PyErr_NoMemory();
    else
        result = rc < 0;
    if (result == 0) {
        for (int ri = 0; ri < nout; ri++) p->rows_seen[ri] = in->out[ri]->n;
        for (int i = 0; i < nix; i++)
            if (owned[i]) p->ix[i].keys_seen = owned[i]->used;
    }
out:
    for (int ri = 0; ri < nout; ri++) {
        if (!in->out[ri]) continue;
        Table *t = in->out[ri];   /* the live indexes go: later strata read packed ones */
        free(t->idx);
        t->idx = NULL;
        t->nidx = 0;
        db_changed(db, p->out[ri]);
    }
    for (int i = 0; i < nix; i++) {
        if (owned[i]) { index_free(owned[i]); free(owned[i]); }
    }
    for (int ri = 0; ri < nout; ri++) table_free(&run.buf[ri]);
    return result;
}

PyDoc_STRVAR(db_run_doc,
"run(strata[, frees]): evaluate strata in order (see db.c), each a list of the plans it may run\n"
"(Plans), the first whose checks hold running, or a stepped stratum: (relations, seeds, step)\n"
"(see run_stepped); frees[k]: (tables to empty, tables whose hash sets to drop) once stratum k ran.\n"
"Returns (status, k, [rounds, waves or steps of each stratum run]): 'ok' (k: all of them), 'stale'\n"
"(no plan of stratum k passed its checks) or 'abort' (stratum k is to be evaluated again in Python:\n"
"its tables are partly filled).");

static int run_stratum(Database *db, PyObject *stratum, i64 *iterations);

/* whether base program g emits nothing: its first instruction loops over a
   table with no rows (a relation no fact or earlier stratum fed), so the
   rest of g never runs */
static int starts_on_empty_table(const Database *db, const Plan *p, const Prog *g) {
    if (g->len < 2 || (g->code[0] != OP_SCAN && g->code[0] != OP_LOOKUP)) return 0;
    i64 ix = g->code[1];
    return ix >= 0 && ix < p->nix && db->tab[p->ix[ix].tno]->t.n == 0;
}

/* whether a run of plan p derives nothing: its base programs all emit
   nothing (starts_on_empty_table) and the stratum's own tables are empty.
   The delta programs start from rows of the stratum's own tables: with
   those empty and the first round adding none, no later round has any to
   read, and the run would stop at once with nothing derived. (A small module's
   runs have hundreds of strata, most of them fed by nothing: this skips
   setting them up.) */
static int derives_nothing(const Database *db, const Plan *p) {
    for (int k = 0; k < p->nbase; k++)
        if (!starts_on_empty_table(db, p, &p->base[k])) return 0;
    for (int ri = 0; ri < p->nout; ri++)
        if (db->tab[p->out[ri]]->t.n) return 0;
    return 1;
}

/* the first plan of `plans` (a list, see db_run_doc) whose checks hold, run:
   0 done, 1 aborted, 2 none held (stale), -1 a Python error */
static int run_first_fitting(Database *db, PyObject *plans, i64 *iterations) {
    for (Py_ssize_t a = 0; a < PyList_GET_SIZE(plans); a++) {
        PyObject *o = PyList_GET_ITEM(plans, a);
        Plan *p = plan_of(o, db);
        if (!p || plan_fits_tables(p, db) < 0) return -1;
        if (!plan_checks_hold(p, db)) continue;
        if (!(p = plan_ready(o, db))) return -1;
        if (p->nrank) return ranked_run(db, p, iterations);
        return derives_nothing(db, p) ? 0 : run_plan(db, p, iterations);
    }
    return 2;
}

/* strata (a list, as run takes) in order: 0 all done, else the first one's
   run_stratum code that was not 0 */
static int run_strata(Database *db, PyObject *strata) {
    if (!PyList_Check(strata)) { PyErr_SetString(PyExc_TypeError, "strata: a list"); return -1; }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(strata); k++) {
        i64 iterations = 0;
        int rc = run_stratum(db, PyList_GET_ITEM(strata, k), &iterations);
        if (rc) return rc;
    }
    return 0;
}

/* rows of src (all, in row order) into table tno, deduplicated: -1 out of memory */
static int add_rows(Database *db, int tno, Table *src, i64 from) {
    DbTable *d = db->tab[tno];
    db_changed(db, tno);
    if (db_table_ensure_set(d) < 0) return -1;
    for (i64 r = from; r < src->n; r++)
        if (table_insert(&d->t, row(src, r)) == -2) return -1;
    return 0;
}

/* A pending seed of a stepped stratum: its step, its relation, its row in
   that relation's seed buffer */
typedef struct { i64 step, at; int32_t rel; } Seed;

static int seed_order(const void *a, const void *b) {
    const Seed *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    if (x->rel != y->rel) return x->rel < y->rel ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

typedef struct { int table, seed, prev, now, col; } StepRel;

#define MAX_STEPS 1000000   /* (stepped.py's: beyond it, Python reports the stratum) */

/* A stepped stratum (stepped.py's StepEvaluation.run, the same steps):
   `stratum` is (relations: [(table, seed table, prev table, now table,
   step column)], seeds: the strata of its seed program, step: those of its
   step program). The seeds are the rows its tables hold and those the seed
   program derives; each step empties the prev and now tables, fills prev
   with the last step's rows and now with the step's seeds, runs the step
   program, and keeps what now holds. The relations' tables receive every
   step's rows at the end only, and the auxiliary tables are left empty
   whatever happens: a stratum handed back (1, 2) is evaluated again from
   its start. 0 done, 1 aborted, 2 stale, -1 a Python error. */
static int run_stepped(Database *db, PyObject *stratum, i64 *steps) {
    PyObject *rels_l, *seeds_l, *step_l;
    if (!PyArg_ParseTuple(stratum, "O!O!O!", &PyList_Type, &rels_l, &PyList_Type, &seeds_l, &PyList_Type, &step_l))
        return -1;
    int n = (int)PyList_GET_SIZE(rels_l), rc = -1, parsed = 0;
    StepRel *rel = calloc((size_t)n + 1, sizeof(StepRel));
    Table *seeds = calloc((size_t)n + 1, sizeof(Table)), *done = calloc((size_t)n + 1, sizeof(Table));
    i64 *last = calloc((size_t)n + 1, sizeof(i64));   /* per relation: where the last step's rows start in done */
    Seed *order = NULL;
    i64 npending = 0;
    if (!rel || !seeds || !done || !last) { PyErr_NoMemory(); goto out; }
    for (int ri = 0; ri < n; ri++, parsed++) {
        StepRel *r = &rel[ri];
        if (ri >= PyList_GET_SIZE(rels_l)) { PyErr_SetString(PyExc_RuntimeError, "a stepped relation list changed"); goto out; }
        PyObject *item = PyList_GET_ITEM(rels_l, ri);
        Py_INCREF(item);   /* (as run_stratum holds its stratum) */
        int ok = PyArg_ParseTuple(item, "iiiii", &r->table, &r->seed, &r->prev, &r->now, &r->col);
        Py_DECREF(item);
        if (!ok) goto out;
        int tables[4] = {r->table, r->seed, r->prev, r->now};
        for (int k = 0; k < 4; k++) {
            if (tables[k] < 0 || tables[k] >= db->ntab || db->tab[tables[k]]->t.arity != db->tab[r->table]->t.arity) {
                PyErr_SetString(PyExc_ValueError, "a stepped relation's tables");
                goto out;
            }
        }
        if (r->col < 0 || r->col >= db->tab[r->table]->t.arity) { PyErr_SetString(PyExc_ValueError, "step column"); goto out; }
        seeds[ri].arity = done[ri].arity = db->tab[r->table]->t.arity;
    }
    if ((rc = run_strata(db, seeds_l)) != 0) goto out;
    rc = -1;
    /* the seeds, ordered by step (then relation, then as they came) */
    for (int ri = 0; ri < n; ri++) {
        Table *from[2] = {&db->tab[rel[ri].table]->t, &db->tab[rel[ri].seed]->t};
        for (int k = 0; k < 2; k++)
            for (i64 r = 0; r < from[k]->n; r++)
                if (table_append(&seeds[ri], row(from[k], r)) < 0) { PyErr_NoMemory(); goto out; }
        npending += seeds[ri].n;
    }
    order = malloc(sizeof(Seed) * (size_t)(npending + 1));
    if (!order) { PyErr_NoMemory(); goto out; }
    i64 k = 0;
    for (int ri = 0; ri < n; ri++)
        for (i64 r = 0; r < seeds[ri].n; r++)
            order[k++] = (Seed){row(&seeds[ri], r)[rel[ri].col], r, ri};
    qsort(order, (size_t)npending, sizeof(Seed), seed_order);
    i64 next = 0, step = npending ? order[0].step : 0;
    int more = npending > 0;
    rc = 0;
    while (more && rc == 0) {
        if (++*steps > MAX_STEPS) { rc = 1; break; }
        for (int ri = 0; ri < n; ri++) {
            clear_table(db, rel[ri].prev);
            clear_table(db, rel[ri].now);
        }
        /* prev: the last step's rows (those done[] got last), now: the step's seeds */
        for (int ri = 0; ri < n && rc == 0; ri++)
            if (add_rows(db, rel[ri].prev, &done[ri], last[ri]) < 0) rc = -1;
        for (; next < npending && order[next].step == step && rc == 0; next++) {
            Seed *sd = &order[next];
            if (table_insert(&db->tab[rel[sd->rel].now]->t, row(&seeds[sd->rel], sd->at)) == -2) rc = -1;
        }
        if (rc < 0) { PyErr_NoMemory(); break; }
        if ((rc = run_strata(db, step_l)) != 0) break;
        int any = 0;
        for (int ri = 0; ri < n && rc == 0; ri++) {
            Table *now = &db->tab[rel[ri].now]->t;
            last[ri] = done[ri].n;
            for (i64 r = 0; r < now->n; r++)
                if (table_append(&done[ri], row(now, r)) < 0) { PyErr_NoMemory(); rc = -1; break; }
            any |= now->n > 0;
        }
        if (rc) break;
        if (any) step++;
        else if (next < npending) step = order[next].step;
        else more = 0;
    }
    for (int ri = 0; ri < n && rc == 0; ri++)
        if (add_rows(db, rel[ri].table, &done[ri], 0) < 0) { PyErr_NoMemory(); rc = -1; }
out:
    for (int ri = 0; ri < parsed; ri++) {
        clear_table(db, rel[ri].seed);
        clear_table(db, rel[ri].prev);
        clear_table(db, rel[ri].now);
    }
    for (int ri = 0; ri < n; ri++) {
        if (seeds) table_free(&seeds[ri]);
        if (done) table_free(&done[ri]);
    }
    free(rel);
    free(seeds);
    free(done);
    free(last);
    free(order);
    return rc;
}

/* one stratum of run's list: 0 done, 1 aborted, 2 stale, -1 a Python error */
static int run_stratum(Database *db, PyObject *stratum, i64 *iterations) {
    if (!PyTuple_Check(stratum) && !PyList_Check(stratum)) {
        PyErr_SetString(PyExc_TypeError, "a stratum is a list of plans or a tuple");
        return -1;
    }
    /* (held: borrowed from the caller's list, which a step column's __index__ may empty) */
    Py_INCREF(stratum);
    int rc = PyTuple_Check(stratum) ? run_stepped(db, stratum, iterations) : run_first_fitting(db, stratum, iterations);
    Py_DECREF(stratum);
    return rc;
}

static PyObject *db_run(Database *db, PyObject *args) {
    PyObject *strata, *frees = NULL;
    if (!PyArg_ParseTuple(args, "O!|O!", &PyList_Type, &strata, &PyList_Type, &frees)) return NULL;
    PyObject *rounds = PyList_New(0);
    if (!rounds) return NULL;
    Py_ssize_t k = 0, n = PyList_GET_SIZE(strata);
    const char *status = "ok";
    for (; k < n; k++) {
        i64 iterations = 0;
        int rc = run_stratum(db, PyList_GET_ITEM(strata, k), &iterations);
        if (rc < 0) goto error;
        if (rc) { status = rc == 1 ? "abort" : "stale"; break; }
        /* (what no later stratum reads goes now, not at the end of the call: a run's
           peak memory stays that of the relations live at once) */
        if (frees && k < PyList_GET_SIZE(frees)) {
            PyObject *free_k = PyList_GET_ITEM(frees, k);
            if (!PyTuple_Check(free_k) || PyTuple_GET_SIZE(free_k) != 2) {
                PyErr_SetString(PyExc_TypeError, "frees[k]: (tables to empty, tables whose hash sets to drop)");
                goto error;
            }
            /* (held: borrowed from the caller's list, which a table number's __index__ may empty) */
            Py_INCREF(free_k);
            PyObject *ok = each_table(db, PyTuple_GET_ITEM(free_k, 0), clear_table);
            Py_XDECREF(ok);
            if (ok) ok = each_table(db, PyTuple_GET_ITEM(free_k, 1), drop_set);
            Py_DECREF(free_k);
            if (!ok) goto error;
            Py_DECREF(ok);
        }
        PyObject *it = PyLong_FromLongLong(iterations);
        if (!it || PyList_Append(rounds, it) < 0) { Py_XDECREF(it); goto error; }
        Py_DECREF(it);
    }
    return Py_BuildValue("(snN)", status, k, rounds);
error:
    if (PyErr_ExceptionMatches(PlanRefused)) {   /* (strata 0 .. k-1 ran, k did not start: the caller goes on from k) */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        /* (made with no error pending: if it fails, its MemoryError is raised, as a
           failed setattr's error is, not a PlanRefused the caller cannot go on from) */
        PyObject *done = PyLong_FromSsize_t(k);
        if (!done || PyObject_SetAttrString(value, "done", done) < 0 || PyObject_SetAttrString(value, "rounds", rounds) < 0) {
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
        } else {
            PyErr_Restore(type, value, tb);
        }
        Py_XDECREF(done);
    }
    Py_DECREF(rounds);
    return NULL;
}

/* ------------------------------------------------------------ the type */
static PyObject *db_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    static char *names[] = {"tables", "symbols", NULL};
    PyObject *tables = NULL, *symbols = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:Database", names, &tables, &symbols)) return NULL;
    Database *db = (Database *)type->tp_alloc(type, 0);
    if (!db) return NULL;
    db->names = PyList_New(0);
    db->ids = PyDict_New();
    if (!db->names || !db->ids) { Py_DECREF(db); return NULL; }
    PyObject *seq = tables ? PySequence_Fast(tables, "tables: a sequence of (arity, symbol columns)") : NULL;
    if (tables && !seq) { Py_DECREF(db); return NULL; }
    Py_ssize_t n = seq ? PySequence_Fast_GET_SIZE(seq) : 0;
    if (n && (!(db->made = calloc((size_t)n, sizeof(DbTable))) || !(db->tab = malloc(sizeof(DbTable *) * (size_t)n)))) {
        Py_DECREF(seq);
        Py_DECREF(db);
        return PyErr_NoMemory();
    }
    db->nmade = db->cap = (int)n;
    for (Py_ssize_t i = 0; seq && i < PySequence_Fast_GET_SIZE(seq); i++) {
        if (new_table_of(db, PySequence_Fast_GET_ITEM(seq, i)) < 0) {
            Py_DECREF(seq);
            Py_DECREF(db);
            return NULL;
        }
    }
    Py_XDECREF(seq);
    seq = symbols ? PySequence_Fast(symbols, "symbols: a sequence of str") : NULL;
    if (symbols && !seq) { Py_DECREF(db); return NULL; }
    for (Py_ssize_t i = 0; seq && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *sym = PySequence_Fast_GET_ITEM(seq, i);
        i64 id;
        if (!PyUnicode_Check(sym) || intern(db, sym, &id) < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a symbol is a str");
            Py_DECREF(seq);
            Py_DECREF(db);
            return NULL;
        }
    }
    Py_XDECREF(seq);
    return (PyObject *)db;
}

static void db_dealloc(Database *db) {
    for (int i = 0; i < db->ntab; i++) {
        db_changed(db, i);
        table_free(&db->tab[i]->t);
        if (i >= db->nmade) free(db->tab[i]);
    }
    free(db->made);
    free(db->tab);
    free(db->scratch.b);
    free(db->arena);
    Py_XDECREF(db->names);
    Py_XDECREF(db->ids);
    Py_XDECREF(db->encoded);
    free(db->symbols);
    Py_TYPE(db)->tp_free((PyObject *)db);
}

static PyMethodDef db_methods[] = {
    {"add_table", (PyCFunction)db_add_table, METH_VARARGS,
     "add_table(arity, symbol columns: tuple of bools) -> table number"},
    {"insert", (PyCFunction)db_insert, METH_VARARGS,
     "insert(table, rows) -> False (nothing inserted) when a row has no C form (not a tuple of the\n"
     "table's arity, an int beyond 64 bits, a value of another type)"},
    {"clear", (PyCFunction)db_clear, METH_O, "clear(tables): empty each table of the sequence"},
    {"drop_sets", (PyCFunction)db_drop_sets, METH_O,
     "drop_sets(tables): free the hash set that deduplicates each one's rows, for as long as no row goes in\n"
     "by insert or run (rows(table) then gives them in row order; a rank-ordered run's result\n"
     "is stored without one)"},
    {"size", (PyCFunction)db_size, METH_O, "size(table) -> tuple count"},
    {"rows", (PyCFunction)db_rows, METH_O, "rows(table) -> a set of tuples (symbols as str)"},
    {"rows_array", (PyCFunction)db_rows_array, METH_O,
     "rows_array(table) -> bytes: its rows as int64s, row after row (symbols as ids)"},
    {"symbols", (PyCFunction)db_symbols, METH_NOARGS, "symbols() -> list: symbol id -> its string"},
    {"index_keys", (PyCFunction)db_index_keys, METH_VARARGS,
     "index_keys(table, key columns) -> distinct keys (the index is built and kept)"},
    {"built", (PyCFunction)db_built, METH_O,
     "built(table) -> [(key columns, distinct keys)] of the indexes built on it (until it changes)"},
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
    .tp_doc = "Database(tables=(), symbols=()): the relations of a memory-engine run, held in C (see\n"
              "sdylog/datalog/native/db.c); tables: (arity, symbol columns: tuple of bools) of each table\n"
              "made at once (numbered from 0, as add_table numbers them); symbols: interned first, in order\n"
              "(ids 0, 1, ...).",
    .tp_methods = db_methods,
    .tp_new = db_new,
};
