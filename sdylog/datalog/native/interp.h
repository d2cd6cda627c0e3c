/* The interpreter of lowered clause programs, shared by the C evaluators.
 *
 * Python plans every clause (sdylog/datalog/plan.py) and lowers the plan
 * (sdylog/datalog/native_plan.py) to a program of int64 words.
 *
 * Instruction set (a clause's program; registers r, tuple slots t, indexes idx
 * numbered by the run):
 *   SCAN idx t             loop: t = each row of index idx (no key)
 *   LOOKUP idx t n k1..kn  loop: t = each row whose key is (r[k1]..r[kn])
 *   BIND r t c             r = t[c]
 *   CHECK t c r            next solution unless t[c] == r
 *   ARITH op d a b         d = a op b (+ - * / % min max band bor bxor bshl bshr;
 *                          / and % truncate like Soufflé)
 *   UNARY op d a           d = -a or ~a
 *   CMP op a b             next solution unless a op b (= != < <= > >=)
 *   ANY n w1..wn           next solution unless some option holds: the n words
 *                          are options, each m (op a b)*m, holding when all its
 *                          m comparisons do (a disjunction of comparisons)
 *   NOTIN idx n k1..kn     next solution if the key is in index idx
 *   EMPTY idx              next solution unless index idx's table is empty
 *   DISTINCT t             next solution if t is the tuple being tested
 *   FAIL                   next solution
 *   BRANCH n m1..mn        loop over n options: the programs of m1, ..., mn words
 *                          that follow (each ending in JOIN), each run in turn
 *   JOIN k                 the end of an option: go on k words further (after
 *                          the last option)
 *   MOVE d a               d = a
 *   EMIT rel rule n r1..rn a head tuple (what it does: the evaluator's `emit`)
 *   TRUE                   the domination test holds
 *   AGG op acc cnt n ...   aggregate (count sum min max): r[acc] = r[cnt] = 0,
 *                          run the n words that follow (its body, ending in
 *                          ACC) once, then go on after them; min / max over
 *                          no solution: next solution
 *   ACC op acc cnt v       fold r[v] (count: 1) into r[acc], r[cnt] += 1;
 *                          next solution of the aggregate's body
 * Registers 0..arity-1 hold the delta tuple (or the tuple tested); each
 * program has its own registers, its constants set once when it is loaded. An
 * integer overflow, a division by zero or a bad shift aborts the run: the
 * caller evaluates the stratum in Python instead (Python's integers do not
 * overflow, and it raises the division error with its message).
 */
#ifndef SDYLOG_NATIVE_INTERP_H
#define SDYLOG_NATIVE_INTERP_H
#include "table.h"

/* (programs are saved with their rule program: a change here bumps FORMAT in plan.py) */
enum { OP_END = 0, OP_SCAN, OP_LOOKUP, OP_BIND, OP_CHECK, OP_ARITH, OP_UNARY, OP_CMP,
       OP_NOTIN, OP_EMPTY, OP_DISTINCT, OP_FAIL, OP_EMIT, OP_TRUE, OP_AGG, OP_ACC, OP_ANY,
       OP_BRANCH, OP_JOIN, OP_MOVE,
       /* internal: an ARITH or CMP of the common operators, rewritten by check_prog (one jump, no switch) */
       OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_MIN, OP_MAX, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };
enum { A_ADD = 0, A_SUB, A_MUL, A_DIV, A_MOD, A_MIN, A_MAX, A_BAND, A_BOR, A_BXOR, A_BSHL, A_BSHR };
enum { U_NEG = 0, U_BNOT };
enum { C_EQ = 0, C_NE, C_LT, C_LE, C_GT, C_GE };
enum { G_COUNT = 0, G_SUM, G_MIN, G_MAX };
enum { ST_OK = 0, ST_ABORT = 1, ST_RANK = 2, ST_NOMEM = 3 };

#define MAX_REGS 1024
#define MAX_TUPLES 64

/* ------------------------------------------------------------ programs */
typedef struct {
    i64 *code;
    Py_ssize_t len;
    int nregs, ntup;
    i64 *regs;           /* its registers: the constants set once, the delta tuple per run */
} Prog;

/* What a program runs against: its indexes, the relations EMIT writes (what
   it does with a tuple: `emit`), and why a run stopped. */
