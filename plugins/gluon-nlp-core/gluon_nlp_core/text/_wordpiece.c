/* Native end-to-end BERT tokenization: the fast tiers of _bert_fast.py and the WordPiece
 * split of _bert_reference.py, in C, giving exactly their tokens.
 *
 * Why C: per word, the Python versions spend most of their time in interpreter overhead
 * (a loop of slices and dict lookups per word piece, a regex call chain per text). Here
 * the loops run in C and still use Python's own str objects and dict lookups, so vocab
 * membership is exactly Python's. Unicode facts are not re-derived here: the character
 * classes come as a 64 KiB table built in Python from the reference's tables, and
 * lower-casing and NFD call str.lower and unicodedata.normalize.
 *
 * Routes, as in _bert_fast.basic_tokenize_fast:
 *   ASCII text: drop ASCII controls, lower-case, split alphanumeric runs / single symbols;
 *   text within the BMP: drop "removed" characters, str.lower, NFD, drop non-spacing
 *     marks, split runs of word characters / single punctuation and CJK characters;
 *   anything else: the Python fallback (the reference) gives the words.
 * Every word then goes through a per-object cache of word -> its word pieces.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Table entries (one byte per BMP code point): the low two bits say how the splitter
 * treats the character after NFD, the flags how the text is routed before it. */
#define CLS_WORD 0
#define CLS_MARK 1   /* non-spacing mark: dropped */
#define CLS_SINGLE 2 /* punctuation or CJK ideograph: a token of its own */
#define CLS_SPACE 3  /* str.isspace(): separates tokens */
#define CLS_MASK 3
#define FLAG_REMOVED 4 /* dropped before lower-casing (controls, U+FFFD, ...) */
#define FLAG_LEAVES 8  /* NFD maps it outside the BMP: route to the fallback */
#define TABLE_SIZE 0x10000

static PyObject *nfd_str;   /* "NFD" */
static PyObject *normalize; /* unicodedata.normalize */

/* The vocabulary as an open-addressing hash set over UCS4 code points, so that a
 * candidate piece is looked up without building a str for it; a hit returns the
 * vocabulary's own str. Its answers are the dict's: str equality is code-point equality. */
typedef struct {
    uint64_t hash;
    Py_ssize_t len;
    Py_ssize_t offset; /* into the pool */
    PyObject *token;   /* borrowed from the tokens list; NULL: empty slot */
} Slot;

typedef struct {
    PyObject_HEAD
    PyObject *tokens;   /* list of the vocabulary's str tokens */
    Slot *slots;
    size_t mask;
    Py_UCS4 *pool;      /* every token's code points, back to back */
    Py_ssize_t max_len; /* the longest token: longer candidates cannot match */
    PyObject *unknown;  /* str */
    Py_ssize_t max_chars;
    PyObject *cache;    /* dict word -> its piece (str) or pieces (tuple) */
    Py_ssize_t max_entries;
    PyObject *table_fn; /* () -> bytes of TABLE_SIZE, called on the first non-ASCII text */
    PyObject *table;    /* its result, or NULL until then */
    PyObject *fallback; /* (text, lower) -> list of words, for text beyond the BMP */
} WordPiece;

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static inline uint64_t
fnv_step(uint64_t h, Py_UCS4 c)
{
    return (h ^ c) * FNV_PRIME;
}

static inline size_t
slot_of(uint64_t h, size_t mask)
{
    return (size_t)(h ^ (h >> 32)) & mask;
}

static int
build_vocab(WordPiece *self, PyObject *vocab)
{
    PyObject *tokens = PyDict_Keys(vocab);
    if (tokens == NULL) {
        return -1;
    }
    Py_ssize_t n = PyList_GET_SIZE(tokens), chars = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *token = PyList_GET_ITEM(tokens, i);
        if (!PyUnicode_Check(token)) {
            Py_DECREF(tokens);
            PyErr_Format(PyExc_TypeError, "vocabulary tokens must be str, got %.100s",
                         Py_TYPE(token)->tp_name);
            return -1;
        }
        chars += PyUnicode_GET_LENGTH(token);
    }
    size_t size = 8;
    while (size < 2 * (size_t)n) {
        size <<= 1;
    }
    Slot *slots = PyMem_Calloc(size, sizeof(Slot));
    Py_UCS4 *pool = PyMem_Malloc(sizeof(Py_UCS4) * (size_t)(chars + 1));
    if (slots == NULL || pool == NULL) {
        PyMem_Free(slots);
        PyMem_Free(pool);
        Py_DECREF(tokens);
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t offset = 0, max_len = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *token = PyList_GET_ITEM(tokens, i);
        Py_ssize_t len = PyUnicode_GET_LENGTH(token);
        int kind = PyUnicode_KIND(token);
        const void *data = PyUnicode_DATA(token);
        uint64_t h = FNV_OFFSET;
        for (Py_ssize_t k = 0; k < len; k++) {
            pool[offset + k] = PyUnicode_READ(kind, data, k);
            h = fnv_step(h, pool[offset + k]);
        }
        size_t j = slot_of(h, size - 1);
        while (slots[j].token != NULL) {
            j = (j + 1) & (size - 1);
        }
        slots[j] = (Slot){h, len, offset, token};
        offset += len;
        max_len = len > max_len ? len : max_len;
    }
    Py_XSETREF(self->tokens, tokens);
    PyMem_Free(self->slots);
    PyMem_Free(self->pool);
    self->slots = slots;
    self->pool = pool;
    self->mask = size - 1;
    self->max_len = max_len;
    return 0;
}

