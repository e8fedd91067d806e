/* crashlens._lines: which lines of a chunk of log text may matter, found in native code.

   A line may matter when it holds a marker literal, a control character (what prefilter._CONTROLS
   lists) or a dotted exception name's `.X` / `._X` (prefilter.DOTTED_NAME). Both functions answer that
   for a whole chunk with (newlines, indices, starts): the number of newlines in the chunk and, for
   every line that may matter, its index in the chunk and the byte offset where it starts.

   lines_of_interest(chunk, offsets, portable=False)
       `offsets` are the ascending byte offsets where another searcher (ahocorasick_rs) found a
       marker; this pass counts the newlines, finds control characters and dotted names, and maps
       every hit to its line.

   Finder(markers).locate(chunk, portable=False, path=None)
       The same result with the markers found in the same pass, so the bytes are read once instead of
       twice (the two passes cost about the same). A Teddy-style filter flags the positions where a
       marker may start: the markers are put in 8 buckets, and for each of five of their bytes (the
       first three, the sixth and the ninth, FP_AT) a table says which buckets allow a byte there (the AVX2 loop
       looks a byte up by its two nibbles with byte shuffles, the AVX-512 one by its low 7 bits with
       byte permutes, which is about twice as fast). Only flagged positions are compared with the markers, byte for byte, and only in
       lines not found yet. PATHS names the loops this machine can run, fastest first; `path` picks
       one, `portable=True` the plain C one (the tests run them all).

   drop_known(chunk, indices, starts, keys) and shape_key(line)
       Drop from such a result the lines whose shape (digits read as '0') the caller has judged
       already: keys of line shapes that cannot matter, so a line printed a million times costs the
       Python side one look (see locate.Locator.known).

   Both take any chunk (a last line without '\n' counts as a line), release the GIL while they scan,
   and use AVX2 where the CPU has it (HAVE_AVX2). Python's own bytes.count and bytes.translate run
   about four times slower than these loops; see locate.py and prefilter.py for how the result is used
   and README "Performance" for the figures. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define BLOCK 64

static inline int is_control(unsigned char c)
{
    return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
}

static inline int is_upper(unsigned char c)
{
    return (unsigned char)(c - 'A') < 26;
}

/* Grows a pair of Py_ssize_t arrays; returns 0 on allocation failure. */
typedef struct {
    Py_ssize_t *index, *start;
    Py_ssize_t len, cap;
} Hits;

static int hits_add(Hits *h, Py_ssize_t index, Py_ssize_t start)
{
    if (h->len == h->cap) {
        Py_ssize_t cap = h->cap ? h->cap * 2 : 64;
        Py_ssize_t *a = PyMem_RawRealloc(h->index, cap * sizeof(Py_ssize_t));
        if (!a)
            return 0;
        h->index = a;
        Py_ssize_t *b = PyMem_RawRealloc(h->start, cap * sizeof(Py_ssize_t));
        if (!b)
            return 0;
        h->start = b;
        h->cap = cap;
    }
    h->index[h->len] = index;
    h->start[h->len] = start;
    h->len++;
    return 1;
}

static Py_ssize_t line_start(const unsigned char *s, Py_ssize_t pos)
{
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    /* glibc's memrchr reads a word or a vector at a time: a hit far into a long line looks back fast */
    const unsigned char *nl = pos > 0 ? memrchr(s, '\n', (size_t)pos) : NULL;
    return nl ? nl - s + 1 : 0;
#else
    while (pos > 0 && s[pos - 1] != '\n')
        pos--;
    return pos;
#endif
}

/* Byte by byte over s[from, to): newlines counted into *nl, lines of interest added to h.
   Bytes past `to` (up to n) are only read as the lookahead of a dotted name. */
static int scan_slow(const unsigned char *s, Py_ssize_t n, Py_ssize_t from, Py_ssize_t to,
                     const Py_ssize_t *offs, Py_ssize_t noffs, Py_ssize_t *k, Py_ssize_t *nl, Hits *h)
{
    for (Py_ssize_t i = from; i < to; i++) {
        unsigned char c = s[i];
        int hit = is_control(c);
        if (c == '.' && i + 1 < n)
            hit |= is_upper(s[i + 1]) || (s[i + 1] == '_' && i + 2 < n && is_upper(s[i + 2]));
        while (*k < noffs && offs[*k] <= i) {
            if (offs[*k] == i)
                hit = 1;
            (*k)++;
        }
        /* A line is added once, however much of interest it holds (its start is looked for once). */
        if (hit && !(h->len && h->index[h->len - 1] == *nl) && !hits_add(h, *nl, line_start(s, i)))
            return 0;
        if (c == '\n')
            (*nl)++;
    }
    return 1;
}

/* From block start i, skip whole blocks (each with two bytes of lookahead) that hold no control
   character, no dotted name and no byte at or after `limit`, adding their newlines to *nl; returns
   where the first other block starts (or where too few bytes are left for a whole block). The
   inner loop has no branches, so the compiler vectorizes it. */
