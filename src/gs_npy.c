/* gs_npy.c - NumPy .npy tensor files and the deterministic input generator.

   The .npy layout (NumPy's format.py, "NEP 1"):
     bytes 0..5   "\x93NUMPY"
     byte  6, 7   major, minor version (1.x: 2-byte header length; 2.x and 3.x: 4-byte; 3.x is UTF-8)
     then         header length (little-endian), then the header: a Python dict literal
                  {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces, ending '\n'
     then         the array data, row-major (C order) when fortran_order is False.
   Element types: NumPy's map one to one: '|b1' pred, '|i1' '<i2' '<i4' '<i8' s8..s64, '|u1' '<u2' '<u4' '<u8'
   u8..u64, '<f2' '<f4' '<f8' f16/f32/f64, '<c8' '<c16' c64/c128. The types NumPy lacks are written as the
   nearest wider NumPy type holding every value exactly: bf16 and f8e8m0fnu as '<f4', the other 8-bit floats
   and f4e2m1fn as '<f2', s2/s4 as '|i1', u2/u4 as '|u1'; with GS_NPY_RAW (`--npy-raw`) the narrow floats are
   written as their bits in a same-size unsigned type ('<u2' for bf16, '|u1' for the 8- and 4-bit types, s4/u4
   and s2/u2 as their low bits in '|u1'). Reading into such a type accepts either form: a float file is rounded
   to the type (nearest even, as convert), a same-size unsigned file is taken as bits, and a 2/4-bit integer
   file must hold values in range. Reading '|u1' into pred (any nonzero byte is 1) is accepted as before.
   A NaN keeps its sign and payload through the wider file and back; a signaling one comes back quiet (the
   rounding is convert's, and IEEE 754 conversions quiet a signaling NaN). */
#include "gs_internal.h"

#include <errno.h>

#define GS__NPY_MAX_HEADER ((uint32_t)1 << 20)

GS__FN bool gs__host_little_endian(void) {
    uint32_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* ---- header parsing: a Python dict literal with the keys descr, fortran_order and shape ---- */
typedef struct gs__npy_hdr {
    const char *p, *end;
    char descr[16];
    int fortran;              /* -1 not seen, else 0/1 */
    int rank;                 /* -1 not seen */
    int64_t dims[GS_MAX_RANK];
    const char *problem;      /* first problem found, static text */
    int too_many_dims;
} gs__npy_hdr;

GS__FN void gs__npy_ws(gs__npy_hdr *h) {
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r')) h->p++;
}

GS__FN bool gs__npy_eat(gs__npy_hdr *h, char c) {
    gs__npy_ws(h);
    if (h->p < h->end && *h->p == c) {
        h->p++;
        return true;
    }
    return false;
}

/* A quoted string ('...' or "...", no escapes: the keys and descrs never need them) into buf. */
GS__FN bool gs__npy_string(gs__npy_hdr *h, char *buf, size_t cap) {
    char q;
    size_t n = 0;
    gs__npy_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return false;
    q = *h->p++;
    while (h->p < h->end && *h->p != q) {
        if (*h->p == '\\' || n + 1 >= cap) return false;
        buf[n++] = *h->p++;
    }
    if (h->p >= h->end) return false;
    h->p++;
    buf[n] = 0;
    return true;
}

GS__FN bool gs__npy_word(gs__npy_hdr *h, const char *w) {
    size_t n = strlen(w);
    gs__npy_ws(h);
    if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
        h->p += n;
        return true;
    }
    return false;
}

/* "(2, 3)", "(5,)", "()"; NumPy may also write "(5L,)" on old Python 2 files. */
GS__FN bool gs__npy_shape(gs__npy_hdr *h) {
    int rank = 0;
    if (!gs__npy_eat(h, '(')) return false;
    for (;;) {
        int64_t d = 0;
        int digits = 0;
        if (gs__npy_eat(h, ')')) break;
        gs__npy_ws(h);
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            int dig = *h->p - '0';
            if (d > (INT64_MAX - dig) / 10) return false;
            d = d * 10 + dig;
            h->p++;
            digits++;
        }
        if (!digits) return false;
        if (h->p < h->end && *h->p == 'L') h->p++;
        if (rank >= GS_MAX_RANK) h->too_many_dims = 1;
        else h->dims[rank] = d;
        rank++;
        if (gs__npy_eat(h, ',')) continue;
        if (gs__npy_eat(h, ')')) break;
        return false;
    }
    /* a one-element tuple needs its comma in Python, but accept "(5)" too */
    h->rank = rank;
    return true;
}