/* The vocabulary's str equal to chars[:len] (borrowed), or NULL. */
static PyObject *
find_token(WordPiece *self, uint64_t h, const Py_UCS4 *chars, Py_ssize_t len)
{
    for (size_t j = slot_of(h, self->mask); self->slots[j].token != NULL;
         j = (j + 1) & self->mask) {
        const Slot *slot = &self->slots[j];
        if (slot->hash == h && slot->len == len
                && memcmp(self->pool + slot->offset, chars, sizeof(Py_UCS4) * (size_t)len) == 0) {
            return slot->token;
        }
    }
    return NULL;
}

/* Greedy longest-match-first split of one word: its only piece (a str), or a tuple of
 * its pieces, as a new reference. The tuple holds only str, so it is taken off the
 * garbage collector's lists: the cache holds one per word, and a cold pass over new text
 * would otherwise make every collection walk them all. */
static PyObject *
split_word(WordPiece *self, PyObject *word)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(word);
    if (n > self->max_chars) {
        return Py_NewRef(self->unknown);
    }
    /* cand: the candidates' common start, "##" + the rest of the word after the first
     * piece; hashes[k]: hash of cand[:k], so each candidate costs one lookup;
     * found: the pieces so far (borrowed from the vocabulary) */
    size_t size = sizeof(Py_UCS4) * (size_t)(n + 2) + sizeof(uint64_t) * (size_t)(n + 3)
                  + sizeof(PyObject *) * (size_t)(n + 1);
    uint64_t *hashes = PyMem_Malloc(size);
    if (hashes == NULL) {
        return PyErr_NoMemory();
    }
    PyObject **found = (PyObject **)(hashes + n + 3);
    Py_UCS4 *cand = (Py_UCS4 *)(found + n + 1);
    int kind = PyUnicode_KIND(word);
    const void *data = PyUnicode_DATA(word);
    Py_ssize_t start = 0, count = 0;
    while (start < n) {
        Py_ssize_t head = 0; /* 2 when the candidates start with "##" */
        if (start > 0) {
            cand[head++] = '#';
            cand[head++] = '#';
        }
        Py_ssize_t total = head + n - start;
        for (Py_ssize_t k = start; k < n; k++) {
            cand[head + k - start] = PyUnicode_READ(kind, data, k);
        }
        hashes[0] = FNV_OFFSET;
        for (Py_ssize_t k = 0; k < total; k++) {
            hashes[k + 1] = fnv_step(hashes[k], cand[k]);
        }
        PyObject *piece = NULL;
        Py_ssize_t len = total < self->max_len ? total : self->max_len;
        while (len > head && (piece = find_token(self, hashes[len], cand, len)) == NULL) {
            len--;
        }
        if (piece == NULL) { /* some part matches nothing: the whole word is unknown */
            PyMem_Free(hashes);
            return Py_NewRef(self->unknown);
        }
        found[count++] = piece;
        start += len - head;
    }
    PyObject *result;
    if (count == 1) {
        result = Py_NewRef(found[0]);
    }
    else {
        result = PyTuple_New(count);
        if (result != NULL) {
            for (Py_ssize_t i = 0; i < count; i++) {
                PyTuple_SET_ITEM(result, i, Py_NewRef(found[i]));
            }
            PyObject_GC_UnTrack(result);
        }
    }
    PyMem_Free(hashes);
    return result;
}