static Py_ssize_t clean_blocks_portable(const unsigned char *s, Py_ssize_t n, Py_ssize_t i, Py_ssize_t limit,
                                        Py_ssize_t *nl)
{
    Py_ssize_t total = 0;
    for (; i + BLOCK + 2 <= n && i + BLOCK <= limit; i += BLOCK) {
        const unsigned char *b = s + i;
        /* Byte-wide accumulators keep every lane a byte (BLOCK < 256). */
        unsigned char count = 0, flag = 0;
        for (int j = 0; j < BLOCK; j++) {
            unsigned char c = b[j], d = b[j + 1], e = b[j + 2];
            count += c == '\n';
            flag |= ((c < 0x20) & (c != '\t') & (c != '\n') & (c != '\r')) | (c == 0x7f);
            flag |= (c == '.') & (((unsigned char)(d - 'A') < 26) | ((d == '_') & ((unsigned char)(e - 'A') < 26)));
        }
        if (flag)
            break;
        total += count;
    }
    *nl += total;
    return i;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX2_PATH 1

/* The same as clean_blocks_portable, 32 bytes at a time with AVX2 (BLOCK is two vectors). */
__attribute__((target("avx2,popcnt")))
static Py_ssize_t clean_blocks_avx2(const unsigned char *s, Py_ssize_t n, Py_ssize_t i, Py_ssize_t limit,
                                    Py_ssize_t *nl)
{
    const __m256i newline = _mm256_set1_epi8('\n'), tab = _mm256_set1_epi8('\t'), cr = _mm256_set1_epi8('\r');
    const __m256i c1f = _mm256_set1_epi8(0x1f), del = _mm256_set1_epi8(0x7f), dot = _mm256_set1_epi8('.');
    const __m256i cap = _mm256_set1_epi8('A'), c25 = _mm256_set1_epi8(25), under = _mm256_set1_epi8('_');
    Py_ssize_t total = 0;
    for (; i + BLOCK + 2 <= n && i + BLOCK <= limit; i += BLOCK) {
        unsigned flag = 0;
        Py_ssize_t count = 0;
        for (int j = 0; j < BLOCK; j += 32) {
            const unsigned char *b = s + i + j;
            __m256i c = _mm256_loadu_si256((const __m256i *)b);
            __m256i d = _mm256_loadu_si256((const __m256i *)(b + 1));
            __m256i e = _mm256_loadu_si256((const __m256i *)(b + 2));
            __m256i nlm = _mm256_cmpeq_epi8(c, newline);
            count += __builtin_popcount((unsigned)_mm256_movemask_epi8(nlm));
            __m256i low = _mm256_cmpeq_epi8(_mm256_min_epu8(c, c1f), c); /* c <= 0x1f */
            __m256i ok = _mm256_or_si256(_mm256_or_si256(nlm, _mm256_cmpeq_epi8(c, tab)), _mm256_cmpeq_epi8(c, cr));
            __m256i hit = _mm256_or_si256(_mm256_andnot_si256(ok, low), _mm256_cmpeq_epi8(c, del));
            __m256i dd = _mm256_sub_epi8(d, cap), ee = _mm256_sub_epi8(e, cap);
            __m256i dup = _mm256_cmpeq_epi8(_mm256_min_epu8(dd, c25), dd); /* d is a capital */
            __m256i eup = _mm256_cmpeq_epi8(_mm256_min_epu8(ee, c25), ee);
            __m256i next = _mm256_or_si256(dup, _mm256_and_si256(_mm256_cmpeq_epi8(d, under), eup));
            hit = _mm256_or_si256(hit, _mm256_and_si256(_mm256_cmpeq_epi8(c, dot), next));
            flag |= (unsigned)_mm256_movemask_epi8(hit);
        }
        if (flag)
            break;
        total += count;
    }
    *nl += total;
    return i;
}
#endif

typedef Py_ssize_t (*clean_blocks_fn)(const unsigned char *, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t *);
static clean_blocks_fn clean_blocks = clean_blocks_portable;

static PyObject *to_list(const Py_ssize_t *a, Py_ssize_t n)
{
    PyObject *list = PyList_New(n);
    if (!list)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyLong_FromSsize_t(a[i]);
        if (!v) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

static PyObject *lines_of_interest(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer view;
    PyObject *offsets;
    int portable = 0; /* the loop used where AVX2 is missing: the tests run it here too */
    if (!PyArg_ParseTuple(args, "y*O|p", &view, &offsets, &portable))
        return NULL;
    PyObject *seq = PySequence_Fast(offsets, "offsets must be a sequence of int");
    if (!seq) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Py_ssize_t noffs = PySequence_Fast_GET_SIZE(seq);
    Py_ssize_t *offs = PyMem_RawMalloc((noffs ? noffs : 1) * sizeof(Py_ssize_t));
    if (!offs) {
        Py_DECREF(seq);
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < noffs; i++) {
        offs[i] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(seq, i));
        if (offs[i] == -1 && PyErr_Occurred()) {
            PyMem_RawFree(offs);
            Py_DECREF(seq);
            PyBuffer_Release(&view);
            return NULL;
        }
        if (i && offs[i] < offs[i - 1]) {
            PyMem_RawFree(offs);
            Py_DECREF(seq);
            PyBuffer_Release(&view);
            PyErr_SetString(PyExc_ValueError, "offsets must be in ascending order");
            return NULL;
        }
    }
    Py_DECREF(seq);

    const unsigned char *s = view.buf;
    Py_ssize_t n = view.len, nl = 0, k = 0, i = 0;
    Hits h = {NULL, NULL, 0, 0};
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    while (ok) {
        /* Clean blocks are skipped at memory speed; a block with anything of interest (or a marker
           offset) is gone over again byte by byte. */
        Py_ssize_t limit = k < noffs ? offs[k] : n;
        i = (portable ? clean_blocks_portable : clean_blocks)(s, n, i, limit, &nl);
        if (i + BLOCK + 2 > n)
            break;
        ok = scan_slow(s, n, i, i + BLOCK, offs, noffs, &k, &nl, &h);
        i += BLOCK;
    }
    if (ok)
        ok = scan_slow(s, n, i, n, offs, noffs, &k, &nl, &h);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(offs);
    PyBuffer_Release(&view);
    if (!ok) {
        PyMem_RawFree(h.index);
        PyMem_RawFree(h.start);
        return PyErr_NoMemory();
    }
    PyObject *idx = to_list(h.index, h.len);
    PyObject *st = idx ? to_list(h.start, h.len) : NULL;
    PyMem_RawFree(h.index);
    PyMem_RawFree(h.start);
    if (!st) {
        Py_XDECREF(idx);
        return NULL;
    }
    return Py_BuildValue("nNN", nl, idx, st);
}

/* ---- Finder: the markers searched in the same pass ---------------------------------------------- */

#define MAX_MARKERS 128 /* bucket bounds are unsigned char (FinderObject.first) */
#define BUCKETS 8
/* The bytes of a marker the filter looks at: its first three, its sixth and its ninth. Three alone
   let every `torch.`, `function`/`functools` and `_dynamo.` of a torch log through wherever a marker
   starts with `tor`, `fun` or `_dy` (`torch 2.`, `function: '`, `_dynamo.exc`); the sixth byte tells
   most of them apart, the ninth `function: '` from `function` and `Dynamo produced` from `Dynamo
   detected`. Measured on the 300 MB benchmark logs (positions let through per MB, bucket tables exact
   to 7 bits; traffic, start-up loop, torch warnings): bytes 0-2 gave 2,000, 14,600, 21,900; 0-2 and 3
   gave 270, 8,300, 15,700; 0-2 and 5 gave 270, 9,900, 11,400; 0-2, 5 and 8 gave 2, 6,500, 7,000. The
   AVX2 loop looks at the first four of them (its byte shuffles cost more; interesting() looks at all). */
#define FP 5
static const int FP_AT[FP] = {0, 1, 2, 5, 8};
#define REACH 8 /* FP_AT's last: a block is filtered with this many bytes after it */

#if defined(__GNUC__) || defined(__clang__)
static inline int ctz64(uint64_t x) { return __builtin_ctzll(x); }
static inline int clz64(uint64_t x) { return __builtin_clzll(x); }
static inline int popcount64(uint64_t x) { return __builtin_popcountll(x); }
#else
static inline int ctz64(uint64_t x)
{
    int k = 0;
    while (!(x & 1)) {
        x >>= 1;
        k++;
    }
    return k;
}
static inline int clz64(uint64_t x)
{
    int k = 0;
    while (!(x & ((uint64_t)1 << 63))) {
        x <<= 1;
        k++;
    }
    return k;
}
static inline int popcount64(uint64_t x)
{
    int k = 0;
    for (; x; x &= x - 1)
        k++;
    return k;
}
#endif

typedef struct {
    const unsigned char *bytes;
    Py_ssize_t len;
    uint64_t head, mask; /* the first min(len, 8) bytes as loaded by memcpy, and which of them count */
} Marker;

typedef struct {
    PyObject_HEAD
    /* The filter. Bucket b allows byte x at byte FP_AT[j] of a marker start when bit b of fp[j][x] is
       set: one of its markers has that byte there, or is too short to reach it. The AVX2 loop looks a
       byte up by its nibbles: lo[j][x & 15] and hi[j][x >> 4] both have bit b set (what fp allows, and
       maybe more). */
    unsigned char lo[FP][16], hi[FP][16], fp[FP][256];
    /* The AVX2 loop may look the low nibble up with the byte itself (a byte >= 0x80 gives no bucket)
       when every marker is at least 3 bytes long and their first 3 bytes are ASCII (the sixth byte is
       always masked). */
    int ascii;
    /* fp folded for the AVX-512 loop, whose byte lookups use the low 7 bits of a byte: an entry allows
       what fp allows for either byte with those bits. */
    unsigned char wide[FP][128];
    /* For the portable loop: fp in the low byte, and in the high byte bit 0 = control character (at
       position 0; any byte after it), bit 1 = '.' followed by a byte from 0x40 to 0x5f. A position
       may be of interest where the three entries have a bit in common. */
    uint16_t any[FP][256];
    unsigned char first[BUCKETS + 1]; /* bucket b holds markers[first[b]] .. markers[first[b + 1] - 1] */
    Marker markers[MAX_MARKERS];
    unsigned char *store; /* the markers' bytes */
} FinderObject;

/* The lines found so far and where the scan is. */
typedef struct {
    const FinderObject *f;
    const unsigned char *s;
    Py_ssize_t n;
    Py_ssize_t nl;   /* newlines before the block being looked at */
    Py_ssize_t last; /* the index of the last line found, -1 before the first */
    Hits h;
    /* Shape keys (ascending) of lines to leave out (known) and to give apart (aside), see found_line. */
    const uint64_t *known, *aside;
    Py_ssize_t nknown, naside;
    Hits aside_h;
    /* Lines whose verdict (found_line) is known in this scan, by their exact bytes: NULL until needed.
       A torch warning printed by every process, every round, is found again and again (the warnings
       benchmark: 528,000 lines found, ~100 distinct texts a 2 MB range); comparing its bytes with the
       last line of its slot costs a fifth of computing its shape key. */
    struct SeenLine *seen;
} Scan;

/* A line looked at in this scan: where its bytes are (in the scan's own chunk, which does not move while
   it is scanned), and 0 = found, 1 = left out (known), 2 = set apart. */
typedef struct SeenLine {
    const unsigned char *p;
    Py_ssize_t len;
    int verdict;
} SeenLine;
#define SEEN_BITS 8
#define SEEN_MIN 16 /* shorter lines are cheap to key */

/* Does a marker start at s[pos]? `buckets` are those the filter let through there. */
static int marker_at(const FinderObject *f, const unsigned char *s, Py_ssize_t n, Py_ssize_t pos,
                     unsigned buckets)
{
    Py_ssize_t room = n - pos;
    uint64_t head = 0;
    if (room >= 8)
        memcpy(&head, s + pos, 8);
    while (buckets) {
        int b = ctz64(buckets);
        buckets &= buckets - 1;
        for (int k = f->first[b]; k < f->first[b + 1]; k++) {
            const Marker *m = &f->markers[k];
            if (m->len > room)
                continue;
            if (room >= 8) {
                if ((head & m->mask) == m->head && (m->len <= 8 || !memcmp(s + pos + 8, m->bytes + 8, m->len - 8)))
                    return 1;
            } else if (!memcmp(s + pos, m->bytes, m->len)) {
                return 1;
            }
        }
    }
    return 0;
}

/* Exactly: does the byte at pos make its line one of interest? */
static int interesting(const FinderObject *f, const unsigned char *s, Py_ssize_t n, Py_ssize_t pos)
{
    unsigned char c = s[pos];
    if (is_control(c))
        return 1;
    if (c == '.' && pos + 1 < n && (is_upper(s[pos + 1]) || (s[pos + 1] == '_' && pos + 2 < n && is_upper(s[pos + 2]))))
        return 1;
    unsigned buckets = f->fp[0][c];
    for (int j = 1; j < FP && buckets; j++)
        if (pos + FP_AT[j] < n)
            buckets &= f->fp[j][s[pos + FP_AT[j]]];
    return buckets && marker_at(f, s, n, pos, buckets);
}

static uint64_t shape_key_of(const unsigned char *s, Py_ssize_t n, int *control);
static int key_known(const uint64_t *keys, Py_ssize_t n, uint64_t k);

/* Line `line`, starting at `start`, holds a byte of interest at `pos`: add it to the lines found, or
   to those set aside, or leave it out (its shape key is known); returns where the line ends (its
   newline, or the chunk's end), which is where the scan can go on, or -1 when out of memory. */
static Py_ssize_t found_line(Scan *sc, Py_ssize_t line, Py_ssize_t start, Py_ssize_t pos)
{
    const unsigned char *nl = memchr(sc->s + pos, '\n', (size_t)(sc->n - pos));
    Py_ssize_t end = nl ? nl - sc->s : sc->n;
    Hits *to = &sc->h;
    sc->last = line;
    if (sc->nknown || sc->naside) {
        const unsigned char *p = sc->s + start;
        Py_ssize_t len = end - start;
        SeenLine *slot = NULL;
        int verdict = -1;
        if (len >= SEEN_MIN) {
            if (sc->seen == NULL)
                sc->seen = PyMem_RawCalloc((size_t)1 << SEEN_BITS, sizeof(SeenLine)); /* NULL: no memo */
            if (sc->seen != NULL) {
                uint64_t a, b;
                memcpy(&a, p, 8);
                memcpy(&b, p + len - 8, 8);
                uint64_t h = (a ^ (b * 0x9E3779B97F4A7C15ull) ^ (uint64_t)len) * 0xFF51AFD7ED558CCDull;
                slot = &sc->seen[h >> (64 - SEEN_BITS)];
                if (slot->len == len && !memcmp(slot->p, p, (size_t)len))
                    verdict = slot->verdict;
            }
        }
        if (verdict < 0) {
            int control;
            uint64_t k = shape_key_of(p, len, &control);
            verdict = control ? 0 : key_known(sc->known, sc->nknown, k) ? 1 : key_known(sc->aside, sc->naside, k) ? 2 : 0;
            if (slot != NULL) {
                slot->p = p;
                slot->len = len;
                slot->verdict = verdict;
            }
        }
        if (verdict == 1)
            return end;
        if (verdict == 2)
            to = &sc->aside_h;
    }
    return hits_add(to, line, start) ? end : -1;
}

/* One 64-byte block at i: bit k of `maybe` is set where s[i + k] may be of interest (a superset of
   the bytes that are), bit k of `nlm` where s[i + k] is a newline. Each line that holds a byte of
   interest is found once, in order (found_line); sc->nl is left as it was. Returns where the scan goes
   on: the next block, or the newline of a line found here that ends past it (nothing else in a line
   found needs a look, and the blocks it spans hold no newline); -1 when out of memory. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline)) /* into the AVX loops, whose popcnt target makes popcount64 one instruction:
                                  called, it went to libgcc's __popcountdi2 (7% of the pass on warnings) */
#endif
static inline Py_ssize_t block_hits(Scan *sc, Py_ssize_t i, uint64_t maybe, uint64_t nlm)
{
    maybe &= ~nlm; /* a newline is never of interest (the filters may let one through) */
    while (maybe) {
        int k = ctz64(maybe);
        uint64_t before = nlm & (((uint64_t)1 << k) - 1);
        Py_ssize_t line = sc->nl + popcount64(before);
        if (line != sc->last && interesting(sc->f, sc->s, sc->n, i + k)) {
            Py_ssize_t start = before ? i + 64 - clz64(before) : line_start(sc->s, i);
            Py_ssize_t end = found_line(sc, line, start, i + k);
            if (end < 0)
                return -1;
            if (end > i + BLOCK)
                return end;
        }
        if (line == sc->last) {
            /* The rest of this line in the block needs no look: skip to its newline. */
            uint64_t after = nlm & ~((((uint64_t)1) << k) - 1);
            maybe = after ? maybe & ~(((after & (0 - after)) << 1) - 1) : 0;
        } else {
            maybe &= maybe - 1;
        }
    }
    return i + BLOCK;
}

/* Byte by byte from `from` to the end of the chunk. */
static int scan_tail(Scan *sc, Py_ssize_t from)
{
    const unsigned char *s = sc->s;
    for (Py_ssize_t pos = from; pos < sc->n; pos++) {
        if (s[pos] == '\n') {
            sc->nl++;
        } else if (sc->nl != sc->last && interesting(sc->f, s, sc->n, pos)) {
            Py_ssize_t end = found_line(sc, sc->nl, line_start(s, pos), pos);
            if (end < 0)
                return 0;
            pos = end - 1; /* on to the line's newline */
        }
    }
    return 1;
}

/* The whole blocks (each with REACH bytes after it to look at) without SIMD; returns where they end.
   A block is first looked at for anything at all, and only then bit by bit. */
static Py_ssize_t scan_blocks_portable(Scan *sc, int *ok)
{
    const FinderObject *f = sc->f;
    const unsigned char *s = sc->s;
    Py_ssize_t i = 0;
    for (; i + BLOCK + REACH <= sc->n; i += BLOCK) {
        const unsigned char *b = s + i;
        unsigned any = 0, count = 0;
        for (int k = 0; k < BLOCK; k++) {
            any |= f->any[0][b[k]] & f->any[1][b[k + 1]] & f->any[2][b[k + 2]] & f->any[3][b[k + 5]] &
                   f->any[4][b[k + 8]];
            count += b[k] == '\n';
        }
        if (any) {
            uint64_t nlm = 0, maybe = 0;
            for (int k = 0; k < BLOCK; k++) {
                nlm |= (uint64_t)(b[k] == '\n') << k;
                maybe |= (uint64_t)((f->any[0][b[k]] & f->any[1][b[k + 1]] & f->any[2][b[k + 2]] &
                                     f->any[3][b[k + 5]] & f->any[4][b[k + 8]]) != 0) << k;
            }
            Py_ssize_t next = block_hits(sc, i, maybe, nlm);
            if (next < 0) {
                *ok = 0;
                return i;
            }
            if (next > i + BLOCK) { /* past a line found: its blocks hold no newline */
                sc->nl += count;
                i = next - BLOCK;
                continue;
            }
        }
        sc->nl += count;
    }
    return i;
}

#ifdef HAVE_AVX2_PATH
/* The filter over 32 bytes at b (reading up to b + 36): a non-zero byte where a marker may start, a
   control character is, or a '.' is followed by a byte from 0x40 to 0x5f (a dotted name's capital or
   '_'). ASCII: see FinderObject.ascii. */
__attribute__((target("avx2,popcnt"), always_inline))
static inline __m256i maybe32(const unsigned char *b, int ascii, __m256i nib,
                              __m256i l0, __m256i h0, __m256i l1, __m256i h1, __m256i l2, __m256i h2,
                              __m256i l3, __m256i h3, __m256i lc, __m256i hc, __m256i hd)
{
    __m256i c = _mm256_loadu_si256((const __m256i *)b);
    __m256i d = _mm256_loadu_si256((const __m256i *)(b + 1));
    __m256i e = _mm256_loadu_si256((const __m256i *)(b + 2));
    __m256i g = _mm256_loadu_si256((const __m256i *)(b + 5));
    __m256i ch = _mm256_and_si256(_mm256_srli_epi16(c, 4), nib);
    __m256i dh = _mm256_and_si256(_mm256_srli_epi16(d, 4), nib);
    __m256i eh = _mm256_and_si256(_mm256_srli_epi16(e, 4), nib);
    __m256i gh = _mm256_and_si256(_mm256_srli_epi16(g, 4), nib), gl = _mm256_and_si256(g, nib);
    __m256i cl = c, dl = d, el = e;
    if (!ascii) {
        cl = _mm256_and_si256(c, nib);
        dl = _mm256_and_si256(d, nib);
        el = _mm256_and_si256(e, nib);
    }
    __m256i t0 = _mm256_and_si256(_mm256_shuffle_epi8(l0, cl), _mm256_shuffle_epi8(h0, ch));
    __m256i t1 = _mm256_and_si256(_mm256_shuffle_epi8(l1, dl), _mm256_shuffle_epi8(h1, dh));
    __m256i t2 = _mm256_and_si256(_mm256_shuffle_epi8(l2, el), _mm256_shuffle_epi8(h2, eh));
    __m256i t3 = _mm256_and_si256(_mm256_shuffle_epi8(l3, gl), _mm256_shuffle_epi8(h3, gh));
    __m256i t = _mm256_and_si256(_mm256_and_si256(t0, t1), _mm256_and_si256(t2, t3));
    /* Control characters and dots, classified by nibbles the same way (see CLASS_LO); c itself indexes
       the low-nibble table since every class byte is below 0x80. */
    __m256i k = _mm256_and_si256(_mm256_shuffle_epi8(lc, c), _mm256_shuffle_epi8(hc, ch));
    k = _mm256_and_si256(k, _mm256_shuffle_epi8(hd, dh));
    return _mm256_or_si256(t, k);
}

/* Classes by nibble: bit 0 = control with high nibble 0, bit 1 = control with high nibble 1, bit 2 =
   0x7f, bit 3 = '.'; the class of c is CLASS_LO[c & 15] & CLASS_HI[c >> 4], kept only when
   NEXT_HI[d >> 4] of the next byte d allows it (a dot needs 0x40 to 0x5f after it). */
static const unsigned char CLASS_LO[16] = {0x3, 0x3, 0x3, 0x3, 0x3, 0x3, 0x3, 0x3, 0x3, 0x2, 0x2, 0x3, 0x3, 0x2, 0xb, 0x7};
static const unsigned char CLASS_HI[16] = {0x1, 0x2, 0x8, 0, 0, 0, 0, 0x4, 0, 0, 0, 0, 0, 0, 0, 0};
static const unsigned char NEXT_HI[16] = {0x7, 0x7, 0x7, 0x7, 0xf, 0xf, 0x7, 0x7, 0x7, 0x7, 0x7, 0x7, 0x7, 0x7, 0x7, 0x7};

__attribute__((target("avx2,popcnt"), always_inline))
static inline Py_ssize_t scan_blocks_avx2_(Scan *sc, int *ok, int ascii)
{
    const FinderObject *f = sc->f;
    const unsigned char *s = sc->s;
    Py_ssize_t n = sc->n, nl = sc->nl, i = 0;
#define TABLE(t) _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(t)))
    const __m256i l0 = TABLE(f->lo[0]), h0 = TABLE(f->hi[0]), l1 = TABLE(f->lo[1]), h1 = TABLE(f->hi[1]);
    const __m256i l2 = TABLE(f->lo[2]), h2 = TABLE(f->hi[2]), l3 = TABLE(f->lo[3]), h3 = TABLE(f->hi[3]);
    const __m256i lc = TABLE(CLASS_LO), hc = TABLE(CLASS_HI), hd = TABLE(NEXT_HI);
#undef TABLE
    const __m256i nib = _mm256_set1_epi8(0x0f), newline = _mm256_set1_epi8('\n'), zero = _mm256_setzero_si256();
    for (; i + BLOCK + REACH <= n; i += BLOCK) {
        const unsigned char *b = s + i;
        __m256i m0 = maybe32(b, ascii, nib, l0, h0, l1, h1, l2, h2, l3, h3, lc, hc, hd);
        __m256i m1 = maybe32(b + 32, ascii, nib, l0, h0, l1, h1, l2, h2, l3, h3, lc, hc, hd);
        uint64_t nlm = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)b), newline));
        nlm |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(b + 32)), newline)) << 32;
        __m256i m = _mm256_or_si256(m0, m1);
        if (!_mm256_testz_si256(m, m)) {
            uint64_t maybe = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(m0, zero));
            maybe |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(m1, zero)) << 32;
            sc->nl = nl;
            Py_ssize_t next = block_hits(sc, i, ~maybe, nlm);
            if (next < 0) {
                *ok = 0;
                return i;
            }
            if (next > i + BLOCK) { /* past a line found: its blocks hold no newline */
                nl += _mm_popcnt_u64(nlm);
                i = next - BLOCK;
                continue;
            }
        }
        nl += _mm_popcnt_u64(nlm);
    }
    sc->nl = nl;
    return i;
}