GS__FN bool gs__npy_parse_header(gs__npy_hdr *h) {
    char key[32];
    h->fortran = -1;
    h->rank = -1;
    h->descr[0] = 0;
    if (!gs__npy_eat(h, '{')) {
        h->problem = "the header is not a dict";
        return false;
    }
    for (;;) {
        if (gs__npy_eat(h, '}')) break;
        if (!gs__npy_string(h, key, sizeof key)) {
            h->problem = "expected a quoted key in the header dict";
            return false;
        }
        if (!gs__npy_eat(h, ':')) {
            h->problem = "expected ':' after a key in the header dict";
            return false;
        }
        if (strcmp(key, "descr") == 0) {
            if (!gs__npy_string(h, h->descr, sizeof h->descr)) {
                h->problem = "'descr' is not a simple type string such as '<f4' (structured dtypes are not supported)";
                return false;
            }
        } else if (strcmp(key, "fortran_order") == 0) {
            if (gs__npy_word(h, "True")) h->fortran = 1;
            else if (gs__npy_word(h, "False")) h->fortran = 0;
            else {
                h->problem = "'fortran_order' is not True or False";
                return false;
            }
        } else if (strcmp(key, "shape") == 0) {
            if (!gs__npy_shape(h)) {
                h->problem = "'shape' is not a tuple of non-negative integers";
                return false;
            }
        } else {
            h->problem = "the header dict has a key other than 'descr', 'fortran_order' and 'shape'";
            return false;
        }
        if (gs__npy_eat(h, ',')) continue;
        if (gs__npy_eat(h, '}')) break;
        h->problem = "expected ',' or '}' in the header dict";
        return false;
    }
    if (h->descr[0] == 0 || h->fortran < 0 || h->rank < 0) {
        h->problem = "the header dict lacks one of 'descr', 'fortran_order' and 'shape'";
        return false;
    }
    return true;
}

/* NumPy's types: descr (type letter and size; the byte-order character is added) and gs dtype */
static const struct { const char *descr; gs_dtype t; } gs__npy_types[] = {
    {"b1", GS_PRED}, {"i1", GS_S8}, {"i2", GS_S16}, {"i4", GS_S32}, {"i8", GS_S64}, {"u1", GS_U8}, {"u2", GS_U16},
    {"u4", GS_U32}, {"u8", GS_U64}, {"f2", GS_F16}, {"f4", GS_F32}, {"f8", GS_F64}, {"c8", GS_C64}, {"c16", GS_C128},
};

/* descr -> dtype (GS_DTYPE_INVALID if unsupported). */
GS__FN gs_dtype gs__npy_descr_dtype(const char *d, int *big_endian) {
    char order = d[0];
    const char *t = d + 1;
    int i;
    *big_endian = 0;
    if (order != '<' && order != '>' && order != '|' && order != '=') return GS_DTYPE_INVALID;
    for (i = 0; i < GS__COUNTOF(gs__npy_types); i++)
        if (strcmp(t, gs__npy_types[i].descr) == 0) {
            if (order == '>' && gs_dtype_size(gs__npy_types[i].t) > 1) {   /* byte order matters */
                *big_endian = 1;
                return GS_DTYPE_INVALID;
            }
            return gs__npy_types[i].t;
        }
    return GS_DTYPE_INVALID;
}

/* The NumPy type a dtype is written as (raw: the bits of a type NumPy lacks, in a same-size unsigned type). */
GS__FN gs_dtype gs__npy_file_dtype(gs_dtype t, bool raw) {
    int i;
    for (i = 0; i < GS__COUNTOF(gs__npy_types); i++)
        if (gs__npy_types[i].t == t) return t;
    if (t == GS_S2 || t == GS_S4) return raw ? GS_U8 : GS_S8;
    if (t == GS_U2 || t == GS_U4) return GS_U8;
    if (t == GS_BF16) return raw ? GS_U16 : GS_F32;
    if (t == GS_F8E8M0FNU) return raw ? GS_U8 : GS_F32;
    if (gs__is_float(t)) return raw ? GS_U8 : GS_F16;
    return GS_DTYPE_INVALID;
}

/* "<f4", "|u1": the full descr of file dtype f */
GS__FN void gs__npy_descr_full(gs_dtype f, char *out, size_t cap) {
    int i;
    out[0] = 0;
    for (i = 0; i < GS__COUNTOF(gs__npy_types); i++)
        if (gs__npy_types[i].t == f)
            snprintf(out, cap, "%c%s", gs_dtype_size(f) == 1 ? '|' : '<', gs__npy_types[i].descr);
}

/* Reverses the bytes of each part (the element, or each half of a complex one) of n elements of size es in
   place (big-endian hosts). */