/* Append the pieces of `word` to `out`, through the cache. */
static int
append_pieces(WordPiece *self, PyObject *out, PyObject *word)
{
    PyObject *pieces = PyDict_GetItemWithError(self->cache, word); /* borrowed */
    if (pieces == NULL) {
        if (PyErr_Occurred()) {
            return -1;
        }
        pieces = split_word(self, word);
        if (pieces == NULL) {
            return -1;
        }
        /* bounded, so that an endless stream of new words cannot grow it without limit */
        if (PyDict_GET_SIZE(self->cache) >= self->max_entries) {
            PyDict_Clear(self->cache);
        }
        int rc = PyDict_SetItem(self->cache, word, pieces);
        Py_DECREF(pieces); /* the cache holds it now */
        if (rc < 0) {
            return -1;
        }
    }
    if (!PyTuple_CheckExact(pieces)) {
        return PyList_Append(out, pieces);
    }
    Py_ssize_t k = PyTuple_GET_SIZE(pieces);
    for (Py_ssize_t i = 0; i < k; i++) {
        if (PyList_Append(out, PyTuple_GET_ITEM(pieces, i)) < 0) {
            return -1;
        }
    }
    return 0;
}

static int
append_word(WordPiece *self, PyObject *out, PyObject *word)
{
    if (word == NULL) {
        return -1;
    }
    int rc = append_pieces(self, out, word);
    Py_DECREF(word);
    return rc;
}

static PyObject *
ascii_word(const unsigned char *chars, Py_ssize_t n)
{
    if (n == 1) {
        return PyUnicode_FromOrdinal(chars[0]); /* a shared single-character string */
    }
    PyObject *word = PyUnicode_New(n, 127);
    if (word != NULL) {
        memcpy(PyUnicode_1BYTE_DATA(word), chars, (size_t)n);
    }
    return word;
}

static int
is_ascii_control(unsigned char c)
{ /* _bert_fast._ASCII_CONTROLS: C0 controls but tab, newline, return; and DEL */
    return (c < 32 && c != '\t' && c != '\n' && c != '\r') || c == 127;
}

static int
is_ascii_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* ASCII text: runs of [A-Za-z0-9] and single other non-space characters. */
static int
tokenize_ascii(WordPiece *self, PyObject *out, PyObject *text, int lower)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    const unsigned char *s = PyUnicode_1BYTE_DATA(text);
    unsigned char *buf = PyMem_Malloc((size_t)n + 1);
    if (buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t len = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (is_ascii_alnum(c)) {
            buf[len++] = (lower && c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
            continue;
        }
        if (is_ascii_control(c)) {
            continue; /* dropped, so the characters around it may join */
        }
        if (len > 0 && append_word(self, out, ascii_word(buf, len)) < 0) {
            goto error;
        }
        len = 0;
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r'
                && append_word(self, out, PyUnicode_FromOrdinal(c)) < 0) {
            goto error;
        }
    }
    if (len > 0 && append_word(self, out, ascii_word(buf, len)) < 0) {
        goto error;
    }
    PyMem_Free(buf);
    return 0;
error:
    PyMem_Free(buf);
    return -1;
}

static const unsigned char *
get_table(WordPiece *self)
{
    if (self->table == NULL) {
        PyObject *table = PyObject_CallNoArgs(self->table_fn);
        if (table == NULL) {
            return NULL;
        }
        if (!PyBytes_Check(table) || PyBytes_GET_SIZE(table) != TABLE_SIZE) {
            Py_DECREF(table);
            PyErr_SetString(PyExc_ValueError, "the character table must be 65536 bytes");
            return NULL;
        }
        self->table = table;
    }
    return (const unsigned char *)PyBytes_AS_STRING(self->table);
}

/* The text with FLAG_REMOVED characters dropped (a new reference), or NULL with the
 * fallback flag set when a character leaves the BMP (beyond it, or under NFD). */
static PyObject *
drop_removed(PyObject *text, const unsigned char *table, int *beyond)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), removed = 0;
    *beyond = 0;
    if (kind == PyUnicode_4BYTE_KIND) {
        *beyond = 1;
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char t = table[PyUnicode_READ(kind, data, i)];
        if (t & FLAG_LEAVES) {
            *beyond = 1;
            return NULL;
        }
        removed += (t & FLAG_REMOVED) != 0;
    }
    if (removed == 0) {
        return Py_NewRef(text);
    }
    Py_UCS2 *kept = PyMem_Malloc(sizeof(Py_UCS2) * (size_t)(n - removed + 1));
    if (kept == NULL) {
        return PyErr_NoMemory();
    }
    Py_ssize_t len = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (!(table[ch] & FLAG_REMOVED)) {
            kept[len++] = (Py_UCS2)ch;
        }
    }
    PyObject *result = PyUnicode_FromKindAndData(PyUnicode_2BYTE_KIND, kept, len);
    PyMem_Free(kept);
    return result;
}