__attribute__((target("avx2,popcnt")))
static Py_ssize_t scan_blocks_avx2(Scan *sc, int *ok)
{
    return sc->f->ascii ? scan_blocks_avx2_(sc, ok, 1) : scan_blocks_avx2_(sc, ok, 0);
}

/* The AVX-512 loop needs a compiler that knows AVX-512 VBMI (GCC 6, Clang 4); with an older one the
   extension still builds, with the AVX2 loop. */
#if (defined(__clang__) && __clang_major__ >= 4) || (!defined(__clang__) && __GNUC__ >= 6)
#define HAVE_AVX512_PATH 1

/* Control characters and dots for the AVX-512 loop, by byte (filled in at module init): bit 0 of
   WIDE_CLASS[c] = control character, bit 1 = '.'; bit 1 of WIDE_NEXT[d & 63] = d may be a dotted name's
   capital or '_' (0x40 to 0x5f, and what shares their low 6 bits); bit 0 always. */
static unsigned char WIDE_CLASS[128], WIDE_NEXT[64];

/* The same as scan_blocks_avx2 with AVX-512 (BW and VBMI), where the CPU has it: a block is one
   vector, and a two-table byte permute looks each byte up in a table of 128 entries, so the filter
   needs no nibbles. About twice the speed of the AVX2 loop. */
