"""The compiled SVMlight / LETOR reader behind :func:`ssvm.datasets.load_letor`.

The file is read once, in chunks, and each chunk is parsed without the GIL straight into growable
C buffers that become the CSR arrays, the labels and the qids: no Python object per line or token.
A line is parsed here only when it is plainly well formed (ASCII, decimal numbers, digits-only
indices, no duplicate index); any other line, whether an error or a form this parser leaves alone
(``1e-400``, ``+3:1``, a non-ASCII character), goes whole to ``slow_line``, the pure-Python parser of
one line (:func:`ssvm.datasets._letor_lines.parse_line`), which raises the error naming the line or
returns the row. So every message and every accepted form is the Python parser's, and this module
only has to agree with it on the lines it accepts.

Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (Python's universal newlines), a UTF-8 byte-order mark
opening the file is skipped, and tokens are split at the ASCII characters ``str.split`` splits at.
Buffers grow by ``realloc`` (large blocks are remapped, not copied) and are shrunk to their size at
the end; the column indices are 64-bit while reading and narrowed in place to 32 bits when the
matrix allows it, as scipy would narrow them.
"""

import numpy as np

from cpython.bytearray cimport PyByteArray_AS_STRING
from cython cimport view
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcmp, memmove
from libcpp.algorithm cimport sort
from libcpp.utility cimport pair
from libcpp.vector cimport vector

cdef extern from * nogil:
    """
    #include <charconv>
    #include <cmath>
    #include <cstdint>
    #include <system_error>

    static const double ssvm_powers_of_ten[23] = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

    /* The decimal number that starts at first (and stops before last), correctly rounded as
       Python's float() rounds it: 1, with *out and *end (where the number stops), when it is a
       finite number, else 0. A number of at most 19 digits, no exponent and a mantissa up to 2^53
       is m / 10^k with m and 10^k exact doubles (k <= 22), so one division rounds it correctly
       (Clinger's fast path); any other is left to std::from_chars (also correctly rounded). A
       leading '+' is accepted, as float() accepts it. */
    static inline int ssvm_scan_double(const char* first, const char* last, const char** end,
                                       double* out) {
        const char* p = first;
        bool negative = false;
        if (p < last && (*p == '+' || *p == '-')) {
            negative = *p == '-';
            ++p;
        }
        std::uint64_t mantissa = 0;
        int digits = 0, exponent = 0;
        while (p < last && (unsigned)(*p - '0') < 10u) {
            mantissa = mantissa * 10 + (unsigned)(*p - '0');
            ++digits;
            ++p;
        }
        if (p < last && *p == '.') {
            ++p;
            while (p < last && (unsigned)(*p - '0') < 10u) {
                mantissa = mantissa * 10 + (unsigned)(*p - '0');
                ++digits;
                --exponent;
                ++p;
            }
        }
        if (digits > 0 && digits <= 19 && mantissa <= (std::uint64_t(1) << 53) && exponent >= -22
                && !(p < last && (*p == 'e' || *p == 'E'))) {
            double value = (double)mantissa;
            if (exponent) value /= ssvm_powers_of_ten[-exponent];
            *out = negative ? -value : value;
            *end = p;
            return 1;
        }
        p = first;
        if (p < last && *p == '+') {
            ++p;
            if (p < last && (*p == '+' || *p == '-')) return 0;
        }
        auto result = std::from_chars(p, last, *out, std::chars_format::general);
        if (result.ec != std::errc() || !std::isfinite(*out)) return 0;
        *end = result.ptr;
        return 1;
    }
    """
    int ssvm_scan_double(const char* first, const char* last, const char** end, double* out)

__all__ = ["SvmlightParser"]

cdef enum LineStatus:
    LINE_ROW
    LINE_BLANK
    LINE_SLOW
    LINE_INCOMPLETE
    LINE_NO_MEMORY

cdef enum:
    MAX_DIGITS = 18  # an integer of at most 18 digits fits in int64; longer ones go to Python


cdef struct Buffer:
    char* ptr
    Py_ssize_t size  # items in use
    Py_ssize_t capacity  # items allocated
    Py_ssize_t itemsize