GS__FN void gs__npy_swap(unsigned char *p, size_t n, size_t es, bool complex_type) {
    size_t i, k, o, part = complex_type ? es / 2 : es;
    if (part < 2 || gs__host_little_endian()) return;
    for (i = 0; i < n; i++, p += es)
        for (o = 0; o < es; o += part)
            for (k = 0; k < part / 2; k++) {
                unsigned char t = p[o + k];
                p[o + k] = p[o + part - 1 - k];
                p[o + part - 1 - k] = t;
            }
}

/* Element i of file data (NumPy type f, storage format) into element i of `want` storage data. Returns false
   when the value does not fit (a 2/4-bit integer out of range, raw bits wider than the type). */
GS__FN bool gs__npy_elem_in(gs_dtype f, const unsigned char *src, gs_dtype want, unsigned char *dst, size_t i) {
    unsigned char one[16], two[16];
    memset(two, 0, sizeof two);
    gs__to_compute(f, one, src + i * gs_dtype_size(f), 1);
    if (want == GS_PRED) {
        two[0] = (unsigned char)(gs__ld_i(f, one, 0) != 0);
    } else if (gs__is_float(want) && gs__is_float(f)) {
        gs__set_elem(want, two, 0, gs__ld_f(f, one, 0));
    } else if (gs__is_float(want)) {   /* raw bits */
        uint64_t bits = gs__ld_i(f, one, 0);
        int w = gs__dt(want)->bits;
        if (w < 16 && bits >> w) return false;
        if (gs_dtype_size(want) == 2) {
            uint16_t b16 = (uint16_t)bits;
            memcpy(dst + i * 2, &b16, 2);
        } else {
            dst[i] = (unsigned char)bits;
        }
        return true;
    } else {   /* 2/4-bit integers from s8/u8 (or their raw low bits from u8) */
        uint64_t v = gs__ld_i(f, one, 0);
        if (gs__int_wrap(want, v) != v && !(f == GS_U8 && gs__is_signed(want) && v < 16 && (v >> gs__dt(want)->bits) == 0))
            return false;
        gs__st_i(want, two, 0, v);
    }
    gs__to_storage(want, dst + i * gs_dtype_size(want), two, 1);
    return true;
}

/* Whether a file of NumPy type f can be read as `want` (besides f == want). */
GS__FN bool gs__npy_convertible(gs_dtype f, gs_dtype want) {
    if (want == GS_PRED) return f == GS_U8;
    if (gs__npy_file_dtype(want, false) == want) return false;   /* NumPy has it: only itself */
    if (gs__is_float(want)) return gs__is_float(f) || f == gs__npy_file_dtype(want, true);
    if (want == GS_S2 || want == GS_S4) return f == GS_S8 || f == GS_U8;
    if (want == GS_U2 || want == GS_U4) return f == GS_U8;
    return false;
}

/* Reads the file up to the start of the data; on success the stream is positioned at the data. */
GS__FN gs_result gs__npy_read_header(gs_ctx *ctx, FILE *f, const char *path, gs__npy_hdr *h, char **hbuf) {
    unsigned char pre[12];
    uint32_t hlen;
    size_t prefix, got;
    char *buf;
    *hbuf = NULL;
    got = fread(pre, 1, 8, f);
    if (got != 8 && ferror(f)) return gs__err(ctx, GS_ERR_IO, "%s: read error: %s", path, strerror(errno));
    if (got != 8 || memcmp(pre, "\x93NUMPY", 6) != 0)
        return gs__err(ctx, GS_ERR_PARSE, "%s: not a .npy file (it does not start with \\x93NUMPY)", path);
    if (pre[6] < 1 || pre[6] > 3)
        return gs__err(ctx, GS_ERR_PARSE, "%s: unsupported .npy format version %d.%d (1.x, 2.x and 3.x are read)",
                       path, pre[6], pre[7]);
    prefix = pre[6] == 1 ? 2 : 4;
    if (fread(pre + 8, 1, prefix, f) != prefix)
        return gs__err(ctx, GS_ERR_PARSE, "%s: truncated .npy file (the header length is missing)", path);
    hlen = (uint32_t)pre[8] | ((uint32_t)pre[9] << 8);
    if (prefix == 4) hlen |= ((uint32_t)pre[10] << 16) | ((uint32_t)pre[11] << 24);
    if (hlen > GS__NPY_MAX_HEADER)
        return gs__err(ctx, GS_ERR_PARSE, "%s: .npy header length %lu is implausibly large", path, (unsigned long)hlen);
    buf = (char *)gs__malloc(ctx, (size_t)hlen + 1);
    if (!buf) return GS_ERR_OUT_OF_MEMORY;
    if (fread(buf, 1, hlen, f) != hlen) {
        gs__free(ctx, buf);
        return gs__err(ctx, GS_ERR_PARSE, "%s: truncated .npy file (the header is shorter than its length %lu)",
                       path, (unsigned long)hlen);
    }
    buf[hlen] = 0;
    memset(h, 0, sizeof *h);
    h->p = buf;
    h->end = buf + hlen;
    *hbuf = buf;
    if (!gs__npy_parse_header(h)) return gs__err(ctx, GS_ERR_PARSE, "%s: bad .npy header: %s", path, h->problem);
    gs__npy_ws(h);
    if (h->p != h->end) return gs__err(ctx, GS_ERR_PARSE, "%s: bad .npy header: text after the dict", path);
    return GS_OK;
}