__attribute__((target("avx512f,avx512bw,avx512vbmi,popcnt")))
static Py_ssize_t scan_blocks_avx512(Scan *sc, int *ok)
{
    const FinderObject *f = sc->f;
    const unsigned char *s = sc->s;
    Py_ssize_t n = sc->n, nl = sc->nl, i = 0;
    const __m512i t0a = _mm512_loadu_si512(f->wide[0]), t0b = _mm512_loadu_si512(f->wide[0] + 64);
    const __m512i t1a = _mm512_loadu_si512(f->wide[1]), t1b = _mm512_loadu_si512(f->wide[1] + 64);
    const __m512i t2a = _mm512_loadu_si512(f->wide[2]), t2b = _mm512_loadu_si512(f->wide[2] + 64);
    const __m512i t3a = _mm512_loadu_si512(f->wide[3]), t3b = _mm512_loadu_si512(f->wide[3] + 64);
    const __m512i t4a = _mm512_loadu_si512(f->wide[4]), t4b = _mm512_loadu_si512(f->wide[4] + 64);
    const __m512i ka = _mm512_loadu_si512(WIDE_CLASS), kb = _mm512_loadu_si512(WIDE_CLASS + 64);
    const __m512i kn = _mm512_loadu_si512(WIDE_NEXT), newline = _mm512_set1_epi8('\n');
    for (; i + BLOCK + REACH <= n; i += BLOCK) {
        const unsigned char *b = s + i;
        __m512i c = _mm512_loadu_si512(b), d = _mm512_loadu_si512(b + 1), e = _mm512_loadu_si512(b + 2);
        __m512i g = _mm512_loadu_si512(b + 5), h = _mm512_loadu_si512(b + 8);
        __m512i t = _mm512_and_si512(_mm512_permutex2var_epi8(t0a, c, t0b), _mm512_permutex2var_epi8(t1a, d, t1b));
        __m512i u = _mm512_ternarylogic_epi32(_mm512_permutex2var_epi8(t2a, e, t2b), _mm512_permutex2var_epi8(t3a, g, t3b),
                                              _mm512_permutex2var_epi8(t4a, h, t4b), 0x80); /* all three */
        /* A byte >= 0x80 is neither a control character nor a dot (its low 7 bits could look like one). */
        __mmask64 ascii = ~_mm512_movepi8_mask(c);
        __m512i k = _mm512_and_si512(_mm512_maskz_permutex2var_epi8(ascii, ka, c, kb), _mm512_permutexvar_epi8(d, kn));
        __m512i any = _mm512_ternarylogic_epi32(t, u, k, 0xea); /* (t & u) | k */
        uint64_t maybe = _mm512_test_epi8_mask(any, any);
        uint64_t nlm = _mm512_cmpeq_epi8_mask(c, newline);
        if (maybe) {
            sc->nl = nl;
            Py_ssize_t next = block_hits(sc, i, maybe, nlm);
            if (next < 0) {
                *ok = 0;
                return i;
            }
            if (next > i + BLOCK) { /* past a line found: its blocks hold no newline */
                nl += _mm_popcnt_u64(nlm);
                i = next - BLOCK;
                continue;
            }
        }
        nl += _mm_popcnt_u64(nlm);
    }
    sc->nl = nl;
    return i;
}
#endif /* HAVE_AVX512_PATH */
#endif