typedef struct Interp {
    Index **ix;
    int nix;
    Table **out;
    int nout;
    int (*emit)(struct Interp *in, int rel, int rule, const i64 *vals);   /* 0, or -1 stop (status set) */
    int status;
    const i64 *tested; int tested_arity;   /* the tuple a domination test is about */
} Interp;

static void prog_free(Prog *p) {
    free(p->code);
    free(p->regs);
}

/* an array of n programs, then the array itself (NULL: nothing) */
static void progs_free(Prog *ps, int n) {
    for (int k = 0; ps && k < n; k++) prog_free(&ps[k]);
    free(ps);
}

/* ------------------------------------------------------------ the interpreter */
#define ABORT() do { ev->status = ST_ABORT; return -1; } while (0)

/* (always inlined: the opcodes of one operation call it with a constant op,
   which folds the switch away) */
static inline __attribute__((always_inline)) int arith(Interp *ev, int op, i64 a, i64 b, i64 *out) {
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

static inline __attribute__((always_inline)) int compare(int op, i64 a, i64 b) {
    switch (op) {
    case C_EQ: return a == b;
    case C_NE: return a != b;
    case C_LT: return a < b;
    case C_LE: return a <= b;
    case C_GT: return a > b;
    default: return a >= b;   /* C_GE (check_prog rejects any other code) */
    }
}

/* run code from pc: 0 done, 1 TRUE reached, -1 stop (ev->status says why).
   A loop runs the rest of the program once per tuple (a recursive call);
   a failed test returns to the innermost loop. Dispatch by computed goto
   (GCC, Clang): one indirect jump per instruction, predicted per opcode. */
static int run(Interp *ev, const i64 *code, i64 pc, i64 *R, const i64 **T) {
    static const void *const op[] = {
        &&op_end, &&op_scan, &&op_lookup, &&op_bind, &&op_check, &&op_arith, &&op_unary,
        &&op_cmp, &&op_notin, &&op_empty, &&op_distinct, &&op_fail, &&op_emit, &&op_true,
        &&op_agg, &&op_acc, &&op_any, &&op_branch, &&op_join, &&op_move,
        &&op_add, &&op_sub, &&op_mul, &&op_div, &&op_mod, &&op_min, &&op_max,
        &&op_eq, &&op_ne, &&op_lt, &&op_le, &&op_gt, &&op_ge,
    };
#define NEXT(k) do { pc += (k); goto *op[code[pc]]; } while (0)
    goto *op[code[pc]];
op_end:
    return 0;
op_scan: {
        Index *ix = ev->ix[code[pc + 1]];
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
        Index *ix = ev->ix[code[pc + 1]];
        int ts = (int)code[pc + 2];
        int n = (int)code[pc + 3];
        Bucket *b = index_lookup(ix, R, code + pc + 4, n);
        if (!b) return 0;
        Table *t = ix->t;
        /* (one row, most keys: the rest of the program runs in this call, not a
           nested one; rep is the row, packed or live, a list or none) */
        if (b->n == 1) {
            T[ts] = row(t, b->rep);
            NEXT(4 + n);
        }
        const int32_t *ids;
        int32_t nids;
        if (ix->packed) {
            ids = ix->packed + b->rep;
            nids = b->n;
        } else {
            IdVec *a = &ix->lists[b - ix->b];
            ids = a->v;
            nids = a->n;
        }
        for (int32_t i = 0; i < nids; i++) {
            T[ts] = row(t, ids[i]);
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
op_arith:
    if (arith(ev, (int)code[pc + 1], R[code[pc + 3]], R[code[pc + 4]], &R[code[pc + 2]]) < 0) return -1;
    NEXT(5);
    /* OP_ARITH and OP_CMP of one operation each (check_prog's rewrite): arith
       and compare with the operation a constant */
#define ARITH(op) do { \
        if (arith(ev, op, R[code[pc + 3]], R[code[pc + 4]], &R[code[pc + 2]]) < 0) return -1; \
        NEXT(5); \
    } while (0)
op_add: ARITH(A_ADD);
op_sub: ARITH(A_SUB);
op_mul: ARITH(A_MUL);
op_div: ARITH(A_DIV);
op_mod: ARITH(A_MOD);
op_min: ARITH(A_MIN);
op_max: ARITH(A_MAX);
#undef ARITH
#define TEST(op) do { if (!compare(op, R[code[pc + 2]], R[code[pc + 3]])) return 0; NEXT(4); } while (0)
op_eq: TEST(C_EQ);
op_ne: TEST(C_NE);
op_lt: TEST(C_LT);
op_le: TEST(C_LE);
op_gt: TEST(C_GT);
op_ge: TEST(C_GE);
#undef TEST
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
op_cmp:
    if (!compare((int)code[pc + 1], R[code[pc + 2]], R[code[pc + 3]])) return 0;
    NEXT(4);
op_any: {
        const i64 *w = code + pc + 2, *end = w + code[pc + 1];
        while (w < end) {
            const i64 *stop = w + 1 + 3 * w[0];
            for (w++; w < stop && compare((int)w[0], R[w[1]], R[w[2]]); w += 3) {}
            if (w == stop) NEXT(2 + code[pc + 1]);
            w = stop;
        }
        return 0;
    }
op_branch: {
        i64 n = code[pc + 1], at = pc + 2 + n;
        for (i64 k = 0; k < n; at += code[pc + 2 + k], k++) {
            int rc = run(ev, code, at, R, T);
            if (rc) return rc;
        }
        return 0;
    }
op_join:
    NEXT(code[pc + 1]);
op_move:
    R[code[pc + 1]] = R[code[pc + 2]];
    NEXT(3);
op_notin: {
        Index *ix = ev->ix[code[pc + 1]];
        int n = (int)code[pc + 2];
        Bucket *b = index_lookup(ix, R, code + pc + 3, n);
        if (b && b->n) return 0;
        NEXT(3 + n);
    }
op_empty: {
        Table *t = ev->ix[code[pc + 1]]->t;
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
        if (ev->emit(ev, ri, rule, vals) < 0) return -1;
        NEXT(4 + n);
    }
op_true:
    return 1;
op_agg: {
        i64 acc = code[pc + 2], cnt = code[pc + 3], n = code[pc + 4];
        R[acc] = 0;
        R[cnt] = 0;
        if (run(ev, code, pc + 5, R, T) < 0) return -1;   /* (its body holds no TRUE) */
        if ((code[pc + 1] == G_MIN || code[pc + 1] == G_MAX) && R[cnt] == 0) return 0;
        NEXT(5 + n);
    }
op_acc: {
        i64 *acc = &R[code[pc + 2]], *cnt = &R[code[pc + 3]], v = R[code[pc + 4]];
        switch (code[pc + 1]) {
        case G_COUNT: (*acc)++; break;
        case G_SUM: if (__builtin_add_overflow(*acc, v, acc)) ABORT(); break;
        case G_MIN: if (!*cnt || v < *acc) *acc = v; break;
        default: if (!*cnt || v > *acc) *acc = v; break;
        }
        (*cnt)++;
        return 0;
    }
#undef NEXT
}

/* run a relation's programs on one tuple: 1 when one reaches TRUE, -1 stop */
static int run_programs(Interp *ev, Prog *progs, int n, const i64 *vals, int arity) {
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

/* ------------------------------------------------------------ programs from Python */

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

static int check_prog(Interp *ev, Prog *p, int arity);

/* A list of programs into a new array *out, each checked against the
   interpreter `in` (`arity`: the columns of the tuple a program starts from,
   0 for none): 0, or -1 with a Python error. *n is the array's length from
   the start, so that the caller frees every program (prog_free) either way. */
static int load_checked(PyObject *list, Interp *in, int arity, Prog **out, int *n) {
    if (!PyList_Check(list)) { PyErr_SetString(PyExc_TypeError, "a list of programs"); return -1; }
    int len = (int)PyList_GET_SIZE(list);
    *out = calloc((size_t)len + 1, sizeof(Prog));
    if (!*out) { PyErr_NoMemory(); return -1; }
    *n = len;
    for (int k = 0; k < len; k++)
        if (load_prog(PyList_GET_ITEM(list, k), &(*out)[k]) < 0 || check_prog(in, &(*out)[k], arity) < 0) return -1;
    return 0;
}

/* the operands of a program in range (the interpreter does not check them),
   and the words BRANCH and JOIN go on at the start of an instruction */
static int check_prog(Interp *ev, Prog *p, int arity) {
    const i64 *c = p->code;
    Py_ssize_t pc = 0, ntargets = 0;
    char *start = calloc((size_t)p->len + 1, 1);                     /* word -> starts an instruction */
    Py_ssize_t *target = malloc(sizeof(Py_ssize_t) * (size_t)(p->len + 1));   /* words jumped to */
    if (!start || !target) { free(start); free(target); PyErr_NoMemory(); return -1; }
#define REG(x) ((x) >= 0 && (x) < p->nregs)
#define TUP(x) ((x) >= 0 && (x) < p->ntup)
#define IDX(x) ((x) >= 0 && (x) < ev->nix)
#define FITS(k) (pc + (k) <= p->len)
    if (p->nregs < arity) goto bad;
    while (pc < p->len) {
        i64 op = c[pc];
        Py_ssize_t n = 0;
        start[pc] = 1;
        switch (op) {
        case OP_SCAN:
            if (!FITS(3) || !IDX(c[pc + 1]) || ev->ix[c[pc + 1]]->nkey || !TUP(c[pc + 2])) goto bad;
            pc += 3;
            break;
        case OP_LOOKUP: case OP_NOTIN: {
            int at = op == OP_LOOKUP ? 4 : 3;
            if (!FITS(at) || !IDX(c[pc + 1])) goto bad;
            n = c[pc + at - 1];
            if (n < 1 || n > MAXKEY || n != ev->ix[c[pc + 1]]->nkey || !FITS(at + n)) goto bad;
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
        case OP_ARITH:
            if (!FITS(5) || !REG(c[pc + 2]) || !REG(c[pc + 3]) || !REG(c[pc + 4])) goto bad;
            if (c[pc + 1] >= A_ADD && c[pc + 1] <= A_MAX) p->code[pc] = OP_ADD + (c[pc + 1] - A_ADD);
            pc += 5;
            break;
        case OP_UNARY: if (!FITS(4) || !REG(c[pc + 2]) || !REG(c[pc + 3])) goto bad; pc += 4; break;
        case OP_CMP:
            if (!FITS(4) || c[pc + 1] < C_EQ || c[pc + 1] > C_GE || !REG(c[pc + 2]) || !REG(c[pc + 3])) goto bad;
            p->code[pc] = OP_EQ + (c[pc + 1] - C_EQ);
            pc += 4;
            break;
        case OP_ANY: {   /* (options of m >= 1 comparisons filling its n words exactly) */
            if (!FITS(2) || c[pc + 1] < 0 || !FITS(2 + c[pc + 1])) goto bad;
            Py_ssize_t w = pc + 2, end = w + c[pc + 1];
            while (w < end) {
                Py_ssize_t m = c[w++];
                if (m < 1 || m > (end - w) / 3) goto bad;
                for (; m > 0; m--, w += 3)
                    if (c[w] < C_EQ || c[w] > C_GE || !REG(c[w + 1]) || !REG(c[w + 2])) goto bad;
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
        case OP_DISTINCT: if (!FITS(2) || !TUP(c[pc + 1])) goto bad; pc += 2; break;
        case OP_FAIL: case OP_TRUE: pc += 1; break;
        case OP_AGG:   /* (its body's words are checked as the next instructions) */
            if (!FITS(5) || c[pc + 1] < G_COUNT || c[pc + 1] > G_MAX || !REG(c[pc + 2]) || !REG(c[pc + 3])
                || c[pc + 4] < 0 || !FITS(5 + c[pc + 4])) goto bad;
            pc += 5;
            break;
        case OP_ACC:
            if (!FITS(5) || c[pc + 1] < G_COUNT || c[pc + 1] > G_MAX || !REG(c[pc + 2]) || !REG(c[pc + 3])
                || !REG(c[pc + 4])) goto bad;
            pc += 5;
            break;
        case OP_EMIT:
            if (!FITS(4) || c[pc + 1] < 0 || c[pc + 1] >= ev->nout) goto bad;
            n = c[pc + 3];
            if (n != ev->out[c[pc + 1]]->arity || !FITS(4 + n)) goto bad;
            for (Py_ssize_t i = 0; i < n; i++) if (!REG(c[pc + 4 + i])) goto bad;
            pc += 4 + n;
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
    PyErr_Format(PyExc_ValueError, "malformed program at word %zd", pc);
    return -1;
#undef REG
#undef TUP
#undef IDX
#undef FITS
}


#endif