/* Normalized text: drop marks, split on spaces, single out punctuation and CJK. Code
 * points above the BMP (only ever from lower-casing) count as word characters, as they
 * do in the Python tier's regexes. */
static int
split_normalized(WordPiece *self, PyObject *out, PyObject *text, const unsigned char *table)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_UCS4 *buf = PyMem_Malloc(sizeof(Py_UCS4) * (size_t)(n + 1));
    if (buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t len = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        int cls = ch < TABLE_SIZE ? (table[ch] & CLS_MASK) : CLS_WORD;
        if (cls == CLS_WORD) {
            buf[len++] = ch;
            continue;
        }
        if (cls == CLS_MARK) {
            continue;
        }
        if (len > 0
                && append_word(self, out,
                               PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf, len)) < 0) {
            goto error;
        }
        len = 0;
        if (cls == CLS_SINGLE && append_word(self, out, PyUnicode_FromOrdinal(ch)) < 0) {
            goto error;
        }
    }
    if (len > 0
            && append_word(self, out,
                           PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf, len)) < 0) {
        goto error;
    }
    PyMem_Free(buf);
    return 0;
error:
    PyMem_Free(buf);
    return -1;
}

static int
append_all(WordPiece *self, PyObject *out, PyObject *words)
{
    PyObject *seq = PySequence_Fast(words, "words must be a sequence of str");
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_Check(items[i])) {
            PyErr_Format(PyExc_TypeError, "words must be str, got %.100s",
                         Py_TYPE(items[i])->tp_name);
            Py_DECREF(seq);
            return -1;
        }
        if (append_pieces(self, out, items[i]) < 0) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}

static int
tokenize_unicode(WordPiece *self, PyObject *out, PyObject *text, int lower)
{
    const unsigned char *table = get_table(self);
    if (table == NULL) {
        return -1;
    }
    int beyond;
    PyObject *kept = drop_removed(text, table, &beyond);
    if (beyond) {
        PyObject *words = PyObject_CallFunctionObjArgs(
            self->fallback, text, lower ? Py_True : Py_False, NULL);
        if (words == NULL) {
            return -1;
        }
        int rc = append_all(self, out, words);
        Py_DECREF(words);
        return rc;
    }
    if (kept == NULL) {
        return -1;
    }
    if (lower) {
        Py_SETREF(kept, PyObject_CallMethod(kept, "lower", NULL));
        if (kept == NULL) {
            return -1;
        }
    }
    Py_SETREF(kept, PyObject_CallFunctionObjArgs(normalize, nfd_str, kept, NULL));
    if (kept == NULL) {
        return -1;
    }
    int rc = split_normalized(self, out, kept, table);
    Py_DECREF(kept);
    return rc;
}

static int
check_ready(WordPiece *self)
{
    if (self->cache == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "WordPiece.__init__ has not run");
        return -1;
    }
    return 0;
}