typedef Py_ssize_t (*scan_blocks_fn)(Scan *, int *);

/* The loops this machine can run, fastest first (filled in at module init); Finder.locate uses the
   first unless asked for another. */
static struct {
    const char *name;
    scan_blocks_fn fn;
} paths[3];
static int npaths;

/* The cost of a bucket is how likely a position of log text is to pass its filter, under a rough
   byte frequency (spaces and lowercase letters commonest, capitals rarer, control bytes rarest). */
static double byte_weight(int x)
{
    if (x == ' ')
        return 8;
    if (x >= 'a' && x <= 'z')
        return 3;
    if (x >= '0' && x <= '9')
        return 2;
    if (x >= 'A' && x <= 'Z')
        return 1;
    if (x > ' ' && x < 0x7f)
        return 0.5;
    if (x == '\n')
        return 1;
    return 0.02;
}

typedef struct {
    uint64_t set[FP][2]; /* the low 7 bits of the bytes allowed at each looked-at byte (the AVX-512 lookup) */
} Shape;

static void shape_add(Shape *sh, const unsigned char *m, Py_ssize_t len)
{
    for (int j = 0; j < FP; j++) {
        if (FP_AT[j] < len) {
            int x = m[FP_AT[j]] & 127;
            sh->set[j][x >> 6] |= (uint64_t)1 << (x & 63);
        } else {
            sh->set[j][0] = sh->set[j][1] = ~(uint64_t)0;
        }
    }
}

/* w7[x]: the weight of the bytes whose low 7 bits are x (they sum to 1). A bucket's cost is looked at
   ~30,000 times as the markers are placed: over the bits set, not the 128 entries (a Finder is built
   for every scan, and again whenever start-up facts retire markers). */
static double shape_cost(const Shape *sh, const double *w7)
{
    double cost = 1;
    for (int j = 0; j < FP; j++) {
        if (!~sh->set[j][0] && !~sh->set[j][1])
            continue; /* every byte: p = 1 */
        double p = 0;
        for (int h = 0; h < 2; h++)
            for (uint64_t bits = sh->set[j][h]; bits; bits &= bits - 1)
                p += w7[h * 64 + ctz64(bits)];
        cost *= p;
    }
    return cost; /* 0 for an empty bucket */
}

/* Puts each marker in a bucket: greedily where it adds least cost, then moves markers one at a time
   while a move lowers the total (a few rounds). Markers that share first bytes end up together. */
static void assign_buckets(const Marker *markers, int count, int *bucket)
{
    double w[128] = {0}, total = 0;
    for (int x = 0; x < 256; x++)
        total += byte_weight(x);
    for (int x = 0; x < 256; x++)
        w[x & 127] += byte_weight(x) / total;
    Shape sh[BUCKETS];
    double cost[BUCKETS];
    memset(sh, 0, sizeof sh);
    for (int b = 0; b < BUCKETS; b++)
        cost[b] = 0;
    for (int k = 0; k < count; k++) {
        int best = 0;
        double best_add = 0;
        for (int b = 0; b < BUCKETS; b++) {
            Shape t = sh[b];
            shape_add(&t, markers[k].bytes, markers[k].len);
            double add = shape_cost(&t, w) - cost[b];
            if (b == 0 || add < best_add) {
                best = b;
                best_add = add;
            }
        }
        bucket[k] = best;
        shape_add(&sh[best], markers[k].bytes, markers[k].len);
        cost[best] = shape_cost(&sh[best], w);
    }
    for (int round = 0; round < 8; round++) {
        int moved = 0;
        for (int k = 0; k < count; k++) {
            int from = bucket[k], best = from;
            Shape without;
            memset(&without, 0, sizeof without);
            for (int q = 0; q < count; q++)
                if (q != k && bucket[q] == from)
                    shape_add(&without, markers[q].bytes, markers[q].len);
            double without_cost = shape_cost(&without, w), best_add = cost[from] - without_cost;
            Shape best_shape = sh[from];
            for (int b = 0; b < BUCKETS; b++) {
                if (b == from)
                    continue;
                Shape t = sh[b];
                shape_add(&t, markers[k].bytes, markers[k].len);
                double add = shape_cost(&t, w) - cost[b];
                if (add < best_add * (1 - 1e-9)) {
                    best = b;
                    best_add = add;
                    best_shape = t;
                }
            }
            if (best != from) {
                bucket[k] = best;
                sh[from] = without;
                cost[from] = without_cost;
                sh[best] = best_shape;
                cost[best] = shape_cost(&best_shape, w);
                moved = 1;
            }
        }
        if (!moved)
            break;
    }
}