cdef struct State:
    Buffer data  # float64, one per stored entry
    Buffer indices  # int64 while reading
    Buffer indptr  # int64, n_rows + 1
    Buffer labels  # float64, one per row
    Buffer qids  # int64, one per row when the rows carry qid:
    Buffer run_lines  # int64, the line of each row whose qid differs from the row before
    int64_t lineno  # lines consumed so far
    int has_qid  # -1 before the first row, else whether the first row has qid:
    bint one_based  # zero_based=False: index 1 is column 0
    int64_t last_qid
    int64_t max_index  # the largest column index (as stored) and the first line that has it
    int64_t max_index_line
    bint saw_zero  # some row has column 0


cdef struct LineSpan:
    Py_ssize_t start  # of the line
    Py_ssize_t content_end  # before its terminator
    Py_ssize_t next  # start of the next line


cdef void init_buffer(Buffer* buffer, Py_ssize_t itemsize) noexcept nogil:
    buffer.ptr = NULL
    buffer.size = buffer.capacity = 0
    buffer.itemsize = itemsize


cdef int reserve(Buffer* buffer, Py_ssize_t extra) noexcept nogil:
    """Room for ``extra`` more items; -1 when memory runs out."""
    cdef Py_ssize_t needed = buffer.size + extra
    cdef Py_ssize_t capacity
    cdef char* grown
    if needed <= buffer.capacity:
        return 0
    capacity = max(needed, buffer.capacity + buffer.capacity // 2, 1024)
    grown = <char*>realloc(buffer.ptr, capacity * buffer.itemsize)
    if grown == NULL:
        return -1
    buffer.ptr = grown
    buffer.capacity = capacity
    return 0


# What each byte is to the tokenizer: part of a token, a space (the ASCII characters str.split()
# splits at, line breaks excepted), the end of a line's data (\n, \r, #)
cdef enum CharClass:
    TOKEN_CHAR
    SPACE
    DATA_END

cdef CharClass CHAR_CLASS[256]
for _c in range(256):
    CHAR_CLASS[_c] = TOKEN_CHAR
for _c in (32, 9, 11, 12, 28, 29, 30, 31):
    CHAR_CLASS[_c] = SPACE
for _c in (10, 13, 35):
    CHAR_CLASS[_c] = DATA_END


cdef inline bint scan_digits(const unsigned char* p, const unsigned char* last, const unsigned char** end,
                             int64_t* out) noexcept nogil:
    """A non-negative integer of 1 to MAX_DIGITS digits starting at ``p``; ``end``: where it stops."""
    cdef int64_t value = 0
    cdef const unsigned char* first = p
    while p < last and 48 <= p[0] <= 57:
        value = value * 10 + (p[0] - 48)
        p += 1
        if p - first > MAX_DIGITS:
            return False
    end[0] = p
    out[0] = value
    return p > first


cdef inline bint scan_double(const unsigned char* p, const unsigned char* last, const unsigned char** end,
                             double* out) noexcept nogil:
    return ssvm_scan_double(<const char*>p, <const char*>last, <const char**>end, out)


cdef inline bint token_ends(const unsigned char* p, const unsigned char* last) noexcept nogil:
    return p == last or CHAR_CLASS[p[0]] != TOKEN_CHAR


cdef bint sort_row(int64_t* indices, double* values, Py_ssize_t count) noexcept nogil:
    """Sort one row's entries by index; False when an index repeats (Python names it)."""
    cdef vector[pair[int64_t, double]] entries
    cdef Py_ssize_t i
    entries.reserve(count)
    for i in range(count):
        entries.push_back(pair[int64_t, double](indices[i], values[i]))
    sort(entries.begin(), entries.end())
    for i in range(count):
        indices[i] = entries[i].first
        values[i] = entries[i].second
        if i and indices[i] == indices[i - 1]:
            return False
    return True


cdef int commit_row(State* s, Py_ssize_t count, double label, bint has_qid, int64_t qid) noexcept nogil:
    """Append the row whose ``count`` entries sit after the stored ones (sorted, no repeats)."""
    cdef int64_t* indices = <int64_t*>s.indices.ptr + s.indices.size
    cdef Py_ssize_t row = s.labels.size
    if reserve(&s.labels, 1) or reserve(&s.indptr, 1) or reserve(&s.qids, 1) or reserve(&s.run_lines, 1):
        return -1
    if count:
        if indices[0] == 0:
            s.saw_zero = True
        if indices[count - 1] > s.max_index:
            s.max_index = indices[count - 1]
            s.max_index_line = s.lineno
    (<double*>s.labels.ptr)[row] = label
    s.labels.size += 1
    s.data.size += count
    s.indices.size += count
    (<int64_t*>s.indptr.ptr)[row + 1] = s.data.size
    s.indptr.size += 1
    if has_qid:
        (<int64_t*>s.qids.ptr)[row] = qid
        s.qids.size += 1
        if row == 0 or qid != s.last_qid:
            (<int64_t*>s.run_lines.ptr)[s.run_lines.size] = s.lineno
            s.run_lines.size += 1
        s.last_qid = qid
    if s.has_qid < 0:
        s.has_qid = has_qid
    return 0


cdef LineStatus parse_line(State* s, const unsigned char* text, Py_ssize_t start, Py_ssize_t end,
                           bint final, LineSpan* span) noexcept nogil:
    """Parse the line at ``text[start:]``: a row appended, a blank line, or a line for Python.

    The caller has reserved room for every entry the line can hold. LINE_INCOMPLETE: the line
    does not end before ``end`` (or ends with a ``\\r`` there) and more text follows. Each token
    is read as a number where it starts; a token that is not plainly one (or has a '_' or a
    non-ASCII byte, which cannot be part of a number read here) makes the line Python's.
    """
    cdef const unsigned char* p = text + start
    cdef const unsigned char* last = text + end
    cdef int64_t* indices = <int64_t*>s.indices.ptr + s.indices.size
    cdef double* values = <double*>s.data.ptr + s.data.size
    cdef Py_ssize_t count = 0, n_tokens = 0
    cdef bint slow = False, has_qid = False, is_sorted = True, ok
    cdef double label = 0.0
    cdef int64_t qid = 0, index = 0
    while True:
        while p < last and CHAR_CLASS[p[0]] == SPACE:
            p += 1
        if p == last or CHAR_CLASS[p[0]] == DATA_END:
            break
        n_tokens += 1
        if n_tokens == 1:
            ok = scan_double(p, last, &p, &label)
        elif n_tokens == 2 and last - p >= 4 and memcmp(p, b"qid:", 4) == 0:
            has_qid = True
            ok = scan_digits(p + 4, last, &p, &qid)
        else:
            ok = (scan_digits(p, last, &p, &index) and p < last and p[0] == 58  # ':'
                  and scan_double(p + 1, last, &p, &values[count]))
            if s.one_based:
                index -= 1
                ok = ok and index >= 0
            if count and index <= indices[count - 1]:
                is_sorted = False
            indices[count] = index
            count += 1
        if not (ok and token_ends(p, last)):
            slow = True
            while p < last and p[0] != 10 and p[0] != 13:
                p += 1
            break
    if p < last and p[0] == 35:  # a comment runs to the end of the line
        while p < last and p[0] != 10 and p[0] != 13:
            p += 1
    span.start = start
    span.content_end = p - text
    if p == last:
        if not final:
            return LINE_INCOMPLETE
        span.next = end
    elif p[0] == 10:
        span.next = span.content_end + 1
    elif p + 1 < last:
        span.next = span.content_end + (2 if p[1] == 10 else 1)
    elif final:
        span.next = end
    else:
        return LINE_INCOMPLETE  # a CR last: the next chunk may open with its LF
    s.lineno += 1
    if n_tokens == 0:
        return LINE_BLANK
    if slow or (s.has_qid >= 0 and s.has_qid != has_qid):
        return LINE_SLOW
    if not is_sorted and not sort_row(indices, values, count):
        return LINE_SLOW
    if commit_row(s, count, label, has_qid, qid):
        return LINE_NO_MEMORY
    return LINE_ROW


cdef LineStatus parse_lines(State* s, const unsigned char* text, Py_ssize_t start, Py_ssize_t end,
                            bint final, LineSpan* span) noexcept nogil:
    """Parse lines from ``text[start:end]`` until one is for Python or is incomplete (or none is
    left: LINE_INCOMPLETE with ``span.start == end``)."""
    cdef LineStatus status
    span.start = start
    while span.start < end:
        status = parse_line(s, text, span.start, end, final, span)
        if status == LINE_ROW or status == LINE_BLANK:
            span.start = span.next
            continue
        return status
    return LINE_INCOMPLETE


cdef object owned_array(Buffer* buffer, object dtype, bytes format):
    """The buffer as a numpy array that frees it (shrunk to its size); the buffer is emptied."""
    cdef view.array wrapper
    cdef char* shrunk
    if buffer.size == 0:
        free(buffer.ptr)
        buffer.ptr = NULL
        buffer.capacity = 0
        return np.zeros(0, dtype=dtype)
    shrunk = <char*>realloc(buffer.ptr, buffer.size * buffer.itemsize)
    if shrunk != NULL:
        buffer.ptr = shrunk
    wrapper = view.array(shape=(buffer.size,), itemsize=buffer.itemsize, format=format, mode="c",
                         allocate_buffer=False)
    wrapper.data = buffer.ptr
    wrapper.callback_free_data = free
    buffer.ptr = NULL
    buffer.size = buffer.capacity = 0
    return np.asarray(wrapper)


cdef void narrow(Buffer* buffer, int64_t shift) noexcept nogil:
    """Subtract ``shift`` from an int64 buffer and store it as int32 in place (the first half)."""
    cdef int64_t* wide = <int64_t*>buffer.ptr
    cdef int32_t* narrow_ = <int32_t*>buffer.ptr
    cdef Py_ssize_t i
    for i in range(buffer.size):
        narrow_[i] = <int32_t>(wide[i] - shift)  # writes behind what it still has to read
    buffer.itemsize = 4


cdef class SvmlightParser:
    """Reads a whole SVMlight / LETOR stream into CSR arrays, labels and qids (one use).

    Parameters
    ----------
    one_based : bool
        Index 1 is column 0 (``zero_based=False``); otherwise indices are stored as written.
    slow_line : callable
        ``slow_line(raw_line, lineno, first_row_has_qid)`` with the line's bytes (no terminator),
        its number and None / True / False (the first row's ``qid:``): raises the line's error,
        or returns None (no row) or ``(label, qid or None, indices, values)``, the indices
        int64 (as stored), sorted and distinct, the values float64.
    """

    cdef State s
    cdef object slow_line

    def __cinit__(self, bint one_based, slow_line):
        self.slow_line = slow_line
        init_buffer(&self.s.data, 8)
        init_buffer(&self.s.indices, 8)
        init_buffer(&self.s.indptr, 8)
        init_buffer(&self.s.labels, 8)
        init_buffer(&self.s.qids, 8)
        init_buffer(&self.s.run_lines, 8)
        self.s.lineno = 0
        self.s.has_qid = -1
        self.s.one_based = one_based
        self.s.last_qid = 0
        self.s.max_index = -1
        self.s.max_index_line = 0
        self.s.saw_zero = False
        if reserve(&self.s.indptr, 1):
            raise MemoryError()
        (<int64_t*>self.s.indptr.ptr)[0] = 0
        self.s.indptr.size = 1

    def __dealloc__(self):
        free(self.s.data.ptr)
        free(self.s.indices.ptr)
        free(self.s.indptr.ptr)
        free(self.s.labels.ptr)
        free(self.s.qids.ptr)
        free(self.s.run_lines.ptr)

    def read(self, handle, Py_ssize_t chunk_bytes=1 << 20):
        """Parse everything ``handle.readinto`` gives, ``chunk_bytes`` at a time."""
        cdef bytearray text = bytearray(max(chunk_bytes, 4))
        cdef Py_ssize_t filled = 0, start = 0, got
        cdef bint final = False, opened = False
        cdef LineSpan span
        cdef LineStatus status
        cdef unsigned char* chars
        if chunk_bytes < 1:
            raise ValueError(f"chunk_bytes must be positive, got {chunk_bytes}")
        while not final:
            if filled + chunk_bytes > len(text):  # a line longer than the text read so far
                grown = bytearray(max(2 * len(text), filled + chunk_bytes))
                grown[:filled] = text[:filled]
                text = grown
            got = handle.readinto(memoryview(text)[filled:filled + chunk_bytes]) or 0
            final = got == 0
            filled += got
            if not opened:  # a UTF-8 byte-order mark opening the file is not text
                if filled < 3 and not final:
                    continue
                opened = True
                start = 3 if text[:3] == b"\xef\xbb\xbf" else 0
            chars = <unsigned char*>PyByteArray_AS_STRING(text)
            while True:
                self._reserve_for(filled - start)
                with nogil:
                    status = parse_lines(&self.s, chars, start, filled, final, &span)
                if status == LINE_NO_MEMORY:
                    raise MemoryError("out of memory while reading the file")
                if status == LINE_INCOMPLETE:
                    break
                self._add_slow_row(bytes(text[span.start:span.content_end]))
                start = span.next
            memmove(chars, chars + span.start, filled - span.start)
            filled -= span.start
            start = 0

    cdef _reserve_for(self, Py_ssize_t n_bytes):
        """Room for every row and entry ``n_bytes`` of text can hold."""
        cdef Py_ssize_t most = n_bytes // 2 + 2
        if (reserve(&self.s.data, most) or reserve(&self.s.indices, most) or reserve(&self.s.labels, most)
                or reserve(&self.s.indptr, most) or reserve(&self.s.qids, most)
                or reserve(&self.s.run_lines, most)):
            raise MemoryError("out of memory while reading the file")

    cdef _add_slow_row(self, bytes line):
        first_row_has_qid = None if self.s.has_qid < 0 else bool(self.s.has_qid)
        row = self.slow_line(line, self.s.lineno, first_row_has_qid)
        if row is None:
            return
        label, qid, indices_, values_ = row
        cdef const int64_t[::1] indices = np.ascontiguousarray(indices_, dtype=np.int64)
        cdef const double[::1] values = np.ascontiguousarray(values_, dtype=np.float64)
        cdef Py_ssize_t i, count = indices.shape[0]
        if reserve(&self.s.data, count) or reserve(&self.s.indices, count):
            raise MemoryError("out of memory while reading the file")
        for i in range(count):
            (<int64_t*>self.s.indices.ptr)[self.s.indices.size + i] = indices[i]
            (<double*>self.s.data.ptr)[self.s.data.size + i] = values[i]
        if commit_row(&self.s, count, label, qid is not None, 0 if qid is None else qid):
            raise MemoryError("out of memory while reading the file")

    @property
    def n_rows(self):
        """Rows read."""
        return self.s.labels.size

    @property
    def nnz(self):
        """Entries stored."""
        return self.s.data.size

    @property
    def has_qid(self):
        """Whether the rows carry ``qid:`` (None: no row)."""
        return None if self.s.has_qid < 0 else bool(self.s.has_qid)

    @property
    def max_index(self):
        """``(largest index as stored, -1 without entries; the first line that has it)``."""
        return self.s.max_index, self.s.max_index_line

    @property
    def saw_zero(self):
        """Whether some row has index 0 (as stored)."""
        return bool(self.s.saw_zero)

    def arrays(self, int64_t shift, bint int32_indices):
        """Hand the buffers over (once): ``(data, indices, indptr, labels, qids, run_lines)``.

        ``shift`` is subtracted from every column index; with ``int32_indices`` the indices and
        ``indptr`` become int32 in place (the caller checks that they fit). ``run_lines`` holds
        the line of each row that opens a run of equal qids.
        """
        cdef Py_ssize_t i
        cdef int64_t* indices = <int64_t*>self.s.indices.ptr
        with nogil:
            if int32_indices:
                narrow(&self.s.indices, shift)
                narrow(&self.s.indptr, 0)
            elif shift:
                for i in range(self.s.indices.size):
                    indices[i] -= shift
        index_type, index_format = (np.int32, b"i") if int32_indices else (np.int64, b"q")
        return (owned_array(&self.s.data, np.float64, b"d"),
                owned_array(&self.s.indices, index_type, index_format),
                owned_array(&self.s.indptr, index_type, index_format),
                owned_array(&self.s.labels, np.float64, b"d"),
                owned_array(&self.s.qids, np.int64, b"q"),
                owned_array(&self.s.run_lines, np.int64, b"q"))
