/* crashlens._lines: one pass over a chunk of log lines, at memory speed.

   lines_of_interest(chunk, offsets, portable=False) -> (newlines, indices, starts)

   `chunk` is a run of whole lines (every line ends in '\n'); `offsets` are byte offsets, in
   ascending order, where a marker literal was found (by ahocorasick_rs). The result is the number
   of newlines in the chunk and, for every line that holds a marker offset, a control character
   (what prefilter._CONTROLS lists) or a dotted exception name's `.X` / `._X` (prefilter.DOTTED_NAME),
   its index in the chunk and the byte offset where it starts. Python's own bytes.count and
   bytes.translate run about four times slower than this loop; see prefilter.py for how the result
   is used and README "Performance" for the figures. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

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
    while (pos > 0 && s[pos - 1] != '\n')
        pos--;
    return pos;
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

static PyMethodDef methods[] = {
    {"lines_of_interest", lines_of_interest, METH_VARARGS,
     "lines_of_interest(chunk, offsets, portable=False) -> (newlines, line indices, line starts)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "crashlens._lines", NULL, -1, methods};

PyMODINIT_FUNC PyInit__lines(void)
{
#ifdef HAVE_AVX2_PATH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt"))
        clean_blocks = clean_blocks_avx2;
#endif
    return PyModule_Create(&module);
}