static void finder_dealloc(FinderObject *self)
{
    PyMem_Free(self->store);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *finder_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"markers", NULL};
    PyObject *arg;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:Finder", kwlist, &arg))
        return NULL;
    PyObject *seq = PySequence_Fast(arg, "markers must be a sequence of bytes");
    if (!seq)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq), total = 0;
    if (count < 1 || count > MAX_MARKERS) {
        PyErr_Format(PyExc_ValueError, "Finder takes 1 to %d markers, not %zd", MAX_MARKERS, count);
        goto fail;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, k);
        if (!PyBytes_Check(item)) {
            PyErr_Format(PyExc_TypeError, "markers must be bytes, not %.100s", Py_TYPE(item)->tp_name);
            goto fail;
        }
        Py_ssize_t len = PyBytes_GET_SIZE(item);
        if (len == 0 || memchr(PyBytes_AS_STRING(item), '\n', len)) {
            PyErr_SetString(PyExc_ValueError, "a marker must be non-empty and hold no newline");
            goto fail;
        }
        total += len;
    }
    FinderObject *self = (FinderObject *)type->tp_alloc(type, 0);
    if (!self)
        goto fail;
    self->store = PyMem_Malloc(total);
    if (!self->store) {
        Py_DECREF(self);
        PyErr_NoMemory();
        goto fail;
    }
    Marker given[MAX_MARKERS];
    unsigned char *p = self->store;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, k);
        Marker *m = &given[k];
        m->len = PyBytes_GET_SIZE(item);
        memcpy(p, PyBytes_AS_STRING(item), m->len);
        m->bytes = p;
        p += m->len;
        size_t head = m->len < 8 ? (size_t)m->len : 8;
        m->head = m->mask = 0;
        memcpy(&m->head, m->bytes, head);
        memset(&m->mask, 0xff, head);
    }
    Py_DECREF(seq);

    int bucket[MAX_MARKERS];
    assign_buckets(given, (int)count, bucket);
    self->ascii = 1;
    int placed = 0;
    for (int b = 0; b < BUCKETS; b++) {
        self->first[b] = (unsigned char)placed;
        for (int k = 0; k < count; k++) {
            if (bucket[k] != b)
                continue;
            self->markers[placed] = given[k];
            const Marker *m = &self->markers[placed++];
            for (int j = 0; j < FP; j++) {
                unsigned char bit = (unsigned char)(1u << b);
                if (FP_AT[j] < m->len) {
                    unsigned char x = m->bytes[FP_AT[j]];
                    self->fp[j][x] |= bit;
                    self->lo[j][x & 15] |= bit;
                    self->hi[j][x >> 4] |= bit;
                    if (x >= 0x80 && j < 3)
                        self->ascii = 0;
                } else {
                    for (int x = 0; x < 256; x++)
                        self->fp[j][x] |= bit;
                    for (int x = 0; x < 16; x++) {
                        self->lo[j][x] |= bit;
                        self->hi[j][x] |= bit;
                    }
                    if (j < 3)
                        self->ascii = 0;
                }
            }
        }
    }
    self->first[BUCKETS] = (unsigned char)placed;
    for (int x = 0; x < 256; x++) {
        for (int j = 0; j < FP; j++)
            self->wide[j][x & 127] |= self->fp[j][x];
        self->any[0][x] = (uint16_t)(self->fp[0][x] | is_control((unsigned char)x) << 8 | (x == '.') << 9);
        self->any[1][x] = (uint16_t)(self->fp[1][x] | 1 << 8 | (x >= 0x40 && x < 0x60) << 9);
        self->any[2][x] = (uint16_t)(self->fp[2][x] | 3 << 8);
        self->any[3][x] = (uint16_t)(self->fp[3][x] | 3 << 8);
        self->any[4][x] = (uint16_t)(self->fp[4][x] | 3 << 8);
    }
    return (PyObject *)self;
fail:
    Py_DECREF(seq);
    return NULL;
}

static PyObject *finder_locate(FinderObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"chunk", "portable", "path", "known", "aside", NULL};
    Py_buffer view, known = {0}, aside = {0};
    int portable = 0;
    const char *name = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*|pzy*y*:locate", kwlist, &view, &portable, &name, &known,
                                     &aside))
        return NULL;
    PyObject *result = NULL;
    scan_blocks_fn scan_blocks = portable ? scan_blocks_portable : paths[0].fn;
    if (name) {
        int k = 0;
        while (k < npaths && strcmp(paths[k].name, name))
            k++;
        if (k == npaths) {
            PyErr_Format(PyExc_ValueError, "no loop %.50s on this machine (PATHS lists those there are)", name);
            goto done;
        }
        scan_blocks = paths[k].fn;
    }
    if (known.len % 8 || aside.len % 8) {
        PyErr_SetString(PyExc_ValueError, "keys are not 8-byte");
        goto done;
    }
    Scan sc = {self, view.buf, view.len, 0, -1, {NULL, NULL, 0, 0}, known.buf, aside.buf, known.len / 8,
               aside.len / 8, {NULL, NULL, 0, 0}};
    int ok = 1;
    Py_ssize_t i;
    Py_BEGIN_ALLOW_THREADS
    i = scan_blocks(&sc, &ok);
    if (ok)
        ok = scan_tail(&sc, i);
    Py_END_ALLOW_THREADS
    PyObject *idx = ok ? to_list(sc.h.index, sc.h.len) : PyErr_NoMemory();
    PyObject *st = idx ? to_list(sc.h.start, sc.h.len) : NULL;
    PyObject *aidx = st && aside.obj ? to_list(sc.aside_h.index, sc.aside_h.len) : NULL;
    PyObject *ast = aidx ? to_list(sc.aside_h.start, sc.aside_h.len) : NULL;
    PyMem_RawFree(sc.h.index);
    PyMem_RawFree(sc.h.start);
    PyMem_RawFree(sc.aside_h.index);
    PyMem_RawFree(sc.aside_h.start);
    PyMem_RawFree(sc.seen);
    if (!st || (aside.obj && !ast)) {
        Py_XDECREF(idx);
        Py_XDECREF(st);
        Py_XDECREF(aidx);
        goto done;
    }
    result = aside.obj ? Py_BuildValue("nNNNN", sc.nl, idx, st, aidx, ast) : Py_BuildValue("nNN", sc.nl, idx, st);
done:
    PyBuffer_Release(&view);
    if (known.obj)
        PyBuffer_Release(&known);
    if (aside.obj)
        PyBuffer_Release(&aside);
    return result;
}

#ifndef _WIN32
#include <errno.h>
#include <unistd.h>

/* pread until n bytes or the end of the file; -1 with errno on an error. */
static Py_ssize_t pread_full(int fd, unsigned char *buf, Py_ssize_t n, Py_ssize_t at)
{
    Py_ssize_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, buf + got, (size_t)(n - got), (off_t)(at + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0)
            break;
        got += k;
    }
    return got;
}

/* Where the first line starting at or after byte `at` starts: `size` if none does, or `limit` if none
   does before it (limit < 0: none). locate._boundary, probing into buf (cap bytes of scratch). */
static Py_ssize_t boundary(int fd, Py_ssize_t size, Py_ssize_t at, Py_ssize_t limit, unsigned char *buf,
                           Py_ssize_t cap)
{
    if (at <= 0)
        return 0;
    Py_ssize_t end = limit < 0 || limit > size ? size : limit, pos = at - 1, step = 1 << 12;
    while (pos < end) {
        Py_ssize_t want = step < end - pos ? step : end - pos;
        if (want > cap)
            want = cap;
        Py_ssize_t k = pread_full(fd, buf, want, pos);
        if (k < 0)
            return -1;
        if (k == 0)
            break;
        const unsigned char *nl = memchr(buf, '\n', (size_t)k);
        if (nl)
            return pos + (nl - buf) + 1 < size ? pos + (nl - buf) + 1 : size;
        pos += k;
        step = step * 2 < (1 << 20) ? step * 2 : (1 << 20);
    }
    return end;
}

static PyObject *finder_read_range(FinderObject *self, PyObject *args)
{
    int fd;
    Py_ssize_t lo, hi, size;
    Py_buffer buf, known, aside;
    if (!PyArg_ParseTuple(args, "innnw*y*y*:read_range", &fd, &lo, &hi, &size, &buf, &known, &aside))
        return NULL;
    PyObject *result = NULL;
    if (known.len % 8 || aside.len % 8 || buf.len < 2) {
        PyErr_SetString(PyExc_ValueError, "keys are not 8-byte, or the buffer is too small");
        goto done;
    }
    unsigned char *b = buf.buf;
    Py_ssize_t cap = buf.len, start, end = -1, len = -1, i = 0;
    int ok = 1, err = 0;
    Scan sc = {self, b, 0, 0, -1, {NULL, NULL, 0, 0}, known.buf, aside.buf, known.len / 8, aside.len / 8,
               {NULL, NULL, 0, 0}};
    Py_BEGIN_ALLOW_THREADS
    start = boundary(fd, size, lo, hi, b, cap);
    if (start < 0)
        err = errno;
    else if (start < hi && start < size) {
        end = boundary(fd, size, hi, -1, b, cap);
        if (end < 0)
            err = errno;
        /* A line far longer than the range, or more than the buffer holds: the caller reads it. */
        else if (end - start <= 8 * (hi - lo) && end - start < cap) {
            len = pread_full(fd, b, end - start, start);
            if (len < 0)
                err = errno;
            else {
                if (len == 0 || b[len - 1] != '\n')
                    b[len++] = '\n'; /* a last line without a newline gets one, as in iter_line_chunks */
                sc.n = len;
                i = paths[0].fn(&sc, &ok);
                if (ok)
                    ok = scan_tail(&sc, i);
            }
        }
    }
    Py_END_ALLOW_THREADS
    if (err) {
        errno = err;
        PyErr_SetFromErrno(PyExc_OSError);
    } else if (len < 0) {
        result = Py_BuildValue("nn", start, end < 0 ? start : end);
    } else if (!ok) {
        PyErr_NoMemory();
    } else {
        PyObject *idx = to_list(sc.h.index, sc.h.len);
        PyObject *st = idx ? to_list(sc.h.start, sc.h.len) : NULL;
        PyObject *aidx = st ? to_list(sc.aside_h.index, sc.aside_h.len) : NULL;
        PyObject *ast = aidx ? to_list(sc.aside_h.start, sc.aside_h.len) : NULL;
        if (ast)
            result = Py_BuildValue("nnnnNNNN", start, end, len, sc.nl, idx, st, aidx, ast);
        else {
            Py_XDECREF(idx);
            Py_XDECREF(st);
            Py_XDECREF(aidx);
        }
    }
    PyMem_RawFree(sc.h.index);
    PyMem_RawFree(sc.h.start);
    PyMem_RawFree(sc.aside_h.index);
    PyMem_RawFree(sc.aside_h.start);
    PyMem_RawFree(sc.seen);
done:
    PyBuffer_Release(&buf);
    PyBuffer_Release(&known);
    PyBuffer_Release(&aside);
    return result;
}
#endif