/* An open .npy file positioned at its data, with what its header says. */
typedef struct gs__npy_in {
    FILE *f;
    gs__npy_hdr h;
    char *hbuf;
    gs_dtype file_dt, dt;     /* the file's type; the type read (want, or the file's) */
    size_t fsize, numel, nbytes;
    long data_at;             /* offset of the data in the file (-1: the stream cannot seek) */
} gs__npy_in;

GS__FN void gs__npy_close(gs_ctx *ctx, gs__npy_in *in) {
    gs__free(ctx, in->hbuf);
    in->hbuf = NULL;
    if (in->f) fclose(in->f);
    in->f = NULL;
}

/* Opens path and checks its header against want (gs_npy_read's rules) and that the file holds no fewer data
   bytes than the shape needs. On failure the file is closed and the error recorded. */
GS__FN gs_result gs__npy_open(gs_ctx *ctx, const char *path, gs_dtype want, gs__npy_in *in) {
    int big = 0;
    gs_result r;
    memset(in, 0, sizeof *in);
    if (want == GS_TUPLE || (int)want < 0 || want >= GS_DTYPE_COUNT)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_npy_read %s: invalid dtype %d", path, (int)want);
    in->f = fopen(path, "rb");
    if (!in->f) return gs__err(ctx, GS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    r = gs__npy_read_header(ctx, in->f, path, &in->h, &in->hbuf);
    if (r != GS_OK) goto fail;
    in->file_dt = gs__npy_descr_dtype(in->h.descr, &big);
    if (big) {
        r = gs__err(ctx, GS_ERR_PARSE, "%s: big-endian data ('%s') is not supported; save it little-endian "
                    "(arr.astype('<%s'))", path, in->h.descr, in->h.descr + 1);
        goto fail;
    }
    if (in->file_dt == GS_DTYPE_INVALID) {
        r = gs__err(ctx, GS_ERR_PARSE, "%s: dtype '%s' is not supported (use a bool, integer, float or complex "
                    "type, little-endian; in NumPy: arr.astype(numpy.float32))",
                    path, in->h.descr);
        goto fail;
    }
    if (in->h.fortran) {
        r = gs__err(ctx, GS_ERR_PARSE, "%s: Fortran-order arrays are not supported; save a C-order array "
                    "(numpy.ascontiguousarray)", path);
        goto fail;
    }
    if (in->h.too_many_dims) {
        r = gs__err(ctx, GS_ERR_SHAPE, "%s: the array has %d dims, more than GS_MAX_RANK (%d)", path, in->h.rank,
                    GS_MAX_RANK);
        goto fail;
    }
    in->dt = in->file_dt;
    if (want != GS_DTYPE_INVALID && want != in->file_dt) {
        if (!gs__npy_convertible(in->file_dt, want) || want == GS_TOKEN) {
            char d1[8];
            gs__npy_descr_full(gs__npy_file_dtype(want, false), d1, sizeof d1);
            r = gs__err(ctx, GS_ERR_SHAPE, "%s: the file holds '%s' data but %s was expected (%s)", path, in->h.descr,
                        gs_dtype_name(want), d1[0] ? d1 : "no NumPy type");
            goto fail;
        }
        in->dt = want;
    }
    in->fsize = gs_dtype_size(in->file_dt);
    {
        int64_t n = gs__prod64(in->h.rank, in->h.dims), nb;
        if (n < 0 || !gs__mul64(n, (int64_t)in->fsize, &nb) || (uint64_t)nb > (uint64_t)SIZE_MAX) {
            r = gs__err(ctx, GS_ERR_SHAPE, "%s: the array is too large for this machine", path);
            goto fail;
        }
        in->numel = (size_t)n;
        in->nbytes = (size_t)nb;
    }
    {
        /* the data is bounded by the file's length: a short file with a huge header shape is "truncated",
           never a huge allocation (files that cannot seek are read and checked as they come) */
        long at = ftell(in->f), end;
        in->data_at = -1;
        if (at >= 0 && fseek(in->f, 0, SEEK_END) == 0 && (end = ftell(in->f)) >= 0 && fseek(in->f, at, SEEK_SET) == 0) {
            in->data_at = at;
            if ((uint64_t)(end - at) < (uint64_t)in->nbytes) {
                r = gs__err(ctx, GS_ERR_PARSE, "%s: truncated .npy file: the shape needs %llu data bytes, found %llu",
                            path, (unsigned long long)in->nbytes, (unsigned long long)(end - at));
                goto fail;
            }
            if ((uint64_t)(end - at) > (uint64_t)in->nbytes) {
                r = gs__err(ctx, GS_ERR_PARSE, "%s: the file is longer than its header's shape says (%lu data bytes)",
                            path, (unsigned long)in->nbytes);
                goto fail;
            }
        }
    }
    return GS_OK;
fail:
    gs__npy_close(ctx, in);
    return r;
}

/* n file elements at src (already byte-swapped) into `in->dt` storage at dst; first: the index of src[0] in
   the file (for the message). */
GS__FN gs_result gs__npy_convert_in(gs_ctx *ctx, const char *path, const gs__npy_in *in, unsigned char *src,
                                    unsigned char *dst, size_t n, size_t first) {
    size_t i;
    if (in->dt == in->file_dt && in->dt != GS_PRED) {
        if (src != dst) memcpy(dst, src, n * in->fsize);
        return GS_OK;
    }
    /* in place when src == dst: the target is never wider than the file's type, so element i moves from byte
       i * fsize to byte i * (its size), never over an unread element */
    for (i = 0; i < n; i++)
        if (!gs__npy_elem_in(in->file_dt, src, in->dt, dst, i))
            return gs__err(ctx, GS_ERR_SHAPE, "%s: element %lu does not fit %s", path, (unsigned long)(first + i),
                           gs_dtype_name(in->dt));
    return GS_OK;
}

GS_API gs_result gs_npy_read(gs_ctx *ctx, const char *path, gs_dtype want, gs_shape *shape, void **data) {
    gs__npy_in in;
    unsigned char *buf = NULL;
    size_t got;
    gs_result r;

    if (data) *data = NULL;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!path || !shape || !data) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_npy_read: NULL argument");
    r = gs__npy_open(ctx, path, want, &in);
    if (r != GS_OK) return r;
    buf = (unsigned char *)gs__malloc(ctx, in.nbytes);
    if (!buf) {
        r = GS_ERR_OUT_OF_MEMORY;
        goto done;
    }
    got = in.nbytes ? fread(buf, 1, in.nbytes, in.f) : 0;
    if (got != in.nbytes) {
        if (ferror(in.f)) r = gs__err(ctx, GS_ERR_IO, "%s: read error: %s", path, strerror(errno));
        else r = gs__err(ctx, GS_ERR_PARSE, "%s: truncated .npy file: the shape needs %lu data bytes, found %lu",
                         path, (unsigned long)in.nbytes, (unsigned long)got);
        goto done;
    }
    if (fgetc(in.f) != EOF) {
        r = gs__err(ctx, GS_ERR_PARSE, "%s: the file is longer than its header's shape says (%lu data bytes)", path,
                    (unsigned long)in.nbytes);
        goto done;
    }
    gs__npy_swap(buf, in.numel, in.fsize, gs__is_complex(in.file_dt));
    r = gs__npy_convert_in(ctx, path, &in, buf, buf, in.numel, 0);
    if (r != GS_OK) goto done;
    *shape = gs_shape_make(in.dt, in.h.rank, in.h.dims);
    *data = buf;
    buf = NULL;
done:
    gs__free(ctx, buf);
    gs__npy_close(ctx, &in);
    return r;
}

