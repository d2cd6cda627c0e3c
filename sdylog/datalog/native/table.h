/* Tables, indexes and hashing: what the C evaluators (ranked.c: rank-ordered
 * strata; db.c: the database of a memory-engine run, its plain, recursive
 * and stepped strata, and the run of a whole batch of strata, rank-ordered
 * ones handed to ranked.c) share. Included by both (static functions).
 *
 *   Table   rows of `arity` int64 in one growing array; a tuple is its row
 *           number (rows are never moved or freed while a run lasts, so a
 *           removed tuple's values stay readable). A table with a hash set
 *           (table_insert) deduplicates; a live table (a relation of a
 *           rank-ordered stratum) may lose rows (table_remove) and keeps its
 *           indexes up to date on insert / remove (t->idx).
 *   Index   key columns -> the rows with that key, in insertion order (open
 *           addressing; a bucket remembers one row holding its key and how
 *           many: a key of one row needs no list). No key: every row (a
 *           scan). A negation reads an index as a key set. A live index
 *           chains a key's rows (Index.next: no list per bucket). A
 *           packed index (of a table that does not change while it is read)
 *           holds the row numbers of its keys of several rows in bucket
 *           order (no list per bucket); one on a column of few more
 *           values than rows (ids), most of them keys, is direct: key k's
 *           bucket is k - lo (no hash, no probe, and the keys of nearby
 *           ids, which a sweep in program order looks up one after another,
 *           share cache lines).
 *           An index remembers its last lookup (index_lookup): most lookups
 *           repeat the one before (the programs of one delta tuple look up
 *           the same tuples).
 */
#ifndef SDYLOG_NATIVE_TABLE_H
#define SDYLOG_NATIVE_TABLE_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;
typedef uint64_t u64;

#define MAXKEY 32   /* key columns; a row has at most 2 * MAXKEY */

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

/* (one multiply per value: keys are a few small ints, and hash_final mixes
   the high bits down into the low ones that pick a slot) */
static inline u64 hash_step(u64 h, i64 x) {
    return (h ^ (u64)x) * 0x9e3779b97f4a7c15ULL;
}

static inline u64 hash_final(u64 h) {
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    return h | 1;   /* 0 marks an empty slot */
}

/* ------------------------------------------------------------ tables and indexes */
struct Index;

/* a slot of a table's set: a row number (-1 empty, -2 removed) and the low
   bits of its hash (the set grows without reading the rows again; a probe
   compares rows only when they agree) */
typedef struct { int32_t id; uint32_t h; } SetSlot;

typedef struct {
    int arity;
    i64 *data;
    i64 n, cap;
    int live;            /* rows may be removed: scans read Index.all, sizes `count` */
    SetSlot *set;        /* the rows in it (tables filled by table_insert) */
    i64 set_cap, set_used, count;
    struct Index **idx;  /* the indexes to keep up to date on insert / remove */
    int nidx;
} Table;

/* 12 bytes (lookups are cache misses, mostly; an index has a bucket per
   two keys, or more: its pages are most of its memory): the low 32 bits of
   the key's hash (nonzero, see hash_final; a probe compares keys only when
   they agree), a row of the key (packed: its first, or its place in
   `packed`; live: its last, see Index.next), its rows */
typedef struct { uint32_t h; int32_t rep, n; } Bucket;

typedef struct Index {
    Table *t;
    int nkey;
    int key[MAXKEY];
    Bucket *b;
    i64 cap, used;
    int32_t *next;       /* live, keyed: row -> the next row of its key, in a circle (a
                            bucket's rep is its last row, next[rep] its first); nnext rows */
    i64 nnext;
    IdVec all;           /* no key, live table: its rows in insertion order */
    int32_t *packed;     /* static, keyed: the row numbers of the keys of several rows,
                            in bucket order: such a bucket's are packed[rep .. rep + n - 1]
                            (a key of one row: rep is its row number); NULL when every
                            key has one row */
    i64 npacked;
    int direct;          /* packed, one key column: key k's bucket is b[k - lo] (cap: the
                            keys' range), h 1 when it holds rows */
    i64 lo;
    int memo;            /* memo_key / memo_b hold the last lookup (0: none, or the index changed) */
    Bucket *memo_b;
    i64 memo_key[MAXKEY];
} Index;