static PyMethodDef finder_methods[] = {
#ifndef _WIN32
    {"read_range", (PyCFunction)finder_read_range, METH_VARARGS,
     "read_range(fd, lo, hi, size, buffer, known, aside) -> what locate.Locator._range does for file bytes\n"
     "[lo, hi), in one call that holds no GIL: the lines that start there are read into the writable\n"
     "buffer (a newline added to an unterminated last one) and located as locate(chunk, known=known,\n"
     "aside=aside) does. (start, end, length, newlines, indices, starts, aside indices, aside starts):\n"
     "the lines were file bytes [start, end) and are buffer[:length]; (start, end): they were not read\n"
     "(none start in [lo, hi) when start >= hi or start >= size; else they are longer than the buffer or\n"
     "than 8 * (hi - lo)), and the caller reads them."},
#endif
    {"locate", (PyCFunction)(void (*)(void))finder_locate, METH_VARARGS | METH_KEYWORDS,
     "locate(chunk, portable=False, path=None, known=None, aside=None) -> (newlines, line indices, line starts)\n\n"
     "What lines_of_interest(chunk, offsets) gives with the offsets of the markers in chunk. The fastest\n"
     "loop of this machine runs it, the portable one with portable=True, or the one named by path (one\n"
     "of PATHS). `known` and `aside` are shape keys (shape_key; ascending, as array('Q') bytes): the\n"
     "lines found with a known key are left out, as drop_known does, and with `aside` the result has two\n"
     "more lists, the indices and starts of the lines found with a key in it (a line with a control\n"
     "character is never left out or set aside)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject FinderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "crashlens._lines.Finder",
    .tp_basicsize = sizeof(FinderObject),
    .tp_dealloc = (destructor)finder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Finder(markers): finds the lines of a chunk that hold one of the markers (1 to 128 non-empty\n"
              "bytes without a newline), a control character or a dotted name, in one pass.",
    .tp_methods = finder_methods,
    .tp_new = finder_new,
};

/* ---- shape keys: lines already judged, dropped from what a locate found ---------------------------- */

/* High bit set in each byte of y that is zero (exactly: no borrow crosses bytes). */
static inline uint64_t zero_bytes(uint64_t y)
{
    const uint64_t m7 = 0x7f7f7f7f7f7f7f7fULL;
    return ~(((y & m7) + m7) | y | m7);
}

/* A 64-bit key of a line's shape (every digit read as '0', as prefilter.shape does); *control is set
   when the line holds a control character (is_control), which shapes do not keep apart. The line is
   read as 8-byte words (the last one zero-padded), digits and control characters found with byte-wise
   arithmetic in a 64-bit word (no carry crosses a byte) or, where the CPU has AVX-512, 64 bytes at a
   time. Word k is mixed into lane k % 4 by a multiply and a shift, and the lanes into the length: each
   step a bijection of its state, so lines of one length that differ in one word never share a key.
   (Four lanes, not one chain of multiplies: the pass computes the key of every line it finds, and on a
   log of torch warnings those are half its bytes.) Every implementation gives the same keys. */
#define KEY_MUL 0xff51afd7ed558ccdULL
#define KEY_MIX(h, w) ((h) = ((h) ^ (w)) * KEY_MUL, (h) ^= (h) >> 32)
static const uint64_t KEY_LANE[4] = {0x243F6A8885A308D3ULL, 0x13198A2E03707344ULL, 0xA4093822299F31D0ULL,
                                     0x082EFA98EC4E6C89ULL};

static inline uint64_t key_end(const uint64_t lane[4], Py_ssize_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
    for (int j = 0; j < 4; j++)
        KEY_MIX(h, lane[j]);
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

/* A word of a line with its digits made '0'; control characters among the `valid` bytes go to *ctl. */
static inline uint64_t key_word(uint64_t w, uint64_t valid, uint64_t *ctl)
{
    const uint64_t ones = 0x0101010101010101ULL, h8 = 0x8080808080808080ULL, m7 = ~h8;
    uint64_t x = w & m7, ascii = ~w & h8;
    uint64_t digit = ((x + 0x50 * ones) & ~(x + 0x46 * ones)) & ascii; /* 0x30 <= byte < 0x3a */
    uint64_t dm = (digit >> 7) * 0xff;
    w = (w & ~dm) | (0x30 * ones & dm);
    uint64_t low = ~(x + 0x60 * ones) & ascii; /* byte < 0x20 */
    uint64_t fine = zero_bytes(w ^ ('\t' * ones)) | zero_bytes(w ^ ('\n' * ones)) | zero_bytes(w ^ ('\r' * ones));
    *ctl |= ((low & ~fine) | zero_bytes(w ^ (0x7f * ones))) & valid;
    return w;
}

static uint64_t shape_key_portable(const unsigned char *s, Py_ssize_t n, int *control)
{
    uint64_t lane[4] = {KEY_LANE[0], KEY_LANE[1], KEY_LANE[2], KEY_LANE[3]}, ctl = 0, w[4];
    const uint64_t all = ~(uint64_t)0;
    Py_ssize_t i = 0;
    for (; i + 32 <= n; i += 32) {
        memcpy(w, s + i, 32);
        KEY_MIX(lane[0], key_word(w[0], all, &ctl));
        KEY_MIX(lane[1], key_word(w[1], all, &ctl));
        KEY_MIX(lane[2], key_word(w[2], all, &ctl));
        KEY_MIX(lane[3], key_word(w[3], all, &ctl));
    }
    for (; i < n; i += 8) {
        uint64_t v = 0, valid = all;
        if (n - i >= 8) {
            memcpy(&v, s + i, 8);
        } else {
            unsigned char m[8] = {0};
            memcpy(&v, s + i, (size_t)(n - i));
            memset(m, 0xff, (size_t)(n - i));
            memcpy(&valid, m, 8); /* the bytes of the line, whatever the byte order */
        }
        KEY_MIX(lane[(i >> 3) & 3], key_word(v, valid, &ctl));
    }
    *control = ctl != 0;
    return key_end(lane, n);
}

typedef uint64_t (*shape_key_fn)(const unsigned char *, Py_ssize_t, int *);
static shape_key_fn shape_key_best = shape_key_portable;

#ifdef HAVE_AVX512_PATH
/* shape_key_portable, 64 bytes at a time (about ten times its speed on long lines). */
__attribute__((target("avx512f,avx512bw")))
static uint64_t shape_key_avx512(const unsigned char *s, Py_ssize_t n, int *control)
{
    const __m512i zero = _mm512_set1_epi8('0'), nine = _mm512_set1_epi8('9'), space = _mm512_set1_epi8(0x20);
    const __m512i tab = _mm512_set1_epi8('\t'), nl = _mm512_set1_epi8('\n'), cr = _mm512_set1_epi8('\r');
    const __m512i del = _mm512_set1_epi8(0x7f);
    uint64_t lane[4] = {KEY_LANE[0], KEY_LANE[1], KEY_LANE[2], KEY_LANE[3]};
    uint64_t w[8] __attribute__((aligned(64)));
    __mmask64 ctl = 0;
    for (Py_ssize_t i = 0; i < n; i += 64) {
        Py_ssize_t r = n - i;
        __mmask64 valid = r >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << r) - 1);
        __m512i v = _mm512_maskz_loadu_epi8(valid, s + i); /* (no fault past the end: masked) */
        __mmask64 digit = _mm512_cmpge_epu8_mask(v, zero) & _mm512_cmple_epu8_mask(v, nine);
        v = _mm512_mask_mov_epi8(v, digit, zero);
        __mmask64 fine = _mm512_cmpeq_epi8_mask(v, tab) | _mm512_cmpeq_epi8_mask(v, nl) | _mm512_cmpeq_epi8_mask(v, cr);
        ctl |= ((_mm512_cmplt_epu8_mask(v, space) & ~fine) | _mm512_cmpeq_epi8_mask(v, del)) & valid;
        _mm512_store_si512((void *)w, v);
        if (r >= 64) { /* word j of the block is word i / 8 + j of the line: lane j % 4 */
            KEY_MIX(lane[0], w[0]);
            KEY_MIX(lane[1], w[1]);
            KEY_MIX(lane[2], w[2]);
            KEY_MIX(lane[3], w[3]);
            KEY_MIX(lane[0], w[4]);
            KEY_MIX(lane[1], w[5]);
            KEY_MIX(lane[2], w[6]);
            KEY_MIX(lane[3], w[7]);
        } else {
            for (int j = 0; j < (int)((r + 7) >> 3); j++)
                KEY_MIX(lane[j & 3], w[j]);
        }
    }
    *control = ctl != 0;
    return key_end(lane, n);
}
#endif

static uint64_t shape_key_of(const unsigned char *s, Py_ssize_t n, int *control)
{
    return shape_key_best(s, n, control);
}

static PyObject *shape_key(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer view;
    int portable = 0;
    if (!PyArg_ParseTuple(args, "y*|p", &view, &portable))
        return NULL;
    int control;
    uint64_t k = (portable ? shape_key_portable : shape_key_of)(view.buf, view.len, &control);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLongLong(k);
}

static int key_known(const uint64_t *keys, Py_ssize_t n, uint64_t k)
{
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && keys[lo] == k;
}

static PyObject *drop_known(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer view, known, aside = {0};
    PyObject *indices, *starts;
    if (!PyArg_ParseTuple(args, "y*OOy*|y*", &view, &indices, &starts, &known, &aside))
        return NULL;
    PyObject *result = NULL, *idx = NULL, *st = NULL, *aidx = NULL, *ast = NULL;
    Py_ssize_t *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    PyObject *si = PySequence_Fast(indices, "indices must be a sequence of int");
    PyObject *ss = si ? PySequence_Fast(starts, "starts must be a sequence of int") : NULL;
    if (!ss)
        goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(si);
    if (PySequence_Fast_GET_SIZE(ss) != n || known.len % 8 || aside.len % 8) {
        PyErr_SetString(PyExc_ValueError, "indices and starts differ in length, or keys are not 8-byte");
        goto done;
    }
    a = PyMem_RawMalloc((n ? n : 1) * sizeof(Py_ssize_t));
    b = PyMem_RawMalloc((n ? n : 1) * sizeof(Py_ssize_t));
    c = PyMem_RawMalloc((n ? n : 1) * sizeof(Py_ssize_t));
    d = PyMem_RawMalloc((n ? n : 1) * sizeof(Py_ssize_t));
    if (!a || !b || !c || !d) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        a[i] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(si, i));
        b[i] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(ss, i));
        if ((a[i] == -1 || b[i] == -1) && PyErr_Occurred())
            goto done;
        if (b[i] < 0 || b[i] > view.len) {
            PyErr_SetString(PyExc_ValueError, "a start lies outside the chunk");
            goto done;
        }
    }
    const unsigned char *s = view.buf;
    const uint64_t *keys = known.buf, *apart = aside.buf;
    Py_ssize_t nkeys = known.len / 8, napart = aside.len / 8, kept = 0, set = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        const unsigned char *nl = memchr(s + b[i], '\n', (size_t)(view.len - b[i]));
        Py_ssize_t len = (nl ? nl - s : view.len) - b[i];
        int control;
        uint64_t k = shape_key_of(s + b[i], len, &control);
        if (!control && key_known(keys, nkeys, k))
            continue;
        if (!control && key_known(apart, napart, k)) {
            c[set] = a[i];
            d[set++] = b[i];
        } else {
            a[kept] = a[i];
            b[kept++] = b[i];
        }
    }
    Py_END_ALLOW_THREADS
    idx = to_list(a, kept);
    st = idx ? to_list(b, kept) : NULL;
    aidx = st && aside.obj ? to_list(c, set) : NULL;
    ast = aidx ? to_list(d, set) : NULL;
    if (aside.obj ? ast != NULL : st != NULL) {
        result = aside.obj ? Py_BuildValue("NNNN", idx, st, aidx, ast) : Py_BuildValue("NN", idx, st);
    } else {
        Py_XDECREF(idx);
        Py_XDECREF(st);
        Py_XDECREF(aidx);
    }