/* Checks the region's arguments against shape; returns a message or NULL. */
GS__FN const char *gs__npy_region_problem(gs_shape shape, const int64_t *offset, const int64_t *count) {
    int d;
    if (shape.rank < 0 || shape.rank > GS_MAX_RANK) return "the shape's rank is out of range";
    if (shape.rank > 0 && (!offset || !count)) return "offset or count is NULL";
    for (d = 0; d < shape.rank; d++)
        if (count[d] < 0 || offset[d] < 0 || offset[d] > shape.dims[d] || count[d] > shape.dims[d] - offset[d])
            return "the region does not lie inside the shape";
    return NULL;
}

GS_API gs_result gs_npy_read_region(gs_ctx *ctx, const char *path, gs_shape shape, const int64_t *offset,
                                    const int64_t *count, void *data) {
    gs__npy_in in;
    unsigned char *row = NULL;
    int64_t idx[GS_MAX_RANK], n_row = 1, base, j = 0;
    size_t es;
    const char *problem;
    gs_result r;
    int d, rank = shape.rank;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!path) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_npy_read_region: path is NULL");
    if ((problem = gs__npy_region_problem(shape, offset, count)))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_npy_read_region %s: %s", path, problem);
    r = gs__npy_open(ctx, path, shape.dtype, &in);
    if (r != GS_OK) return r;
    if (in.h.rank != rank || memcmp(in.h.dims, shape.dims, sizeof(int64_t) * (size_t)rank) != 0) {
        char a[128], b[128];
        gs_shape got = gs_shape_make(in.dt, in.h.rank, in.h.dims);
        gs__shape_str(&got, a, sizeof a);
        gs__shape_str(&shape, b, sizeof b);
        r = gs__err(ctx, GS_ERR_SHAPE, "%s holds %s but %s was expected", path, a, b);
        goto done;
    }
    for (d = 0; d < rank; d++) {
        if (count[d] == 0) goto done;   /* an empty region: nothing to read */
        idx[d] = 0;
    }
    if (!data) {
        r = gs__err(ctx, GS_ERR_INVALID_ARG, "gs_npy_read_region %s: data is NULL", path);
        goto done;
    }
    if (in.data_at < 0) {
        r = gs__err(ctx, GS_ERR_IO, "%s: the file cannot seek, so a region of it cannot be read", path);
        goto done;
    }
    if (rank > 0) n_row = count[rank - 1];
    es = gs_dtype_size(in.dt);
    row = (unsigned char *)gs__malloc(ctx, (size_t)n_row * in.fsize + 1);
    if (!row) {
        r = GS_ERR_OUT_OF_MEMORY;
        goto done;
    }
    for (;;) {   /* one row of the region (its last dim) at a time, straight from its place in the file */
        for (base = 0, d = 0; d < rank; d++) base = base * shape.dims[d] + offset[d] + (d < rank - 1 ? idx[d] : 0);
        if ((uint64_t)base * in.fsize > (uint64_t)(LONG_MAX - in.data_at)) {
            r = gs__err(ctx, GS_ERR_IO, "%s: element %lld lies beyond the offsets this system's fseek takes", path,
                        (long long)base);
            goto done;
        }
        if (fseek(in.f, in.data_at + (long)((size_t)base * in.fsize), SEEK_SET) != 0 ||
            fread(row, in.fsize, (size_t)n_row, in.f) != (size_t)n_row) {
            r = gs__err(ctx, GS_ERR_IO, "%s: read error at element %lld: %s", path, (long long)base,
                        ferror(in.f) ? strerror(errno) : "the file ended");
            goto done;
        }
        gs__npy_swap(row, (size_t)n_row, in.fsize, gs__is_complex(in.file_dt));
        r = gs__npy_convert_in(ctx, path, &in, row, (unsigned char *)data + (size_t)j * es, (size_t)n_row, (size_t)base);
        if (r != GS_OK) goto done;
        j += n_row;
        for (d = rank - 2; d >= 0; d--) {
            if (++idx[d] < count[d]) break;
            idx[d] = 0;
        }
        if (d < 0) break;
    }
