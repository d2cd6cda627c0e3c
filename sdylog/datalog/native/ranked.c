/* sdylog.datalog._native: rank-ordered evaluation of a Datalog stratum in C.
 *
 * A generic interpreter: Python plans every clause (sdylog/datalog/pyeval.py,
 * BodyCompiler) and lowers it (sdylog/datalog/native_plan.py) to a program
 * of int64 words run here; see ranked.py's docstring for the semantics of
 * the wave loop, mirrored by ranked_run below.
 *
 * Data structures
 *   Table   rows of `arity` int64 in one growing array; a tuple is its row
 *           number (rows are never moved or freed while a run lasts, so a
 *           removed tuple's values stay readable). A live table (a relation
 *           of the stratum) also has a hash set of its present rows and the
 *           indexes kept up to date on insert / remove.
 *   Index   key columns -> the rows with that key, in insertion order (open
 *           addressing; a bucket remembers one row holding its key). No key:
 *           every row (a scan). A negation reads an index as a key set.
 *   pending rank -> entries (relation, rule, values), a min-heap of ranks,
 *           and `same`: the next wave of the current rank.
 *
 * Instruction set (a clause's program; registers r, tuple slots t):
 *   SCAN idx t             loop: t = each row of index idx (no key)
 *   LOOKUP idx t n k1..kn  loop: t = each row whose key is (r[k1]..r[kn])
 *   BIND r t c             r = t[c]
 *   CHECK t c r            next solution unless t[c] == r
 *   CONST r v              r = v
 *   ARITH op d a b         d = a op b (+ - * / % min max band bor bxor bshl bshr;
 *                          / and % truncate like Soufflé)
 *   UNARY op d a           d = -a or ~a
 *   CMP op a b             next solution unless a op b (= != < <= > >=)
 *   NOTIN idx n k1..kn     next solution if the key is in index idx
 *   EMPTY idx              next solution unless index idx's table is empty
 *   DISTINCT t             next solution if t is the tuple being tested
 *   FAIL                   next solution
 *   EMIT rel rule n r1..rn a head tuple
 *   TRUE                   the domination test holds
 * Registers 0..arity-1 hold the delta tuple (or the tuple tested); each
 * program has its own registers, its constants set once when it is loaded. An
 * integer overflow, a division by zero or a bad shift aborts the run: the
 * caller evaluates the stratum in Python instead (Python's integers do not
 * overflow, and it raises the division error with its message).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;
typedef uint64_t u64;

enum { OP_END = 0, OP_SCAN, OP_LOOKUP, OP_BIND, OP_CHECK, OP_CONST, OP_ARITH, OP_UNARY, OP_CMP,
       OP_NOTIN, OP_EMPTY, OP_DISTINCT, OP_FAIL, OP_EMIT, OP_TRUE };
enum { A_ADD = 0, A_SUB, A_MUL, A_DIV, A_MOD, A_MIN, A_MAX, A_BAND, A_BOR, A_BXOR, A_BSHL, A_BSHR };
enum { U_NEG = 0, U_BNOT };
enum { C_EQ = 0, C_NE, C_LT, C_LE, C_GT, C_GE };
enum { ST_OK = 0, ST_ABORT = 1, ST_RANK = 2, ST_NOMEM = 3 };

#define MAXKEY 32
#define MAX_REGS 1024
#define MAX_TUPLES 64

/* ------------------------------------------------------------ vectors */
typedef struct { int32_t *v; int32_t n, cap; } IdVec;