done:
    PyMem_RawFree(a);
    PyMem_RawFree(b);
    PyMem_RawFree(c);
    PyMem_RawFree(d);
    Py_XDECREF(si);
    Py_XDECREF(ss);
    PyBuffer_Release(&view);
    PyBuffer_Release(&known);
    if (aside.obj)
        PyBuffer_Release(&aside);
    return result;
}

static PyMethodDef methods[] = {
    {"lines_of_interest", lines_of_interest, METH_VARARGS,
     "lines_of_interest(chunk, offsets, portable=False) -> (newlines, line indices, line starts)"},
    {"shape_key", shape_key, METH_VARARGS,
     "shape_key(line, portable=False) -> the 64-bit key of the line's shape (digits as '0'), for drop_known\n"
     "(portable=True: computed by the plain C loop, which gives the same keys as the AVX-512 one)"},
    {"drop_known", drop_known, METH_VARARGS,
     "drop_known(chunk, indices, starts, keys, aside=None) -> (indices, starts) without the lines whose shape "
     "key is in `keys` (ascending native 64-bit ints, as array('Q')); with `aside` (keys too), two more lists: "
     "the indices and starts of the lines whose key is in it, left out of the first two; a line with a "
     "control character is kept"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "crashlens._lines",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__lines(void)
{
    int avx2 = 0;
    npaths = 0;
#ifdef HAVE_AVX2_PATH
    __builtin_cpu_init();
    avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    if (avx2)
        clean_blocks = clean_blocks_avx2;
#ifdef HAVE_AVX512_PATH
    if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vbmi")) {
        for (int x = 0; x < 128; x++)
            WIDE_CLASS[x] = (unsigned char)(is_control((unsigned char)x) | (x == '.') << 1);
        for (int x = 0; x < 64; x++)
            WIDE_NEXT[x] = (unsigned char)(1 | (x < 0x20) << 1);
        paths[npaths].name = "avx512";
        paths[npaths++].fn = scan_blocks_avx512;
        shape_key_best = shape_key_avx512;
    }
#endif
    if (avx2) {
        paths[npaths].name = "avx2";
        paths[npaths++].fn = scan_blocks_avx2;
    }
#endif
    paths[npaths].name = "portable";
    paths[npaths++].fn = scan_blocks_portable;
    if (PyType_Ready(&FinderType) < 0)
        return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (!mod)
        return NULL;
    Py_INCREF(&FinderType);
    if (PyModule_AddObject(mod, "Finder", (PyObject *)&FinderType) < 0) {
        Py_DECREF(&FinderType);
        Py_DECREF(mod);
        return NULL;
    }
    PyObject *names = PyTuple_New(npaths);
    for (int k = 0; names && k < npaths; k++) {
        PyObject *name = PyUnicode_FromString(paths[k].name);
        if (!name)
            Py_CLEAR(names);
        else
            PyTuple_SET_ITEM(names, k, name);
    }
    if (!names || PyModule_AddObject(mod, "PATHS", names) < 0) {
        Py_XDECREF(names);
        Py_DECREF(mod);
        return NULL;
    }
    if (PyModule_AddObject(mod, "HAVE_AVX2", PyBool_FromLong(avx2)) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