done:
    gs__free(ctx, row);
    gs__npy_close(ctx, &in);
    return r;
}

GS_API gs_result gs_npy_write_ex(gs_ctx *ctx, const char *path, gs_shape shape, const void *data, unsigned flags) {
    char hdr[512], descr[8];
    int len = 0, d, total;
    gs_dtype fdt;
    FILE *f;
    size_t numel = 1, esize, fsize, i;
    const unsigned char *src = (const unsigned char *)data;
    bool ok = true;

    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!path) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_npy_write: NULL path");
    fdt = gs__npy_file_dtype(shape.dtype, (flags & GS_NPY_RAW) != 0);
    gs__npy_descr_full(fdt, descr, sizeof descr);
    if (!descr[0] || flags > GS_NPY_RAW)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_npy_write %s: cannot write dtype %s", path, gs_dtype_name(shape.dtype));
    if (shape.rank < 0 || shape.rank > GS_MAX_RANK)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_npy_write %s: invalid rank %d", path, shape.rank);
    for (d = 0; d < shape.rank; d++) {
        if (shape.dims[d] < 0)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_npy_write %s: negative dim %lld", path,
                           (long long)shape.dims[d]);
        if (numel && (uint64_t)shape.dims[d] > (uint64_t)(SIZE_MAX / 16 / numel))
            return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_npy_write %s: the array is too large", path);
        numel *= (size_t)shape.dims[d];
    }
    if (!data && numel)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_npy_write %s: NULL data for %lu elements", path,
                       (unsigned long)numel);

    /* header: the dict NumPy writes, then spaces and '\n' so that data starts at a multiple of 64 bytes */
    len = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (d = 0; d < shape.rank; d++)
        len += snprintf(hdr + len, sizeof hdr - (size_t)len, "%s%lld", d ? ", " : "", (long long)shape.dims[d]);
    len += snprintf(hdr + len, sizeof hdr - (size_t)len, "%s), }", shape.rank == 1 ? "," : "");
    total = 10 + len + 1;
    total = (total + 63) / 64 * 64;
    while (10 + len + 1 < total) hdr[len++] = ' ';
    hdr[len++] = '\n';

    f = fopen(path, "wb");
    if (!f) return gs__err(ctx, GS_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    {
        unsigned char pre[10];
        memcpy(pre, "\x93NUMPY", 6);
        pre[6] = 1;
        pre[7] = 0;
        pre[8] = (unsigned char)(len & 0xff);
        pre[9] = (unsigned char)((len >> 8) & 0xff);
        ok = fwrite(pre, 1, 10, f) == 10 && fwrite(hdr, 1, (size_t)len, f) == (size_t)len;
    }
    esize = gs_dtype_size(shape.dtype);
    fsize = gs_dtype_size(fdt);
    if (fdt == shape.dtype && shape.dtype != GS_PRED && (esize == 1 || gs__host_little_endian())) {
        if (ok && numel) ok = fwrite(src, esize, numel, f) == numel;
    } else {
        /* converted through a small staging buffer: widened values, raw bits, pred normalised to 0/1 */
        unsigned char tmp[1024];
        size_t per = sizeof tmp / fsize;
        for (i = 0; ok && i < numel; i += per) {
            size_t n = GS__MIN(per, numel - i), k;
            for (k = 0; k < n; k++) {
                unsigned char one[16], two[16];
                memset(two, 0, sizeof two);
                gs__to_compute(shape.dtype, one, src + esize * (i + k), 1);
                if (fdt == shape.dtype) memcpy(two, one, fsize);
                else if (gs__is_float(fdt)) gs__set_elem(fdt, two, 0, gs__ld_f(shape.dtype, one, 0));
                else if (gs__is_float(shape.dtype)) {   /* raw: the storage bits */
                    memcpy(two, src + esize * (i + k), esize);
                    if (gs__dt(shape.dtype)->bits < 8) two[0] &= (unsigned char)((1u << gs__dt(shape.dtype)->bits) - 1u);
                } else {
                    uint64_t v = gs__ld_i(shape.dtype, one, 0);
                    if (fdt == GS_U8 && gs__is_signed(shape.dtype)) v &= (1u << gs__dt(shape.dtype)->bits) - 1u;
                    gs__st_i(fdt, two, 0, v);
                }
                gs__to_storage(fdt, tmp + fsize * k, two, 1);
            }
            gs__npy_swap(tmp, n, fsize, gs__is_complex(fdt));
            ok = fwrite(tmp, fsize, n, f) == n;
        }
    }
    if (fclose(f) != 0) ok = false;
    if (!ok) {
        remove(path);
        return gs__err(ctx, GS_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    }
    return GS_OK;
}

GS_API gs_result gs_npy_write(gs_ctx *ctx, const char *path, gs_shape shape, const void *data) {
    return gs_npy_write_ex(ctx, path, shape, data, 0);
}

GS_API void gs_free_data(gs_ctx *ctx, void *data) {
    /* without the context the allocator is unknown; gs_npy_read never hands out data without one */
    if (!ctx || !data) return;
    gs__free(ctx, data);
}

/* ---- the input generator ----
   mix(z) is splitmix64's output function and G = 0x9E3779B97F4A7C15 its increment:
       mix(z):  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;  z = (z ^ (z >> 27)) * 0x94D049BB133111EB;  z ^ (z >> 31)
   For parameter p and element i (row-major over the logical shape), all arithmetic mod 2^64:
       key = mix(seed + G * (p + 1))        (the (p+1)-th output of splitmix64 started at state seed)
       r   = mix(key + G * (i + 1))         (the (i+1)-th output of splitmix64 started at state key)
   and the element is
       f32        (r >> 40) / 2^23 - 1      (uniform in [-1, 1), step 2^-23: 24 random bits, exact in f32)
       bf16       the f32 value above rounded to bf16 (nearest even)
       s32, u32   r >> 61                   (uniform in [0, 8))
       pred       r >> 63                   (0 or 1)
   The other types: every real float the f32 value above rounded to the type (nearest even; the formats
   without inf or NaN as their convert gives); complex (that value, (r & 0xFFFFFF) / 2^23 - 1); integers of
   at least 4 value bits r >> 61, s2 r >> 63 and u2 r >> 62. */
#define GS__SPLITMIX_G 0x9E3779B97F4A7C15ull

GS__FN uint64_t gs__splitmix_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Element i of the generator's stream `key` into element j of data (storage format of t). */
GS__FN void gs__fill_one(gs_dtype t, uint64_t key, int64_t i, unsigned char *out, int64_t j) {
    uint64_t r = gs__splitmix_mix(key + GS__SPLITMIX_G * ((uint64_t)i + 1));
    float x = (float)((double)(r >> 40) / 8388608.0 - 1.0);
    switch (t) {
    case GS_F32: memcpy(out + 4 * j, &x, 4); break;
    case GS_BF16: {
        uint16_t b = gs_f32_to_bf16(x);
        memcpy(out + 2 * j, &b, 2);
        break;
    }
    case GS_S32: {
        int32_t v = (int32_t)(r >> 61);
        memcpy(out + 4 * j, &v, 4);
        break;
    }
    case GS_U32: {
        uint32_t v = (uint32_t)(r >> 61);
        memcpy(out + 4 * j, &v, 4);
        break;
    }
    case GS_PRED: out[j] = (unsigned char)(r >> 63); break;
    default: {
        unsigned char one[16];
        memset(one, 0, sizeof one);
        if (gs__is_float(t) || gs__is_complex(t)) {
            gs__set_elem(t, one, 0, (double)x);
            if (t == GS_C64) ((float *)one)[1] = (float)((double)(r & 0xFFFFFFu) / 8388608.0 - 1.0);
            if (t == GS_C128) ((double *)one)[1] = (double)(r & 0xFFFFFFu) / 8388608.0 - 1.0;
        } else {   /* an integer type (the callers checked) */
            int b = gs__dt(t)->bits - (gs__is_signed(t) ? 1 : 0);
            gs__st_i(t, one, 0, r >> (64 - (b < 3 ? b : 3)));
        }
        gs__to_storage(t, out + (size_t)j * gs_dtype_size(t), one, 1);
        break;
    }
    }
}

/* Whether the generator has values for t (every array type but token). */
GS__FN bool gs__fill_type_ok(gs_dtype t) {
    return t != GS_TUPLE && t != GS_DTYPE_INVALID && t != GS_TOKEN && (int)t >= 0 && t < GS_DTYPE_COUNT &&
           (gs__is_float(t) || gs__is_complex(t) || gs__is_int(t) || t == GS_PRED);
}

GS_API void gs_fill_random(gs_shape shape, uint64_t seed, int64_t param_index, void *data) {
    uint64_t key = gs__splitmix_mix(seed + GS__SPLITMIX_G * ((uint64_t)param_index + 1));
    int64_t n, i;
    if (!data || !gs__fill_type_ok(shape.dtype) || shape.rank < 0 || shape.rank > GS_MAX_RANK) return;
    n = gs_shape_numel(&shape);
    for (i = 0; i < n; i++) gs__fill_one(shape.dtype, key, i, (unsigned char *)data, i);
}

GS_API gs_result gs_fill_random_region(gs_shape shape, uint64_t seed, int64_t param_index, const int64_t *offset,
                                       const int64_t *count, void *data) {
    uint64_t key = gs__splitmix_mix(seed + GS__SPLITMIX_G * ((uint64_t)param_index + 1));
    int64_t idx[GS_MAX_RANK], j = 0, row, base, i;
    int d, rank = shape.rank;
    if (!gs__fill_type_ok(shape.dtype) || rank < 0 || rank > GS_MAX_RANK || (rank > 0 && (!offset || !count)))
        return GS_ERR_INVALID_ARG;
    for (d = 0; d < rank; d++) {
        if (shape.dims[d] < 0 || count[d] < 0 || offset[d] < 0 || offset[d] > shape.dims[d] ||
            count[d] > shape.dims[d] - offset[d])
            return GS_ERR_INVALID_ARG;
        if (count[d] == 0) return GS_OK;   /* an empty box: nothing to write */
        idx[d] = 0;
    }
    if (!data) return GS_ERR_INVALID_ARG;
    row = rank ? count[rank - 1] : 1;
    for (;;) {   /* one row of the box (its last dim) at a time */
        for (base = 0, d = 0; d < rank; d++) base = base * shape.dims[d] + offset[d] + (d < rank - 1 ? idx[d] : 0);
        for (i = 0; i < row; i++) gs__fill_one(shape.dtype, key, base + i, (unsigned char *)data, j++);
        for (d = rank - 2; d >= 0; d--) {
            if (++idx[d] < count[d]) break;
            idx[d] = 0;
        }
        if (d < 0) return GS_OK;
    }
}