static PyObject *
WordPiece_tokenize(WordPiece *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "tokenize(text: str, lower: bool)");
        return NULL;
    }
    if (check_ready(self) < 0) {
        return NULL;
    }
    int lower = PyObject_IsTrue(args[1]);
    if (lower < 0) {
        return NULL;
    }
    PyObject *text = args[0];
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        return NULL;
    }
    int rc = PyUnicode_IS_ASCII(text) ? tokenize_ascii(self, out, text, lower)
                                       : tokenize_unicode(self, out, text, lower);
    if (rc < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

static PyObject *
WordPiece_pieces(WordPiece *self, PyObject *words)
{
    if (check_ready(self) < 0) {
        return NULL;
    }
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        return NULL;
    }
    if (append_all(self, out, words) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

static PyObject *
WordPiece_split(WordPiece *self, PyObject *word)
{
    if (!PyUnicode_Check(word)) {
        PyErr_SetString(PyExc_TypeError, "split(word: str)");
        return NULL;
    }
    if (check_ready(self) < 0) {
        return NULL;
    }
    PyObject *pieces = split_word(self, word);
    if (pieces == NULL || PyTuple_CheckExact(pieces)) {
        PyObject *out = pieces == NULL ? NULL : PySequence_List(pieces);
        Py_XDECREF(pieces);
        return out;
    }
    return Py_BuildValue("[N]", pieces);
}

static int
WordPiece_init(WordPiece *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"vocab", "unknown_token", "max_chars", "max_entries",
                            "table", "fallback", NULL};
    PyObject *vocab, *unknown, *table_fn, *fallback;
    Py_ssize_t max_chars, max_entries;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!UnnOO:WordPiece", names, &PyDict_Type,
                                     &vocab, &unknown, &max_chars, &max_entries, &table_fn,
                                     &fallback)) {
        return -1;
    }
    if (max_chars < 0 || max_entries < 1) {
        PyErr_SetString(PyExc_ValueError, "max_chars must be >= 0 and max_entries >= 1");
        return -1;
    }
    if (!PyCallable_Check(table_fn) || !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "table and fallback must be callables");
        return -1;
    }
    PyObject *cache = PyDict_New();
    if (cache == NULL) {
        return -1;
    }
    if (build_vocab(self, vocab) < 0) {
        Py_DECREF(cache);
        return -1;
    }
    Py_XSETREF(self->unknown, Py_NewRef(unknown));
    Py_XSETREF(self->table_fn, Py_NewRef(table_fn));
    Py_XSETREF(self->fallback, Py_NewRef(fallback));
    Py_XSETREF(self->cache, cache);
    Py_CLEAR(self->table);
    self->max_chars = max_chars;
    self->max_entries = max_entries;
    return 0;
}

static Py_ssize_t
WordPiece_len(WordPiece *self)
{
    return self->cache == NULL ? 0 : PyDict_GET_SIZE(self->cache);
}

static int
WordPiece_traverse(WordPiece *self, visitproc visit, void *arg)
{
    Py_VISIT(self->tokens);
    Py_VISIT(self->unknown);
    Py_VISIT(self->cache);
    Py_VISIT(self->table_fn);
    Py_VISIT(self->table);
    Py_VISIT(self->fallback);
    return 0;
}

static int
WordPiece_clear(WordPiece *self)
{
    Py_CLEAR(self->tokens);
    Py_CLEAR(self->unknown);
    Py_CLEAR(self->cache);
    Py_CLEAR(self->table_fn);
    Py_CLEAR(self->table);
    Py_CLEAR(self->fallback);
    return 0;
}

static void
WordPiece_dealloc(WordPiece *self)
{
    PyObject_GC_UnTrack(self);
    WordPiece_clear(self);
    PyMem_Free(self->slots);
    PyMem_Free(self->pool);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef WordPiece_methods[] = {
    {"tokenize", (PyCFunction)(void (*)(void))WordPiece_tokenize, METH_FASTCALL,
     "tokenize(text, lower) -> word pieces of a text (basic tokenization, then WordPiece)"},
    {"pieces", (PyCFunction)WordPiece_pieces, METH_O,
     "pieces(words) -> word pieces of already basic-tokenized words, in order"},
    {"split", (PyCFunction)WordPiece_split, METH_O,
     "split(word) -> word pieces of one word, bypassing the cache"},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods WordPiece_as_sequence = {
    .sq_length = (lenfunc)WordPiece_len,
};

static PyTypeObject WordPieceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gluon_nlp_core.text._wordpiece.WordPiece",
    .tp_doc = "WordPiece(vocab, unknown_token, max_chars, max_entries, table, fallback):"
              " BERT tokenization with a bounded word cache; len() is the cache size.",
    .tp_basicsize = sizeof(WordPiece),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)WordPiece_init,
    .tp_dealloc = (destructor)WordPiece_dealloc,
    .tp_traverse = (traverseproc)WordPiece_traverse,
    .tp_clear = (inquiry)WordPiece_clear,
    .tp_methods = WordPiece_methods,
    .tp_as_sequence = &WordPiece_as_sequence,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "gluon_nlp_core.text._wordpiece",
    .m_doc = "Native BERT tokenization; see _bert_fast.py for the Python equivalent.",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__wordpiece(void)
{
    if (PyType_Ready(&WordPieceType) < 0) {
        return NULL;
    }
    if (normalize == NULL) {
        PyObject *unicodedata = PyImport_ImportModule("unicodedata");
        if (unicodedata == NULL) {
            return NULL;
        }
        normalize = PyObject_GetAttrString(unicodedata, "normalize");
        Py_DECREF(unicodedata);
        nfd_str = PyUnicode_InternFromString("NFD");
        if (normalize == NULL || nfd_str == NULL) {
            return NULL;
        }
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "WordPiece", (PyObject *)&WordPieceType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
