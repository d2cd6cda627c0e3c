/* The database of a memory-engine run (db.c): every relation held in C. */
#ifndef SDYLOG_NATIVE_DB_H
#define SDYLOG_NATIVE_DB_H
#include "table.h"

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
    Scratch scratch;     /* where db_index counts an index's keys */
} Database;

extern PyTypeObject DatabaseType;

/* nonzero: db_index builds index_build_plain's indexes, not packed ones (tests) */
extern int db_plain_indexes;

/* the index of table `tno` on `key` (packed, built on first use); NULL with
   a Python error when out of memory */
Index *db_index(Database *db, int tno, const int *key, int nkey);

/* table `tno` now holds the rows of src's set (src is left as it is: its
   owner frees it, before the next copy if that is to reuse its memory): 0,
   -1 out of memory */
int db_replace_rows(Database *db, int tno, Table *src);

/* table `tno` changed: drop the indexes built on it */
void db_changed(Database *db, int tno);

#endif
