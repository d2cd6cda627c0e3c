/* The database of a memory-engine run (db.c): every relation held in C. */
#ifndef SDYLOG_NATIVE_DB_H
#define SDYLOG_NATIVE_DB_H
#include "interp.h"

/* A relation: its rows (deduplicated by the table's hash set), which columns
   hold symbol ids, and the packed indexes built on it (freed when it changes).
   no_set: its set was dropped (drop_sets) and is not made again until rows go
   in by insert or run (db_replace_rows copies rows without one). */
typedef struct {
    Table t;
    char sym[MAXKEY * 2];
    Index **cache;
    int ncache;
    int no_set;
} DbTable;

typedef struct {
    PyObject_HEAD
    DbTable **tab;       /* (never moved: indexes point at their Table) */
    int ntab, cap;
    DbTable *made;       /* the tables the constructor made, tab[0 .. nmade - 1], in one
                            allocation (a run's database has hundreds); later ones alone */
    int nmade;
    PyObject *names;     /* list: symbol id -> its string */
    PyObject *ids;       /* dict: string -> symbol id */
    Symbol *symbols;     /* symbol id -> its string as UTF-8 (order comparisons read them) */
    Py_ssize_t symbols_cap;
    PyObject *encoded;   /* the UTF-8 bytes of symbols Python holds none for (a lone surrogate), or NULL */
    Scratch scratch;     /* where db_index counts an index's keys */
    char *arena;         /* a stratum's run's arrays (db.c, run_arena) */
    size_t arena_cap;
} Database;

extern PyTypeObject DatabaseType, PlanType;

/* _native.PlanRefused, a ValueError: a Plan's words that do not load (db.c:
   every check of its words raises it); run sets `done` (the strata that
   ran: the refused one did not start) and `rounds` on it. Made by the
   module (ranked.c). */
extern PyObject *PlanRefused;

/* A stratum's plan loaded in C (db.c: from the words of a _native.Plan,
   its head when first offered, plan_of, its programs when first run,
   plan_ready): its programs checked once, then run by
   any database whose tables have the shapes of the one it was loaded for
   (the databases of one TableLayout, native_db.py). A plan of a rank-ordered stratum (nrank > 0)
   has its relations' rank columns and domination tests too (ranked.c runs
   it); another is run semi-naively (db.c). */
typedef struct { int tno, arity, nkey, key[MAXKEY], live; i64 keys_seen; } IndexSpec;

#define MAXRANK 4   /* rank columns of a rank-ordered stratum's relations */

typedef struct {
    int nout, nix, nbase, nchecks;
    int *out, *arity;       /* per relation of the stratum: its table, that table's arity */
    IndexSpec *ix;          /* (live: an index of a relation of the stratum, kept up to date) */
    i64 *rows_seen;         /* per relation, the rows its table held after the plan last ran, and
                               per live index (keys_seen) its keys then: a run makes room for as
                               many at once, not in doubling steps (each copying what is in). Only
                               room: the rows are the same whatever it is (test_native_room.py).
                               (Read and written with the GIL held.) */
    Prog *base, **delta;    /* (registers are copied per run: runs may share a plan, without the GIL) */
    int *ndelta;
    i64 *checks;            /* table, lo, hi per check */
    int nrank;              /* rank-ordered: per relation, its rank columns and domination tests */
    int (*rank_col)[MAXRANK];
    Prog **dom;
    int *ndom;
    Py_ssize_t programs_at; /* where its programs start in its words */
    int loaded;             /* whether they are loaded (plan_ready) */
} Plan;

/* copies of plan p's programs with registers of their own (the words are
   the plan's: runs may share a plan, each with its registers): base, and
   per relation its delta programs and (a rank-ordered plan) its domination
   tests. In the database's run arena: they end with the stratum's run (strata
   run one after another). */
typedef struct { Prog *base, **delta, **dom; } PlanCopies;

/* fills c and gives `extra` bytes more (zeroed, 16-byte aligned) for the
   run's other arrays, in the same block; NULL out of memory */
char *plan_copies(Database *db, Plan *p, size_t extra, PlanCopies *c);

/* a rank-ordered stratum by plan p (ranked.c): 0 done (the tables hold the
   result), 1 aborted (an integer overflow, a division by zero, a bad shift,
   a rank lowered: the tables unchanged), -1 a Python error */
int ranked_run(Database *db, Plan *p, i64 *waves);

/* nonzero: db_index builds index_build_plain's indexes, not packed ones (tests) */
extern int db_plain_indexes;

/* the index of table `tno` on `key` (packed, built on first use); NULL with
   a Python error when out of memory */
Index *db_index(Database *db, int tno, const int *key, int nkey);

/* table `tno` now holds src's rows, distinct (src is left as it is: its
   owner frees it, before the next copy if that is to reuse its memory): 0,
   -1 out of memory */
int db_replace_rows(Database *db, int tno, Table *src);

/* table `tno` changed: drop the indexes built on it */
void db_changed(Database *db, int tno);

#endif