static inline i64 *row(Table *t, i64 id) { return t->data + id * t->arity; }

/* a row of the bucket's key (of a live index: its first, or a removed one) */
static inline const i64 *bucket_row(Index *ix, Bucket *b) {
    return row(ix->t, ix->packed && b->n > 1 ? ix->packed[b->rep] : b->rep);
}

/* room for `want` rows, the capacity doubled until they fit (amortized
   growth: one copy of the rows per doubling, whatever the batches): -1 out
   of memory */
static int table_grow_rows(Table *t, i64 want) {
    if (want <= t->cap) return 0;
    i64 cap = t->cap ? t->cap : 64;
    while (cap < want) cap *= 2;
    i64 *d = realloc(t->data, sizeof(i64) * (size_t)(cap * (t->arity ? t->arity : 1)));
    if (!d) return -1;
    t->data = d;
    t->cap = cap;
    return 0;
}

static int table_append(Table *t, const i64 *vals) {
    if (t->n == t->cap && table_grow_rows(t, t->n + 1) < 0) return -1;
    if (t->arity) memcpy(row(t, t->n), vals, sizeof(i64) * (size_t)t->arity);
    t->n++;
    return 0;
}

static u64 hash_vals(const i64 *vals, int n) {
    u64 h = 0x12345;
    for (int i = 0; i < n; i++) h = hash_step(h, vals[i]);
    return hash_final(h);
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

static Bucket *index_find(Index *ix, const i64 *key, uint32_t h) {
    if (!ix->cap) return NULL;
    i64 mask = ix->cap - 1;
    for (i64 s = (i64)(h & (u64)mask);; s = (s + 1) & mask) {
        Bucket *b = &ix->b[s];
        if (!b->h) return NULL;
        if (b->h == h && key_matches(ix, bucket_row(ix, b), key)) return b;
    }
}

/* the bucket of key[0..nkey-1], NULL when absent */
static inline Bucket *index_bucket(Index *ix, const i64 *key) {
    if (ix->direct) {
        u64 s = (u64)key[0] - (u64)ix->lo;
        return s < (u64)ix->cap && ix->b[s].h ? &ix->b[s] : NULL;
    }
    return index_find(ix, key, (uint32_t)hash_vals(key, ix->nkey));
}

/* An instruction's lookup: the bucket of the key in registers regs[0..n-1]
   (n: the index's key length), NULL when absent. */
static inline Bucket *index_lookup(Index *ix, const i64 *R, const i64 *regs, int n) {
    int same = ix->memo;
    for (int i = 0; i < n; i++) {
        same &= R[regs[i]] == ix->memo_key[i];
        ix->memo_key[i] = R[regs[i]];
    }
    if (!same) {
        ix->memo_b = index_bucket(ix, ix->memo_key);
        ix->memo = 1;
    }
    return ix->memo_b;
}

/* a live index's buckets grown to `cap` (a power of two, more than it has) */
static int index_grow_to(Index *ix, i64 cap) {
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

static int index_grow(Index *ix) { return index_grow_to(ix, ix->cap ? ix->cap * 2 : 16); }

/* a live index with buckets for `keys` keys at once (no doubling steps, each
   rehashing what is in): -1 out of memory */
static int index_reserve(Index *ix, i64 keys) {
    i64 cap = 16;
    while ((keys + 1) * 2 > cap) cap *= 2;
    return ix->nkey && cap > ix->cap ? index_grow_to(ix, cap) : 0;
}

/* row `id` into bucket s of a live index, after the key's rows (see
   Index.next; room for as many rows as its table has at once): -1 out of memory */
static int bucket_add(Index *ix, i64 s, int32_t id) {
    if (id >= ix->nnext) {
        i64 cap = ix->nnext ? 2 * ix->nnext : 64;
        while (cap <= id || cap < ix->t->cap) cap *= 2;
        int32_t *next = realloc(ix->next, sizeof(int32_t) * (size_t)cap);
        if (!next) return -1;
        ix->next = next;
        ix->nnext = cap;
    }
    Bucket *b = &ix->b[s];
    if (b->n == 0) {   /* (a bucket emptied by removals: its rep is a removed row) */
        ix->next[id] = id;
    } else {
        ix->next[id] = ix->next[b->rep];
        ix->next[b->rep] = id;
    }
    b->rep = id;
    b->n++;
    return 0;
}

/* the bucket of the key of row `rw` (hash h) in b[cap]: its key's, or the
   empty one where it goes */
static inline i64 bucket_of(Table *t, Index *ix, Bucket *b, i64 cap, const i64 *rw, uint32_t h) {
    for (i64 s = (i64)(h & (u64)(cap - 1));; s = (s + 1) & (cap - 1)) {
        if (!b[s].h) return s;
        if (b[s].h == h) {
            const i64 *o = row(t, b[s].rep);
            int same = 1;
            for (int k = 0; k < ix->nkey; k++)
                if (o[ix->key[k]] != rw[ix->key[k]]) { same = 0; break; }
            if (same) return s;
        }
    }
}

static int index_add(Index *ix, int32_t id) {
    if (ix->nkey == 0) return idvec_push(&ix->all, id);
    ix->memo = 0;
    if ((ix->used + 1) * 2 > ix->cap && index_grow(ix) < 0) return -1;
    const i64 *r = row(ix->t, id);
    uint32_t h = (uint32_t)hash_key_of(ix, r);
    i64 s = bucket_of(ix->t, ix, ix->b, ix->cap, r, h);
    if (!ix->b[s].h) {   /* a new key */
        ix->b[s].h = h;
        ix->used++;
    }
    return bucket_add(ix, s, id);
}

static void index_remove(Index *ix, int32_t id) {
    if (ix->nkey == 0) { idvec_remove(&ix->all, id); return; }
    ix->memo = 0;
    const i64 *r = row(ix->t, id);   /* (its key's bucket: a live keyed index has buckets) */
    Bucket *b = &ix->b[bucket_of(ix->t, ix, ix->b, ix->cap, r, (uint32_t)hash_key_of(ix, r))];
    if (!b->n) return;
    if (b->n > 1) {   /* (its row before it in the circle goes on to the row after it) */
        int32_t before = b->rep;
        for (int32_t k = 0; k < b->n && ix->next[before] != id; k++) before = ix->next[before];
        ix->next[before] = ix->next[id];
        if (b->rep == id) b->rep = before;
    }   /* (an emptied bucket keeps a removed row: its values stay readable) */
    b->n--;
}

static void index_free(Index *ix) {
    free(ix->next);
    free(ix->b);
    free(ix->all.v);
    free(ix->packed);
}

/* A bucket array a caller keeps to build indexes in (reused: its pages are
   written once, not once per index) */
typedef struct { Bucket *b; i64 cap; } Scratch;

/* The keys of a packed index placed in hashed buckets: counted in `sc` (as
   many buckets as for a key per row), then moved into buckets of their own,
   as many as the keys need (keys that need them all keep those); slot[r]:
   the bucket of row r's key. -1 out of memory. */
static int index_place_hashed(Index *ix, Scratch *sc, int32_t *slot) {
    Table *t = ix->t;
    i64 cap = 16;
    while (cap < 2 * t->n) cap *= 2;
    if (sc->cap < cap) {
        free(sc->b);
        sc->cap = 0;
        if (!(sc->b = malloc(sizeof(Bucket) * (size_t)cap))) return -1;
        sc->cap = cap;
    }
    Bucket *sb = sc->b;
    memset(sb, 0, sizeof(Bucket) * (size_t)cap);
    i64 used = 0;
    for (i64 r = 0; r < t->n; r++) {
        const i64 *rw = row(t, r);
        uint32_t h = (uint32_t)hash_key_of(ix, rw);
        i64 s = bucket_of(t, ix, sb, cap, rw, h);
        if (!sb[s].h) {
            sb[s].h = h;
            sb[s].rep = (int32_t)r;
            used++;
        }
        sb[s].n++;
        slot[r] = (int32_t)s;
    }
    i64 fcap = 16;
    while (fcap < 2 * used) fcap *= 2;
    ix->used = used;
    if (fcap == cap && sc->cap == cap) {
        /* (the keys need all the buckets they were counted in: those become
           the index's, no copy; the next index counts in a new array) */
        ix->b = sb;
        ix->cap = cap;
        sc->b = NULL;
        sc->cap = 0;
        return 0;
    }
    if (!(ix->b = calloc((size_t)fcap, sizeof(Bucket)))) return -1;
    ix->cap = fcap;
    for (i64 s = 0; s < cap; s++) {   /* (each scratch bucket's rep becomes its new place) */
        if (!sb[s].h) continue;
        i64 f = (i64)(sb[s].h & (u64)(fcap - 1));
        while (ix->b[f].h) f = (f + 1) & (fcap - 1);   /* (the keys are distinct) */
        ix->b[f] = sb[s];
        sb[s].rep = (int32_t)f;
    }
    if (used < t->n)
        for (i64 r = 0; r < t->n; r++) slot[r] = sb[slot[r]].rep;
    return 0;
}

/* The range of the values of column c of t's rows (t->n > 0) when it is
   at most twice the rows (a column of ids): 0 and *lo its least value,
   else -1 (a direct index's buckets are as many as the range) */
static int dense_range(Table *t, int c, i64 *lo, i64 *range) {
    i64 min = row(t, 0)[c], max = min;
    for (i64 r = 1; r < t->n; r++) {
        i64 v = row(t, r)[c];
        if (v < min) min = v;
        if (v > max) max = v;
    }
    u64 span = (u64)max - (u64)min;
    if (span >= 2 * (u64)t->n) return -1;
    *lo = min;
    *range = (i64)span + 1;
    return 0;
}

/* The keys of a direct index (Index.direct) placed: key k in bucket
   k - lo; slot[r]: the bucket of row r's key. 1 (nothing placed) when the
   keys are few against the range: a bucket per value of the range would
   mostly stay empty (rows holding only 0 and 199,999: 200,000 buckets, 2.4
   MB, for two keys), hashed buckets are as many as the keys need. -1 out
   of memory. */
static int index_place_direct(Index *ix, i64 lo, i64 range, int32_t *slot) {
    Table *t = ix->t;
    if (!(ix->b = calloc((size_t)range, sizeof(Bucket)))) return -1;
    ix->cap = range;
    ix->lo = lo;
    ix->direct = 1;
    ix->used = 0;
    for (i64 r = 0; r < t->n; r++) {
        i64 s = row(t, r)[ix->key[0]] - lo;
        Bucket *b = &ix->b[s];
        if (!b->h) {
            b->h = 1;
            b->rep = (int32_t)r;
            ix->used++;
        }
        b->n++;
        slot[r] = (int32_t)s;
    }
    if (ix->used * 4 < range) {
        free(ix->b);
        ix->b = NULL;
        ix->cap = ix->used = ix->lo = 0;
        ix->direct = 0;
        return 1;
    }
    return 0;
}

/* the packed index of a table that does not change while it is read: the
   rows counted per key, then the numbers of those of keys of several rows
   placed in key order (Index.packed), insertion order kept within a key (no
   list per bucket to allocate). Row numbers, not copies of the rows: 4 bytes
   a row, not 8 per column (the rows a lookup reads are rarely far apart in
   the table: a stratum derives a key's tuples together). A key of one
   column of few more values than rows, most of them keys, gets a direct
   index, another hashed buckets (index_place_hashed). -1 out of memory. */
static inline int index_build_packed(Index *ix, Scratch *sc) {   /* (inline: db.c builds them) */
    Table *t = ix->t;
    int32_t *slot = malloc(sizeof(int32_t) * (size_t)(t->n + 1));
    if (!slot) return -1;
    i64 lo, range;
    int rc = ix->nkey == 1 && t->n && dense_range(t, ix->key[0], &lo, &range) == 0
        ? index_place_direct(ix, lo, range, slot) : 1;
    if (rc == 1) rc = index_place_hashed(ix, sc, slot);
    if (rc < 0 || ix->used == t->n) {
        free(slot);
        return rc;
    }
    i64 at = 0;   /* each key's first place in rep; while placing, its next place */
    for (i64 s = 0; s < ix->cap; s++) {
        Bucket *b = &ix->b[s];
        if (b->n < 2) continue;
        b->rep = (int32_t)at;
        at += b->n;
    }
    if (!(ix->packed = malloc(sizeof(int32_t) * (size_t)(at + 1)))) { free(slot); return -1; }
    ix->npacked = at;
    for (i64 r = 0; r < t->n; r++) {
        Bucket *b = &ix->b[slot[r]];
        if (b->n > 1) ix->packed[b->rep++] = (int32_t)r;
    }
    for (i64 s = 0; s < ix->cap; s++) {
        Bucket *b = &ix->b[s];
        if (b->n > 1) b->rep -= b->n;
    }
    free(slot);
    return 0;
}

/* the plain reference of index_build_packed (a test checks that they give
   the same results): row by row, as a live index is kept. -1 out of memory */
static inline int index_build_plain(Index *ix) {   /* (inline: db.c builds them) */
    for (i64 r = 0; r < ix->t->n; r++)
        if (index_add(ix, (int32_t)r) < 0) return -1;
    return 0;
}

/* live tables: the set of present rows */
static i64 set_find(Table *t, const i64 *vals, u64 h) {
    if (!t->set_cap) return -1;
    i64 mask = t->set_cap - 1;
    for (i64 s = (i64)(h & (u64)mask);; s = (s + 1) & mask) {
        int32_t id = t->set[s].id;
        if (id == -1) return -1;
        if (id >= 0 && t->set[s].h == (uint32_t)h && memcmp(row(t, id), vals, sizeof(i64) * (size_t)t->arity) == 0)
            return id;
    }
}

static int set_resize(Table *t, i64 cap) {
    SetSlot *ns = malloc(sizeof(SetSlot) * (size_t)cap);
    if (!ns) return -1;
    memset(ns, 0xff, sizeof(SetSlot) * (size_t)cap);
    i64 used = 0;
    for (i64 i = 0; i < t->set_cap; i++) {
        if (t->set[i].id < 0) continue;
        i64 s = (i64)(t->set[i].h & (u64)(cap - 1));   /* (cap <= 2^32: rows are int32 numbers) */
        while (ns[s].id != -1) s = (s + 1) & (cap - 1);
        ns[s] = t->set[i];
        used++;
    }
    free(t->set);
    t->set = ns;
    t->set_cap = cap;
    t->set_used = used;
    return 0;
}

static int set_grow(Table *t) { return set_resize(t, t->set_cap ? t->set_cap * 2 : 64); }

/* set room for `extra` more entries at once (no doubling steps, each
   rehashing what is in): -1 out of memory */
static int set_reserve(Table *t, i64 extra) {
    i64 cap = t->set_cap ? t->set_cap : 64;
    while ((t->set_used + extra + 1) * 2 > cap) cap *= 2;
    return cap > t->set_cap ? set_resize(t, cap) : 0;
}

/* room for `extra` more rows (and their set entries) at once: no doubling
   steps (each copies the rows, rehashes the set) while a batch goes in */
static inline int table_reserve(Table *t, i64 extra) {
    i64 want = t->n + extra;   /* (exactly: a batch of facts, loaded once) */
    if (want > t->cap) {
        i64 *d = realloc(t->data, sizeof(i64) * (size_t)(want * (t->arity ? t->arity : 1)));
        if (!d) return -1;
        t->data = d;
        t->cap = want;
    }
    return set_reserve(t, extra);
}

/* row `id` (hash h), not in the set yet, into the set (which has room) and
   the watched indexes: -1 out of memory */
static inline int set_add(Table *t, int32_t id, u64 h) {   /* (inline: every insert) */
    i64 mask = t->set_cap - 1;
    i64 s = (i64)(h & (u64)mask);
    while (t->set[s].id >= 0) s = (s + 1) & mask;   /* (a removed slot is reused) */
    if (t->set[s].id == -1) t->set_used++;
    t->set[s] = (SetSlot){id, (uint32_t)h};
    t->count++;
    for (int i = 0; i < t->nidx; i++)
        if (index_add(t->idx[i], id) < 0) return -1;
    return 0;
}

/* a tuple of hash h known not to be in the table (its lookup failed) into
   it: its row number, -1 out of memory */
static inline i64 table_insert_new(Table *t, const i64 *vals, u64 h) {
    if ((t->set_used + 1) * 2 > t->set_cap && set_grow(t) < 0) return -1;
    if (table_append(t, vals) < 0) return -1;
    int32_t id = (int32_t)(t->n - 1);
    return set_add(t, id, h) < 0 ? -1 : id;
}

/* insert a tuple: its row number, -1 when already there, -2 out of memory */
static i64 table_insert(Table *t, const i64 *vals) {
    u64 h = hash_vals(vals, t->arity);
    if (set_find(t, vals, h) >= 0) return -1;
    i64 id = table_insert_new(t, vals, h);
    return id < 0 ? -2 : id;
}

/* Rows from..n-1 were appended with table_append (not in the set, nor in
   the watched indexes): each goes in as table_insert would put it, or, when
   the table already holds it, goes (the rows after it move down: the order
   is table_insert's). The set gets room for all at once (no doubling steps,
   each rehashing what is in). -1 out of memory. */
static inline int table_absorb(Table *t, i64 from) {   /* (inline: ranked.c does not defer) */
    i64 n = t->n;
    if (set_reserve(t, n - from) < 0) return -1;
    t->n = from;
    for (i64 r = from; r < n; r++) {
        i64 *vals = row(t, r);
        u64 h = hash_vals(vals, t->arity);
        if (set_find(t, vals, h) >= 0) continue;
        int32_t id = (int32_t)t->n;
        if (id != r) memmove(row(t, id), vals, sizeof(i64) * (size_t)t->arity);
        t->n++;
        if (set_add(t, id, h) < 0) return -1;
    }
    return 0;
}

static inline void table_remove(Table *t, int32_t id) {   /* (inline: db.c never removes) */
    const i64 *vals = row(t, id);
    u64 h = hash_vals(vals, t->arity);
    i64 mask = t->set_cap - 1;
    for (i64 s = (i64)(h & (u64)mask);; s = (s + 1) & mask) {
        if (t->set[s].id == -1) return;
        if (t->set[s].id == id) { t->set[s].id = -2; break; }
    }
    t->count--;
    for (int i = 0; i < t->nidx; i++) index_remove(t->idx[i], id);
}

static void table_free(Table *t) {
    free(t->data);
    free(t->set);
    free(t->idx);
}

/* index `ix` kept up to date as rows go into `t`: 0, -1 out of memory */
static int table_watch(Table *t, struct Index *ix) {
    struct Index **n = realloc(t->idx, sizeof(struct Index *) * (size_t)(t->nidx + 1));
    if (!n) return -1;
    t->idx = n;
    t->idx[t->nidx++] = ix;
    return 0;
}

#endif