static int idvec_push(IdVec *a, int32_t x) {
    if (a->n == a->cap) {
        int32_t cap = a->cap ? a->cap * 2 : 4;
        int32_t *v = realloc(a->v, sizeof(int32_t) * (size_t)cap);
        if (!v) return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

static void idvec_remove(IdVec *a, int32_t x) {   /* the first occurrence, order kept */
    for (int32_t i = 0; i < a->n; i++) {
        if (a->v[i] == x) {
            memmove(a->v + i, a->v + i + 1, sizeof(int32_t) * (size_t)(a->n - i - 1));
            a->n--;
            return;
        }
    }
}

static inline u64 hash_step(u64 h, i64 x) {
    h ^= (u64)x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static inline u64 hash_final(u64 h) {
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    return h | 1;   /* 0 marks an empty slot */
}

/* ------------------------------------------------------------ tables and indexes */
struct Index;

typedef struct {
    int arity;
    i64 *data;
    i64 n, cap;
    int live;
    int32_t *set;        /* live: row numbers, -1 empty, -2 removed */
    i64 set_cap, set_used, count;
    struct Index **idx;  /* live: the indexes to keep up to date */
    int nidx;
} Table;

typedef struct { u64 h; int32_t rep; IdVec ids; } Bucket;

typedef struct Index {
    Table *t;
    int nkey;
    int key[MAXKEY];
    Bucket *b;
    i64 cap, used;
    IdVec all;           /* no key, live table: its rows in insertion order */
    i64 *packed;         /* static, keyed: the rows in bucket order; a bucket's are
                            rep .. rep + ids.n - 1 (one memory area per lookup) */
} Index;

static inline i64 *row(Table *t, i64 id) { return t->data + id * t->arity; }

static inline const i64 *bucket_row(Index *ix, Bucket *b) {
    return ix->packed ? ix->packed + (i64)b->rep * ix->t->arity : row(ix->t, b->rep);
}

static int table_append(Table *t, const i64 *vals) {
    if (t->n == t->cap) {
        i64 cap = t->cap ? t->cap * 2 : 64;
        i64 *d = realloc(t->data, sizeof(i64) * (size_t)(cap * (t->arity ? t->arity : 1)));
        if (!d) return -1;
        t->data = d;
        t->cap = cap;
    }
    if (t->arity) memcpy(row(t, t->n), vals, sizeof(i64) * (size_t)t->arity);
    t->n++;
    return 0;
}

static u64 hash_vals(const i64 *vals, int n) {
    u64 h = 0x12345;
    for (int i = 0; i < n; i++) h = hash_step(h, vals[i]);
    return hash_final(h);
}

/* An instruction's lookup key: the registers regs[0..n-1] copied to key;
 * returns its hash. */
static inline u64 gather_key(const i64 *R, const i64 *regs, int n, i64 *key) {
    for (int i = 0; i < n; i++) key[i] = R[regs[i]];
    return hash_vals(key, n);
}

static u64 hash_key_of(Index *ix, const i64 *r) {
    u64 h = 0x12345;
    for (int i = 0; i < ix->nkey; i++) h = hash_step(h, r[ix->key[i]]);
    return hash_final(h);
}

static inline int key_matches(Index *ix, const i64 *r, const i64 *key) {
    for (int i = 0; i < ix->nkey; i++)
        if (r[ix->key[i]] != key[i]) return 0;
    return 1;
}

static Bucket *index_find(Index *ix, const i64 *key, u64 h) {
    if (!ix->cap) return NULL;
    i64 mask = ix->cap - 1;
    for (i64 s = (i64)(h & (u64)mask);; s = (s + 1) & mask) {
        Bucket *b = &ix->b[s];
        if (!b->h) return NULL;
        if (b->h == h && key_matches(ix, bucket_row(ix, b), key)) return b;
    }
}

static int index_grow(Index *ix) {
    i64 cap = ix->cap ? ix->cap * 2 : 16;
    Bucket *nb = calloc((size_t)cap, sizeof(Bucket));
    if (!nb) return -1;
    for (i64 i = 0; i < ix->cap; i++) {
        Bucket *b = &ix->b[i];
        if (!b->h) continue;
        i64 s = (i64)(b->h & (u64)(cap - 1));
        while (nb[s].h) s = (s + 1) & (cap - 1);
        nb[s] = *b;
    }
    free(ix->b);
    ix->b = nb;
    ix->cap = cap;
    return 0;
}

static int index_add(Index *ix, int32_t id) {
    if (ix->nkey == 0) return idvec_push(&ix->all, id);
    if ((ix->used + 1) * 2 > ix->cap && index_grow(ix) < 0) return -1;
    const i64 *r = row(ix->t, id);
    u64 h = hash_key_of(ix, r);
    i64 mask = ix->cap - 1;
    i64 s = (i64)(h & (u64)mask);
    for (;; s = (s + 1) & mask) {
        Bucket *b = &ix->b[s];
        if (!b->h) {
            b->h = h;
            b->rep = id;
            ix->used++;
            return idvec_push(&b->ids, id);
        }
        if (b->h == h) {
            const i64 *o = row(ix->t, b->rep);
            int same = 1;
            for (int i = 0; i < ix->nkey; i++)
                if (o[ix->key[i]] != r[ix->key[i]]) { same = 0; break; }
            if (same) return idvec_push(&b->ids, id);
        }
    }
}

static void index_remove(Index *ix, int32_t id) {
    if (ix->nkey == 0) { idvec_remove(&ix->all, id); return; }
    const i64 *r = row(ix->t, id);
    i64 key[MAXKEY];
    for (int i = 0; i < ix->nkey; i++) key[i] = r[ix->key[i]];
    Bucket *b = index_find(ix, key, hash_key_of(ix, r));
    if (b) idvec_remove(&b->ids, id);
}

static void index_free(Index *ix) {
    for (i64 i = 0; i < ix->cap; i++) free(ix->b[i].ids.v);
    free(ix->b);
    free(ix->all.v);
    free(ix->packed);
}

/* a static index's rows copied in bucket order (see Index.packed) */
static int index_pack(Index *ix) {
    Table *t = ix->t;
    int a = t->arity;
    ix->packed = malloc(sizeof(i64) * (size_t)(t->n * a + 1));
    if (!ix->packed) return -1;
    i64 at = 0;
    for (i64 i = 0; i < ix->cap; i++) {
        Bucket *b = &ix->b[i];
        if (!b->h) continue;
        for (int32_t k = 0; k < b->ids.n; k++)
            memcpy(ix->packed + (at + k) * a, row(t, b->ids.v[k]), sizeof(i64) * (size_t)a);
        b->rep = (int32_t)at;
        at += b->ids.n;
        free(b->ids.v);
        b->ids.v = NULL;
    }
    return 0;
}

/* live tables: the set of present rows */
static i64 set_find(Table *t, const i64 *vals, u64 h) {
    if (!t->set_cap) return -1;
    i64 mask = t->set_cap - 1;
    for (i64 s = (i64)(h & (u64)mask);; s = (s + 1) & mask) {
        int32_t id = t->set[s];
        if (id == -1) return -1;
        if (id >= 0 && memcmp(row(t, id), vals, sizeof(i64) * (size_t)t->arity) == 0) return id;
    }
}

static int set_grow(Table *t) {
    i64 cap = t->set_cap ? t->set_cap * 2 : 64;
    int32_t *ns = malloc(sizeof(int32_t) * (size_t)cap);
    if (!ns) return -1;
    memset(ns, 0xff, sizeof(int32_t) * (size_t)cap);
    i64 used = 0;
    for (i64 i = 0; i < t->set_cap; i++) {
        int32_t id = t->set[i];
        if (id < 0) continue;
        i64 s = (i64)(hash_vals(row(t, id), t->arity) & (u64)(cap - 1));
        while (ns[s] != -1) s = (s + 1) & (cap - 1);
        ns[s] = id;
        used++;
    }
    free(t->set);
    t->set = ns;
    t->set_cap = cap;
    t->set_used = used;
    return 0;
}

/* insert a tuple: its row number, -1 when already there, -2 out of memory */
static i64 table_insert(Table *t, const i64 *vals) {
    u64 h = hash_vals(vals, t->arity);
    if (set_find(t, vals, h) >= 0) return -1;
    if ((t->set_used + 1) * 2 > t->set_cap && set_grow(t) < 0) return -2;
    if (table_append(t, vals) < 0) return -2;
    int32_t id = (int32_t)(t->n - 1);
    i64 mask = t->set_cap - 1;
    i64 s = (i64)(h & (u64)mask);
    while (t->set[s] >= 0) s = (s + 1) & mask;   /* (a removed slot is reused) */
    if (t->set[s] == -1) t->set_used++;
    t->set[s] = id;
    t->count++;
    for (int i = 0; i < t->nidx; i++)
        if (index_add(t->idx[i], id) < 0) return -2;
    return id;
}

static void table_remove(Table *t, int32_t id) {
    const i64 *vals = row(t, id);
    u64 h = hash_vals(vals, t->arity);
    i64 mask = t->set_cap - 1;
    for (i64 s = (i64)(h & (u64)mask);; s = (s + 1) & mask) {
        if (t->set[s] == -1) return;
        if (t->set[s] == id) { t->set[s] = -2; break; }
    }
    t->count--;
    for (int i = 0; i < t->nidx; i++) index_remove(t->idx[i], id);
}

static void table_free(Table *t) {
    free(t->data);
    free(t->set);
    free(t->idx);
}

/* ------------------------------------------------------------ programs */
typedef struct {
    i64 *code;
    Py_ssize_t len;
    int nregs, ntup;
    i64 *regs;           /* its registers: the constants set once, the delta tuple per run */
} Prog;

typedef struct { int32_t ri, rule; i64 off; } Entry;

typedef struct { i64 rank; int state; IdVec v; } RankSlot;   /* state 0 empty, 1 pending, 2 done */

typedef struct {
    Table *live;
    int nlive;
    Table *statics;
    int nstatic;
    Index *ix;
    int nix;
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
    int status;
    i64 err_rule, err_rank;
    const i64 *tested; int tested_arity;   /* the tuple a domination test is about */
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
static int emit(Eval *ev, int ri, int rule, const i64 *vals) {
    Table *t = &ev->live[ri];
    i64 r = vals[ev->rank_col[ri]];
    i64 en = new_entry(ev, ri, rule, vals, t->arity);
    if (en < 0) { ev->status = ST_NOMEM; return -1; }
    if (r == ev->cur) {
        if (idvec_push(&ev->same, (int32_t)en) < 0) { ev->status = ST_NOMEM; return -1; }
        return 0;
    }
    RankSlot *s = rs_get(ev, r, 0);
    if (!s || s->state != 1) {
        if (r < ev->cur) {
            ev->status = ST_RANK;
            ev->err_rule = rule;
            ev->err_rank = r;
            return -1;
        }
        s = rs_get(ev, r, 1);
        if (!s || heap_push(ev, r) < 0) { ev->status = ST_NOMEM; return -1; }
        s->state = 1;
    }
    if (idvec_push(&s->v, (int32_t)en) < 0) { ev->status = ST_NOMEM; return -1; }
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

/* ------------------------------------------------------------ the interpreter */
#define ABORT() do { ev->status = ST_ABORT; return -1; } while (0)

static int arith(Eval *ev, int op, i64 a, i64 b, i64 *out) {
    i64 r;
    switch (op) {
    case A_ADD: if (__builtin_add_overflow(a, b, &r)) ABORT(); break;
    case A_SUB: if (__builtin_sub_overflow(a, b, &r)) ABORT(); break;
    case A_MUL: if (__builtin_mul_overflow(a, b, &r)) ABORT(); break;
    case A_DIV: if (b == 0 || (a == INT64_MIN && b == -1)) ABORT(); r = a / b; break;
    case A_MOD: if (b == 0 || (a == INT64_MIN && b == -1)) ABORT(); r = a % b; break;
    case A_MIN: r = a <= b ? a : b; break;
    case A_MAX: r = a >= b ? a : b; break;
    case A_BAND: r = a & b; break;
    case A_BOR: r = a | b; break;
    case A_BXOR: r = a ^ b; break;
    case A_BSHL:
        if (b < 0 || b > 62) ABORT();
        r = (i64)((u64)a << b);
        if ((r >> b) != a) ABORT();
        break;
    case A_BSHR:
        if (b < 0) ABORT();
        r = b > 63 ? (a < 0 ? -1 : 0) : (a >> b);
        break;
    default: ABORT();
    }
    *out = r;
    return 0;
}

/* run code from pc: 0 done, 1 TRUE reached, -1 stop (ev->status says why).
   A loop runs the rest of the program once per tuple (a recursive call);
   a failed test returns to the innermost loop. Dispatch by computed goto
   (GCC, Clang): one indirect jump per instruction, predicted per opcode. */
static int run(Eval *ev, const i64 *code, i64 pc, i64 *R, const i64 **T) {
    static const void *const op[] = {
        &&op_end, &&op_scan, &&op_lookup, &&op_bind, &&op_check, &&op_const, &&op_arith, &&op_unary,
        &&op_cmp, &&op_notin, &&op_empty, &&op_distinct, &&op_fail, &&op_emit, &&op_true,
    };
#define NEXT(k) do { pc += (k); goto *op[code[pc]]; } while (0)
    goto *op[code[pc]];
op_end:
    return 0;
op_scan: {
        Index *ix = &ev->ix[code[pc + 1]];
        int ts = (int)code[pc + 2];
        Table *t = ix->t;
        if (t->live) {
            IdVec *a = &ix->all;
            for (int32_t i = 0; i < a->n; i++) {
                T[ts] = row(t, a->v[i]);
                int rc = run(ev, code, pc + 3, R, T);
                if (rc) return rc;
            }
        } else {
            for (i64 i = 0; i < t->n; i++) {
                T[ts] = row(t, i);
                int rc = run(ev, code, pc + 3, R, T);
                if (rc) return rc;
            }
        }
        return 0;
    }
op_lookup: {
        Index *ix = &ev->ix[code[pc + 1]];
        int ts = (int)code[pc + 2];
        int n = (int)code[pc + 3];
        i64 key[MAXKEY];
        Bucket *b = index_find(ix, key, gather_key(R, code + pc + 4, n, key));
        if (!b) return 0;
        Table *t = ix->t;
        IdVec *a = &b->ids;
        if (ix->packed) {
            const i64 *r = ix->packed + (i64)b->rep * t->arity;
            for (int32_t i = 0; i < a->n; i++, r += t->arity) {
                T[ts] = r;
                int rc = run(ev, code, pc + 4 + n, R, T);
                if (rc) return rc;
            }
            return 0;
        }
        for (int32_t i = 0; i < a->n; i++) {
            T[ts] = row(t, a->v[i]);
            int rc = run(ev, code, pc + 4 + n, R, T);
            if (rc) return rc;
        }
        return 0;
    }
op_bind:
    R[code[pc + 1]] = T[code[pc + 2]][code[pc + 3]];
    NEXT(4);
op_check:
    if (T[code[pc + 1]][code[pc + 2]] != R[code[pc + 3]]) return 0;
    NEXT(4);
op_const:
    R[code[pc + 1]] = code[pc + 2];
    NEXT(3);
op_arith:
    if (arith(ev, (int)code[pc + 1], R[code[pc + 3]], R[code[pc + 4]], &R[code[pc + 2]]) < 0) return -1;
    NEXT(5);
op_unary: {
        i64 a = R[code[pc + 3]];
        if (code[pc + 1] == U_NEG) {
            if (a == INT64_MIN) ABORT();
            R[code[pc + 2]] = -a;
        } else {
            R[code[pc + 2]] = ~a;
        }
        NEXT(4);
    }
op_cmp: {
        i64 a = R[code[pc + 2]], b = R[code[pc + 3]];
        int ok;
        switch (code[pc + 1]) {
        case C_EQ: ok = a == b; break;
        case C_NE: ok = a != b; break;
        case C_LT: ok = a < b; break;
        case C_LE: ok = a <= b; break;
        case C_GT: ok = a > b; break;
        default: ok = a >= b; break;
        }
        if (!ok) return 0;
        NEXT(4);
    }
op_notin: {
        Index *ix = &ev->ix[code[pc + 1]];
        int n = (int)code[pc + 2];
        i64 key[MAXKEY];
        Bucket *b = index_find(ix, key, gather_key(R, code + pc + 3, n, key));
        if (b && b->ids.n) return 0;
        NEXT(3 + n);
    }
op_empty: {
        Table *t = ev->ix[code[pc + 1]].t;
        if ((t->live ? t->count : t->n) > 0) return 0;
        NEXT(2);
    }
op_distinct:
    if (memcmp(T[code[pc + 1]], ev->tested, sizeof(i64) * (size_t)ev->tested_arity) == 0) return 0;
    NEXT(2);
op_fail:
    return 0;
op_emit: {
        int ri = (int)code[pc + 1], rule = (int)code[pc + 2], n = (int)code[pc + 3];
        i64 vals[MAXKEY * 2];
        for (int i = 0; i < n; i++) vals[i] = R[code[pc + 4 + i]];
        if (emit(ev, ri, rule, vals) < 0) return -1;
        NEXT(4 + n);
    }
op_true:
    return 1;
#undef NEXT
}

/* run a relation's programs on one tuple: 1 when one reaches TRUE, -1 stop */
static int run_programs(Eval *ev, Prog *progs, int n, const i64 *vals, int arity) {
    const i64 *tups[MAX_TUPLES];
    ev->tested = vals;
    ev->tested_arity = arity;
    for (int k = 0; k < n; k++) {
        Prog *p = &progs[k];
        memcpy(p->regs, vals, sizeof(i64) * (size_t)arity);
        int rc = run(ev, p->code, 0, p->regs, tups);
        if (rc) return rc;
    }
    return 0;
}

/* ------------------------------------------------------------ Python boundary */
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

/* rows (an iterable of tuples of ints) into table t: 0, 1 when a value does not fit, -1 error */
static int load_rows(Table *t, PyObject *rows, int live) {
    PyObject *it = PyObject_GetIter(rows);
    if (!it) return -1;
    PyObject *tup;
    i64 vals[MAXKEY * 2];
    int status = 0;
    while ((tup = PyIter_Next(it))) {
        if (!PyTuple_Check(tup) || PyTuple_GET_SIZE(tup) != t->arity) {
            Py_DECREF(tup);
            status = 1;
            break;
        }
        for (int i = 0; i < t->arity; i++)
            if (to_i64(PyTuple_GET_ITEM(tup, i), &vals[i]) < 0) { status = 1; break; }
        Py_DECREF(tup);
        if (status) break;
        if (live ? table_insert(t, vals) == -2 : table_append(t, vals) < 0) {
            PyErr_NoMemory();
            status = -1;
            break;
        }
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) return -1;
    return status;
}

/* a list of Python ints into a new array of n (+ extra) int64, NULL on error */
static i64 *int_array(PyObject *list, Py_ssize_t *n, Py_ssize_t extra) {
    PyObject *seq = PySequence_Fast(list, "a list of integers");
    if (!seq) return NULL;
    *n = PySequence_Fast_GET_SIZE(seq);
    i64 *a = malloc(sizeof(i64) * (size_t)(*n + extra + 1));
    if (!a) { Py_DECREF(seq); PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t i = 0; i < *n; i++) {
        a[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (a[i] == -1 && PyErr_Occurred()) { Py_DECREF(seq); free(a); return NULL; }
    }
    Py_DECREF(seq);
    return a;
}

static int load_prog(PyObject *spec, Prog *p) {
    /* (nregs, ntup, [words], [register, value, register, value, ...]) */
    PyObject *words, *consts;
    if (!PyArg_ParseTuple(spec, "iiOO", &p->nregs, &p->ntup, &words, &consts)) return -1;
    if (p->nregs < 1 || p->nregs > MAX_REGS || p->ntup < 0 || p->ntup > MAX_TUPLES) {
        PyErr_SetString(PyExc_ValueError, "program needs too many registers");
        return -1;
    }
    p->code = int_array(words, &p->len, 1);
    if (!p->code) return -1;
    p->code[p->len] = OP_END;
    p->regs = calloc((size_t)p->nregs, sizeof(i64));
    if (!p->regs) { PyErr_NoMemory(); return -1; }
    Py_ssize_t nc;
    i64 *c = int_array(consts, &nc, 0);
    if (!c) return -1;
    for (Py_ssize_t i = 0; i + 1 < nc; i += 2) {
        if (c[i] < 0 || c[i] >= p->nregs) { free(c); PyErr_SetString(PyExc_ValueError, "constant register"); return -1; }
        p->regs[c[i]] = c[i + 1];
    }
    free(c);
    return 0;
}

/* the operands of a program in range (the interpreter does not check them) */
static int check_prog(Eval *ev, Prog *p, int arity) {
    const i64 *c = p->code;
    Py_ssize_t pc = 0;
#define REG(x) ((x) >= 0 && (x) < p->nregs)
#define TUP(x) ((x) >= 0 && (x) < p->ntup)
#define IDX(x) ((x) >= 0 && (x) < ev->nix)
#define FITS(k) (pc + (k) <= p->len)
    if (p->nregs < arity) goto bad;
    while (pc < p->len) {
        i64 op = c[pc];
        Py_ssize_t n = 0;
        switch (op) {
        case OP_SCAN:
            if (!FITS(3) || !IDX(c[pc + 1]) || ev->ix[c[pc + 1]].nkey || !TUP(c[pc + 2])) goto bad;
            pc += 3;
            break;
        case OP_LOOKUP: case OP_NOTIN: {
            int at = op == OP_LOOKUP ? 4 : 3;
            if (!FITS(at) || !IDX(c[pc + 1])) goto bad;
            n = c[pc + at - 1];
            if (n < 1 || n > MAXKEY || n != ev->ix[c[pc + 1]].nkey || !FITS(at + n)) goto bad;
            if (op == OP_LOOKUP && !TUP(c[pc + 2])) goto bad;
            for (Py_ssize_t i = 0; i < n; i++) if (!REG(c[pc + at + i])) goto bad;
            pc += at + n;
            break;
        }
        case OP_BIND: case OP_CHECK: {
            int r = op == OP_BIND ? 1 : 3, t = op == OP_BIND ? 2 : 1, col = op == OP_BIND ? 3 : 2;
            if (!FITS(4) || !REG(c[pc + r]) || !TUP(c[pc + t]) || c[pc + col] < 0 || c[pc + col] >= MAXKEY * 2) goto bad;
            pc += 4;
            break;
        }
        case OP_CONST: if (!FITS(3) || !REG(c[pc + 1])) goto bad; pc += 3; break;
        case OP_ARITH: if (!FITS(5) || !REG(c[pc + 2]) || !REG(c[pc + 3]) || !REG(c[pc + 4])) goto bad; pc += 5; break;
        case OP_UNARY: case OP_CMP: if (!FITS(4) || !REG(c[pc + 2]) || !REG(c[pc + 3])) goto bad; pc += 4; break;
        case OP_EMPTY: if (!FITS(2) || !IDX(c[pc + 1])) goto bad; pc += 2; break;
        case OP_DISTINCT: if (!FITS(2) || !TUP(c[pc + 1])) goto bad; pc += 2; break;
        case OP_FAIL: case OP_TRUE: pc += 1; break;
        case OP_EMIT:
            if (!FITS(4) || c[pc + 1] < 0 || c[pc + 1] >= ev->nlive) goto bad;
            n = c[pc + 3];
            if (n != ev->live[c[pc + 1]].arity || !FITS(4 + n)) goto bad;
            for (Py_ssize_t i = 0; i < n; i++) if (!REG(c[pc + 4 + i])) goto bad;
            pc += 4 + n;
            break;
        default: goto bad;
        }
    }
    return 0;
bad:
    PyErr_Format(PyExc_ValueError, "malformed program at word %zd", pc);
    return -1;
#undef REG
#undef TUP
#undef IDX
#undef FITS
}

/* per live relation, a list of programs */
static int load_prog_lists(PyObject *lists, int nlive, Prog **progs, int *n) {
    if (!PyList_Check(lists) || PyList_GET_SIZE(lists) != nlive) {
        PyErr_SetString(PyExc_ValueError, "one program list per relation");
        return -1;
    }
    for (int ri = 0; ri < nlive; ri++) {
        PyObject *l = PyList_GET_ITEM(lists, ri);
        if (!PyList_Check(l)) { PyErr_SetString(PyExc_TypeError, "program list"); return -1; }
        n[ri] = (int)PyList_GET_SIZE(l);
        progs[ri] = calloc((size_t)(n[ri] ? n[ri] : 1), sizeof(Prog));
        if (!progs[ri]) { PyErr_NoMemory(); return -1; }
        for (int k = 0; k < n[ri]; k++)
            if (load_prog(PyList_GET_ITEM(l, k), &progs[ri][k]) < 0) return -1;
    }
    return 0;
}

static void eval_free(Eval *ev) {
    for (int i = 0; i < ev->nix; i++) index_free(&ev->ix[i]);
    free(ev->ix);
    for (int i = 0; i < ev->nlive; i++) {
        table_free(&ev->live[i]);
        if (ev->delta && ev->delta[i]) {
            for (int k = 0; k < ev->ndelta[i]; k++) { free(ev->delta[i][k].code); free(ev->delta[i][k].regs); }
            free(ev->delta[i]);
        }
        if (ev->dom && ev->dom[i]) {
            for (int k = 0; k < ev->ndom[i]; k++) { free(ev->dom[i][k].code); free(ev->dom[i][k].regs); }
            free(ev->dom[i]);
        }
    }
    for (int i = 0; i < ev->nstatic; i++) table_free(&ev->statics[i]);
    free(ev->live);
    free(ev->statics);
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

/* the wave loop (ranked.py's RankedEvaluation.run); -1 stop (ev->status) */
static int waves_run(Eval *ev, i64 *waves_out) {
    IdVec wave = {0}, order = {0};
    IdVec *fresh = calloc((size_t)ev->nlive, sizeof(IdVec));
    char *seen = calloc((size_t)ev->nlive, 1);
    int rc = 0;
    i64 waves = 0;
    if (!fresh || !seen) { ev->status = ST_NOMEM; rc = -1; goto done; }
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
            int d = run_programs(ev, ev->dom[ri], ev->ndom[ri], vals, t->arity);
            if (d < 0) { rc = -1; goto done; }
            if (d) continue;
            if (table_insert(t, vals) == -2) { ev->status = ST_NOMEM; rc = -1; goto done; }
            if (run_programs(ev, ev->delta[ri], ev->ndelta[ri], vals, t->arity) < 0) { rc = -1; goto done; }
            continue;
        }
        order.n = 0;
        for (int32_t k = 0; k < wave.n; k++) {
            Entry *e = &ev->e[wave.v[k]];
            Table *t = &ev->live[e->ri];
            i64 id = table_insert(t, ev->arena + e->off);
            if (id == -2) { ev->status = ST_NOMEM; rc = -1; goto done; }
            if (id < 0) continue;
            if (!seen[e->ri]) {
                seen[e->ri] = 1;
                if (idvec_push(&order, e->ri) < 0) { ev->status = ST_NOMEM; rc = -1; goto done; }
            }
            if (idvec_push(&fresh[e->ri], (int32_t)id) < 0) { ev->status = ST_NOMEM; rc = -1; goto done; }
        }
        /* domination once the whole wave is in: tied tuples all go */
        for (int32_t o = 0; o < order.n; o++) {
            int ri = order.v[o];
            if (!ev->ndom[ri]) continue;
            Table *t = &ev->live[ri];
            IdVec *f = &fresh[ri];
            char *out = calloc((size_t)f->n, 1);
            if (!out) { ev->status = ST_NOMEM; rc = -1; goto done; }
            int any = 0;
            for (int32_t k = 0; k < f->n; k++) {
                i64 vals[MAXKEY * 2];
                memcpy(vals, row(t, f->v[k]), sizeof(i64) * (size_t)t->arity);
                int d = run_programs(ev, ev->dom[ri], ev->ndom[ri], vals, t->arity);
                if (d < 0) { free(out); rc = -1; goto done; }
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
            free(out);
        }
        for (int32_t o = 0; o < order.n; o++) {
            int ri = order.v[o];
            Table *t = &ev->live[ri];
            IdVec *f = &fresh[ri];
            for (int32_t k = 0; k < f->n && ev->ndelta[ri]; k++) {
                i64 vals[MAXKEY * 2];
                memcpy(vals, row(t, f->v[k]), sizeof(i64) * (size_t)t->arity);
                if (run_programs(ev, ev->delta[ri], ev->ndelta[ri], vals, t->arity) < 0) { rc = -1; goto done; }
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
    return rc;
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

static PyObject *table_to_set(Table *t, IntSlot *cache) {
    PyObject *set = PySet_New(NULL);
    if (!set) return NULL;
    for (i64 s = 0; s < t->set_cap; s++) {
        int32_t id = t->set[s];
        if (id < 0) continue;
        const i64 *r = row(t, id);
        PyObject *tup = PyTuple_New(t->arity);
        if (!tup) { Py_DECREF(set); return NULL; }
        for (int i = 0; i < t->arity; i++) {
            PyObject *v = cached_int(cache, r[i]);
            if (!v) { Py_DECREF(tup); Py_DECREF(set); return NULL; }
            PyTuple_SET_ITEM(tup, i, v);
        }
        int err = PySet_Add(set, tup);
        Py_DECREF(tup);
        if (err < 0) { Py_DECREF(set); return NULL; }
    }
    return set;
}

PyDoc_STRVAR(ranked_run_doc,
"ranked_run(relations, statics, indexes, delta_programs, domination_programs, seeds)\n"
"relations: [(arity, rank column)] of the stratum; statics: [(arity, rows)] below it;\n"
"indexes: [(live?, table number, key columns)]; *_programs: per relation [(nregs, ntup, words,\n"
"[register, constant, ...])];\n"
"seeds: [(relation number, rule id, rows)]. Returns ('ok', [set per relation], waves),\n"
"('rank', rule id, rank, current rank) or ('abort', reason).");

static PyObject *ranked_run(PyObject *self, PyObject *args) {
    PyObject *rels, *statics, *indexes, *deltas, *doms, *seeds;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!", &PyList_Type, &rels, &PyList_Type, &statics, &PyList_Type,
                          &indexes, &PyList_Type, &deltas, &PyList_Type, &doms, &PyList_Type, &seeds))
        return NULL;
    Eval ev;
    memset(&ev, 0, sizeof ev);
    PyObject *result = NULL;
    int loaded;
    ev.nlive = (int)PyList_GET_SIZE(rels);
    ev.nstatic = (int)PyList_GET_SIZE(statics);
    ev.nix = (int)PyList_GET_SIZE(indexes);
    ev.live = calloc((size_t)ev.nlive + 1, sizeof(Table));
    ev.statics = calloc((size_t)ev.nstatic + 1, sizeof(Table));
    ev.ix = calloc((size_t)ev.nix + 1, sizeof(Index));
    ev.rank_col = calloc((size_t)ev.nlive + 1, sizeof(int));
    ev.delta = calloc((size_t)ev.nlive + 1, sizeof(Prog *));
    ev.dom = calloc((size_t)ev.nlive + 1, sizeof(Prog *));
    ev.ndelta = calloc((size_t)ev.nlive + 1, sizeof(int));
    ev.ndom = calloc((size_t)ev.nlive + 1, sizeof(int));
    if (!ev.live || !ev.statics || !ev.ix || !ev.rank_col || !ev.delta || !ev.dom || !ev.ndelta || !ev.ndom) {
        PyErr_NoMemory();
        goto out;
    }
    for (int i = 0; i < ev.nlive; i++) {
        Table *t = &ev.live[i];
        if (!PyArg_ParseTuple(PyList_GET_ITEM(rels, i), "ii", &t->arity, &ev.rank_col[i])) goto out;
        if (t->arity > MAXKEY * 2 || t->arity < 1) { PyErr_SetString(PyExc_ValueError, "arity"); goto out; }
        t->live = 1;
    }
    for (int i = 0; i < ev.nstatic; i++) {
        Table *t = &ev.statics[i];
        PyObject *rows;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(statics, i), "iO", &t->arity, &rows)) goto out;
        if (t->arity > MAXKEY * 2) { PyErr_SetString(PyExc_ValueError, "arity"); goto out; }
        loaded = load_rows(t, rows, 0);
        if (loaded < 0) goto out;
        if (loaded) { result = Py_BuildValue("(ss)", "abort", "a value does not fit in 64 bits"); goto out; }
    }
    for (int i = 0; i < ev.nix; i++) {
        Index *ix = &ev.ix[i];
        int live, tno;
        PyObject *key;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(indexes, i), "iiO!", &live, &tno, &PyTuple_Type, &key)) goto out;
        if (tno < 0 || tno >= (live ? ev.nlive : ev.nstatic) || PyTuple_GET_SIZE(key) > MAXKEY) {
            PyErr_SetString(PyExc_ValueError, "index spec");
            goto out;
        }
        ix->t = live ? &ev.live[tno] : &ev.statics[tno];
        ix->nkey = (int)PyTuple_GET_SIZE(key);
        for (int k = 0; k < ix->nkey; k++) {
            ix->key[k] = (int)PyLong_AsLong(PyTuple_GET_ITEM(key, k));
            if (ix->key[k] < 0 || ix->key[k] >= ix->t->arity) {
                PyErr_SetString(PyExc_ValueError, "index column");
                goto out;
            }
        }
        if (live) {
            Table *t = ix->t;
            Index **n = realloc(t->idx, sizeof(Index *) * (size_t)(t->nidx + 1));
            if (!n) { PyErr_NoMemory(); goto out; }
            t->idx = n;
            t->idx[t->nidx++] = ix;
        } else if (ix->nkey) {
            for (i64 r = 0; r < ix->t->n; r++)
                if (index_add(ix, (int32_t)r) < 0) { PyErr_NoMemory(); goto out; }
            if (index_pack(ix) < 0) { PyErr_NoMemory(); goto out; }
        }
    }
    if (load_prog_lists(deltas, ev.nlive, ev.delta, ev.ndelta) < 0) goto out;
    if (load_prog_lists(doms, ev.nlive, ev.dom, ev.ndom) < 0) goto out;
    /* check the programs' operands once, so that the interpreter need not */
    for (int pass = 0; pass < 2; pass++)
        for (int ri = 0; ri < ev.nlive; ri++)
            for (int k = 0; k < (pass ? ev.ndom[ri] : ev.ndelta[ri]); k++)
                if (check_prog(&ev, pass ? &ev.dom[ri][k] : &ev.delta[ri][k], ev.live[ri].arity) < 0) goto out;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(seeds); i++) {
        int ri, rule;
        PyObject *rows;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(seeds, i), "iiO", &ri, &rule, &rows)) goto out;
        if (ri < 0 || ri >= ev.nlive) { PyErr_SetString(PyExc_ValueError, "seed relation"); goto out; }
        Table tmp = {0};
        tmp.arity = ev.live[ri].arity;
        loaded = load_rows(&tmp, rows, 0);
        if (loaded == 0)
            for (i64 r = 0; r < tmp.n; r++)
                if (seed(&ev, ri, rule, row(&tmp, r)) < 0) { loaded = -2; break; }
        table_free(&tmp);
        if (loaded == -2) { PyErr_NoMemory(); goto out; }
        if (loaded < 0) goto out;
        if (loaded) { result = Py_BuildValue("(ss)", "abort", "a value does not fit in 64 bits"); goto out; }
    }
    i64 waves = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = waves_run(&ev, &waves);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        if (ev.status == ST_RANK)
            result = Py_BuildValue("(sLLL)", "rank", (long long)ev.err_rule, (long long)ev.err_rank, (long long)ev.cur);
        else if (ev.status == ST_NOMEM)
            PyErr_NoMemory();
        else
            result = Py_BuildValue("(ss)", "abort", "integer overflow, division by zero or a bad shift");
        goto out;
    }
    PyObject *sets = PyList_New(ev.nlive);
    if (!sets) goto out;
    IntSlot *cache = calloc(INT_CACHE, sizeof(IntSlot));
    if (!cache) { Py_DECREF(sets); PyErr_NoMemory(); goto out; }
    for (int i = 0; i < ev.nlive; i++) {
        PyObject *s = table_to_set(&ev.live[i], cache);
        if (!s) { Py_DECREF(sets); sets = NULL; break; }
        PyList_SET_ITEM(sets, i, s);
    }
    for (int i = 0; i < INT_CACHE; i++) Py_XDECREF(cache[i].o);
    free(cache);
    if (!sets) goto out;
    result = Py_BuildValue("(sNL)", "ok", sets, (long long)waves);
out:
    eval_free(&ev);
    return result;
}

static PyMethodDef methods[] = {
    {"ranked_run", ranked_run, METH_VARARGS, ranked_run_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native",
    "Rank-ordered Datalog evaluation in C (see sdylog/datalog/native/ranked.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "MAXKEY", MAXKEY) < 0) { Py_DECREF(m); return NULL; }
    return m;
}
