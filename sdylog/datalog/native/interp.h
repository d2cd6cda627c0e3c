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
 *   CMP op a b             next solution unless a op b (= != < <= > >=; and < <= > >=
 *                          of symbols: their strings' order, not their ids')
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
 *   EMIT rel n r1..rn      a head tuple (what it does: the evaluator's `emit`)
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

/* (saved with their rule program: cache.engine_stamp drops those saved by another build) */
enum { OP_END = 0, OP_SCAN, OP_LOOKUP, OP_BIND, OP_CHECK, OP_ARITH, OP_UNARY, OP_CMP,
       OP_NOTIN, OP_EMPTY, OP_DISTINCT, OP_FAIL, OP_EMIT, OP_TRUE, OP_AGG, OP_ACC, OP_ANY,
       OP_BRANCH, OP_JOIN, OP_MOVE };
enum { A_ADD = 0, A_SUB, A_MUL, A_DIV, A_MOD, A_MIN, A_MAX, A_BAND, A_BOR, A_BXOR, A_BSHL, A_BSHR };
enum { U_NEG = 0, U_BNOT };
enum { C_EQ = 0, C_NE, C_LT, C_LE, C_GT, C_GE, C_SLT, C_SLE, C_SGT, C_SGE };
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

/* A symbol's string, as UTF-8 (whose byte order is the code points' order,
   Python's order of str): what an order comparison of symbols reads. */
typedef struct { const char *s; Py_ssize_t n; } Symbol;

/* What a program runs against: its indexes, the relations EMIT writes (what
   it does with a tuple: `emit`), the database's symbols (by id), and why a
   run stopped. */
typedef struct Interp {
    Index **ix;
    int nix;
    Table **out;
    int nout;
    int (*emit)(struct Interp *in, int rel, const i64 *vals);   /* 0, or -1 stop (status set) */
    const Symbol *symbols;
    i64 nsymbols;
    int status;
    const i64 *tested; int tested_arity;   /* the tuple a domination test is about */
} Interp;

/* ------------------------------------------------------------ the interpreter */
#define ABORT() do { ev->status = ST_ABORT; return -1; } while (0)

static inline int arith(Interp *ev, int op, i64 a, i64 b, i64 *out) {
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

/* <0, 0, >0: symbol a's string before, equal to, after b's */
static int symbol_order(const Interp *ev, i64 a, i64 b) {
    if (a < 0 || b < 0 || a >= ev->nsymbols || b >= ev->nsymbols)   /* (not symbols: a malformed program) */
        return (a > b) - (a < b);
    const Symbol *x = &ev->symbols[a], *y = &ev->symbols[b];
    int c = memcmp(x->s, y->s, (size_t)(x->n < y->n ? x->n : y->n));
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

static inline int compare(const Interp *ev, int op, i64 a, i64 b) {
    switch (op) {
    case C_EQ: return a == b;
    case C_NE: return a != b;
    case C_LT: return a < b;
    case C_LE: return a <= b;
    case C_GT: return a > b;
    case C_GE: return a >= b;
    case C_SLT: return symbol_order(ev, a, b) < 0;
    case C_SLE: return symbol_order(ev, a, b) <= 0;
    case C_SGT: return symbol_order(ev, a, b) > 0;
    default: return symbol_order(ev, a, b) >= 0;   /* C_SGE (check_prog rejects any other code) */
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
           nested one; rep is the row, packed or live) */
        int32_t nids = b->n, id = b->rep;
        if (nids == 1) {
            T[ts] = row(t, id);
            NEXT(4 + n);
        }
        /* (packed: the rows at packed[rep..]; live: those chained from rep's
           next, Index.next. Nothing goes into a table while a program reads it) */
        for (int32_t i = 0; i < nids; i++) {
            id = ix->packed ? ix->packed[b->rep + i] : ix->next[id];
            T[ts] = row(t, id);
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
    if (!compare(ev, (int)code[pc + 1], R[code[pc + 2]], R[code[pc + 3]])) return 0;
    NEXT(4);
op_any: {
        const i64 *w = code + pc + 2, *end = w + code[pc + 1];
        while (w < end) {
            const i64 *stop = w + 1 + 3 * w[0];
            for (w++; w < stop && compare(ev, (int)w[0], R[w[1]], R[w[2]]); w += 3) {}
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
        int ri = (int)code[pc + 1], n = (int)code[pc + 2];
        i64 vals[MAXKEY * 2];
        for (int i = 0; i < n; i++) vals[i] = R[code[pc + 3 + i]];
        if (ev->emit(ev, ri, vals) < 0) return -1;
        NEXT(3 + n);
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

#endif
