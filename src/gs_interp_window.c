/* gs_interp_window.c - windowed kernels of the reference interpreter: the batched matmul behind dot and
   convolution, convolution (gather + gemm), and reduce-window.

   Convolution, in shapes (d spatial dims, G feature groups, B batch groups, Q = G * B groups):
     input  x: any layout -> X [N, S_1..S_d, Cin]            (canonical scratch, skipped if already so)
     kernel w: any layout -> W [K_1..K_d, Cin/G, Cout]       (T = K_1 * .. * K_d taps)
     output  : Y [N/B, O_1..O_d, Cout]                       -> any layout
   For each group q, each block of output rows r = (n, o_1..o_d) and each chunk of taps, the input rows hit by
   those taps are gathered into A [rows, taps * Cin_q] (dilation holes and padding give 0), then
     Y[rows, q-th Cout slice] += A x W[taps, Cin_q, q-th Cout slice]
   with the cache-blocked sgemm. Feature group q reads input features [q*Cin/G, (q+1)*Cin/G); batch group q
   reads input batch [q*N/B, (q+1)*N/B); both write output features [q*Cout/Q, (q+1)*Cout/Q).
   Feature-grouped convolutions with at most 4 input and 4 output features per group (depthwise and the like)
   skip the gemm and run a direct loop across all groups at once. s32/u32 use an exact integer loop. */
#include "gs_internal.h"

/* ---------------------------------------------------------------------------------------------------------
   Batched matmul: C[b] (M x N) (+)= A[b] (M x K) x B[b] (K x N), row-major contiguous f32.
   ------------------------------------------------------------------------------------------------------- */
GS__FN gs_result gs__k_matmul(gs_ctx *ctx, int64_t batch, int64_t M, int64_t N, int64_t K, const float *A,
                              const float *B, float *C, int accumulate) {
    float *work;
    int64_t b;
    if (batch <= 0 || M <= 0 || N <= 0) return GS_OK;
    if (K <= 0) {
        if (!accumulate) memset(C, 0, (size_t)(batch * M * N) * sizeof(float));
        return GS_OK;
    }
    work = (float *)gs__malloc(ctx, gs__sgemm_work_floats(M, N, K) * sizeof(float));
    if (!work) return GS_ERR_OUT_OF_MEMORY;
    for (b = 0; b < batch; b++)
        gs__sgemm(M, N, K, A + b * M * K, K, B + b * K * N, N, C + b * M * N, N, accumulate, work);
    gs__free(ctx, work);
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   Shared helpers
   ------------------------------------------------------------------------------------------------------- */

GS__FN bool gs__window_dim_ok(const gs_window_dim *w) {
    return w->size >= 0 && w->stride >= 1 && w->base_dilation >= 1 && w->window_dilation >= 1;
}

/* tab[k * n_out + o] = the input index that window position k of output position o reads along one dim, or -1
   when it falls into padding or a base-dilation hole. */
GS__FN void gs__window_table(const gs_window_dim *w, int64_t in, int64_t n_out, int64_t *tab) {
    int64_t k, o;
    for (k = 0; k < w->size; k++) {
        for (o = 0; o < n_out; o++) {
            int64_t pos = o * w->stride - w->pad_lo + k * w->window_dilation;
            int64_t idx = -1;
            if (pos >= 0 && pos % w->base_dilation == 0) {
                pos /= w->base_dilation;
                if (pos < in) idx = pos;
            }
            tab[k * n_out + o] = idx;
        }
    }
}

/* Copies 4-byte elements so that dst (row-major, contiguous) dim j is src dim perm[j]. */
GS__FN void gs__permute4(const void *src, int rank, const int64_t *src_dims, const int *perm, void *dst) {
    int64_t sstr[GS_MAX_RANK], dd[GS_MAX_RANK], ds[GS_MAX_RANK], idx[GS_MAX_RANK];
    const unsigned char *s = (const unsigned char *)src;
    unsigned char *d = (unsigned char *)dst;
    int64_t numel = 1, inner, istr, off = 0, j;
    int i;
    if (rank == 0) {
        memcpy(dst, src, 4);
        return;
    }
    for (i = rank - 1; i >= 0; i--) {
        sstr[i] = numel;
        numel *= src_dims[i];
    }
    if (numel == 0) return;
    for (i = 0; i < rank; i++) {
        dd[i] = src_dims[perm[i]];
        ds[i] = sstr[perm[i]];
        idx[i] = 0;
    }
    inner = dd[rank - 1];
    istr = ds[rank - 1];
    for (;;) {
        if (istr == 1) {
            memcpy(d, s + off * 4, (size_t)inner * 4);
        } else {
            for (j = 0; j < inner; j++) memcpy(d + j * 4, s + (off + j * istr) * 4, 4);
        }
        d += inner * 4;
        for (i = rank - 2; i >= 0; i--) {
            off += ds[i];
            if (++idx[i] < dd[i]) break;
            off -= ds[i] * dd[i];
            idx[i] = 0;
        }
        if (i < 0) break;
    }
}

GS__FN bool gs__perm_is_identity(int rank, const int *perm) {
    int i;
    for (i = 0; i < rank; i++)
        if (perm[i] != i) return false;
    return true;
}

GS__FN void gs__round_bf16(float *x, int64_t n) { gs__vk_round_bf16(gs__gemm_isa(), x, x, n); }

/* ---------------------------------------------------------------------------------------------------------
   Convolution
   ------------------------------------------------------------------------------------------------------- */

/* Everything the convolution loops need, in canonical order. */
typedef struct gs__conv_plan {
    int d;                          /* spatial dims */
    int64_t N, Cin, Cout;           /* input batch, input features, output features */
    int64_t No, Cin_q, Cout_q, Q;   /* output batch, input features per group (= kernel input features), ... */
    int64_t G, B;                   /* feature and batch group counts */
    int64_t S[GS_MAX_RANK], K[GS_MAX_RANK], O[GS_MAX_RANK];
    int64_t S_total, T, O_total;
    int64_t sstride[GS_MAX_RANK];   /* element strides of X's spatial dims in units of Cin-rows */
    int64_t *tab[GS_MAX_RANK];      /* gs__window_table per spatial dim (into one allocation) */
    int64_t *taps;                  /* T x d window coordinates */
} gs__conv_plan;

GS__FN gs_result gs__conv_check(gs_ctx *ctx, const gs_value *v, const gs__buf *in, const gs__buf *kernel,
                                const gs__buf *out, gs__conv_plan *p) {
    const gs_conv_config *c = v->conv;
    const gs_conv_dims *cd;
    const char *name = v->name ? v->name : "?";
    int64_t seen[3][GS_MAX_RANK + 2];
    const gs_shape *shp[3];
    int i, t;
    if (!c) return gs__err(ctx, GS_ERR_INVALID_ARG, "convolution %s: no convolution config", name);
    cd = &c->dims;
    p->d = cd->n_spatial;
    if (p->d < 0 || p->d + 2 > GS_MAX_RANK || in->shape.rank != p->d + 2 || kernel->shape.rank != p->d + 2 ||
        out->shape.rank != p->d + 2)
        return gs__err(ctx, GS_ERR_SHAPE, "convolution %s: ranks do not match %d spatial dims", name, p->d);
    /* every dim number in range and used once per operand */
    shp[0] = &in->shape;
    shp[1] = &kernel->shape;
    shp[2] = &out->shape;
    for (t = 0; t < 3; t++) {
        int64_t dn[GS_MAX_RANK + 2];
        dn[0] = t == 0 ? cd->input_batch : t == 1 ? cd->kernel_input_feature : cd->output_batch;
        dn[1] = t == 0 ? cd->input_feature : t == 1 ? cd->kernel_output_feature : cd->output_feature;
        for (i = 0; i < p->d; i++)
            dn[2 + i] = t == 0 ? cd->input_spatial[i] : t == 1 ? cd->kernel_spatial[i] : cd->output_spatial[i];
        for (i = 0; i < p->d + 2; i++) seen[t][i] = 0;
        for (i = 0; i < p->d + 2; i++) {
            if (dn[i] < 0 || dn[i] >= shp[t]->rank || seen[t][dn[i]]++)
                return gs__err(ctx, GS_ERR_INVALID_ARG, "convolution %s: invalid dimension numbers", name);
        }
    }
    if (in->shape.dtype != kernel->shape.dtype || in->shape.dtype != out->shape.dtype)
        return gs__err(ctx, GS_ERR_SHAPE, "convolution %s: operand and result dtypes differ", name);
    p->G = c->feature_group_count > 0 ? c->feature_group_count : 1;
    p->B = c->batch_group_count > 0 ? c->batch_group_count : 1;
    if (p->G > 1 && p->B > 1)
        return gs__err(ctx, GS_ERR_INVALID_ARG,
                       "convolution %s: feature_group_count and batch_group_count are both > 1", name);
    p->Q = p->G * p->B;
    p->N = in->shape.dims[cd->input_batch];
    p->Cin = in->shape.dims[cd->input_feature];
    p->Cin_q = kernel->shape.dims[cd->kernel_input_feature];
    p->Cout = kernel->shape.dims[cd->kernel_output_feature];
    p->No = out->shape.dims[cd->output_batch];
    if (p->Cin % p->G || p->Cin / p->G != p->Cin_q)
        return gs__err(ctx, GS_ERR_SHAPE,
                       "convolution %s: input features (%lld) / feature_group_count (%lld) != kernel input "
                       "features (%lld)", name, (long long)p->Cin, (long long)p->G, (long long)p->Cin_q);
    if (p->Cout % p->Q)
        return gs__err(ctx, GS_ERR_SHAPE, "convolution %s: output features (%lld) not divisible by %lld groups",
                       name, (long long)p->Cout, (long long)p->Q);
    if (p->N % p->B || p->N / p->B != p->No)
        return gs__err(ctx, GS_ERR_SHAPE, "convolution %s: output batch (%lld) != input batch (%lld) / %lld",
                       name, (long long)p->No, (long long)p->N, (long long)p->B);
    if (out->shape.dims[cd->output_feature] != p->Cout)
        return gs__err(ctx, GS_ERR_SHAPE, "convolution %s: output features != kernel output features", name);
    p->Cout_q = p->Cout / p->Q;
    p->S_total = p->T = p->O_total = 1;
    for (i = 0; i < p->d; i++) {
        const gs_window_dim *w = &c->window[i];
        p->S[i] = in->shape.dims[cd->input_spatial[i]];
        p->K[i] = kernel->shape.dims[cd->kernel_spatial[i]];
        p->O[i] = out->shape.dims[cd->output_spatial[i]];
        if (!gs__window_dim_ok(w) || w->size != p->K[i])
            return gs__err(ctx, GS_ERR_INVALID_ARG, "convolution %s: window dim %d does not match the kernel",
                           name, i);
        if (gs__window_out(w, p->S[i]) != p->O[i])
            return gs__err(ctx, GS_ERR_SHAPE, "convolution %s: output spatial dim %d is %lld, expected %lld",
                           name, i, (long long)p->O[i], (long long)gs__window_out(w, p->S[i]));
        p->S_total *= p->S[i];
        p->T *= p->K[i];
        p->O_total *= p->O[i];
    }
    for (i = p->d - 1; i >= 0; i--) p->sstride[i] = i == p->d - 1 ? 1 : p->sstride[i + 1] * p->S[i + 1];
    return GS_OK;
}

/* Allocates and fills the window tables and the tap coordinates (one allocation, freed through taps). */
GS__FN gs_result gs__conv_tables(gs_ctx *ctx, const gs_value *v, gs__conv_plan *p) {
    int64_t n = p->T * p->d, t, *mem;
    int i;
    for (i = 0; i < p->d; i++) n += p->K[i] * p->O[i];
    mem = (int64_t *)gs__malloc(ctx, (size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    if (!mem) return GS_ERR_OUT_OF_MEMORY;
    p->taps = mem;
    mem += p->T * p->d;
    for (i = 0; i < p->d; i++) {
        p->tab[i] = mem;
        gs__window_table(&v->conv->window[i], p->S[i], p->O[i], mem);
        if (v->conv->reversal[i]) {   /* window_reversal: kernel tap k reads window position K-1-k */
            int64_t k, o;
            for (k = 0; k < p->K[i] / 2; k++)
                for (o = 0; o < p->O[i]; o++) {
                    int64_t *a = mem + k * p->O[i] + o, *b = mem + (p->K[i] - 1 - k) * p->O[i] + o, tmp = *a;
                    *a = *b;
                    *b = tmp;
                }
        }
        mem += p->K[i] * p->O[i];
    }
    for (t = 0; t < p->T; t++) {
        int64_t r = t;
        for (i = p->d - 1; i >= 0; i--) {
            p->taps[t * p->d + i] = r % p->K[i];
            r /= p->K[i];
        }
    }
    return GS_OK;
}

/* Spatial offset (in Cin-rows within one batch image) of tap t at output position o, or -1. */
GS__FN int64_t gs__conv_src(const gs__conv_plan *p, const int64_t *o, int64_t t) {
    int64_t off = 0;
    int i;
    for (i = 0; i < p->d; i++) {
        int64_t idx = p->tab[i][p->taps[t * p->d + i] * p->O[i] + o[i]];
        if (idx < 0) return -1;
        off += idx * p->sstride[i];
    }
    return off;
}

/* f32 path: Y [No * O_total, Cout] = conv(X, W), zero-initialised by the caller. */
GS__FN gs_result gs__conv_f32(gs_ctx *ctx, const gs__conv_plan *p, const float *X, const float *W, float *Y) {
    const int64_t M = p->No * p->O_total;
    const int64_t budget = (int64_t)1 << 20; /* floats of gathered input per gemm call */
    int64_t tc, kc_max, mb, q, r0, t0;
    float *A, *work;
    if (M == 0 || p->Cout_q == 0 || p->T == 0 || p->Cin_q == 0) return GS_OK;
    /* taps per chunk: aim for a gemm depth of about 1024 */
    tc = p->Cin_q >= 1024 ? 1 : GS__MIN(p->T, GS__MAX((int64_t)1, 1024 / p->Cin_q));
    kc_max = tc * p->Cin_q;
    mb = GS__MIN(M, GS__MAX((int64_t)64, budget / kc_max));
    A = (float *)gs__malloc(ctx, (size_t)(mb * kc_max) * sizeof(float));
    if (!A) return GS_ERR_OUT_OF_MEMORY;
    work = (float *)gs__malloc(ctx, gs__sgemm_work_floats(mb, p->Cout_q, kc_max) * sizeof(float));
    if (!work) {
        gs__free(ctx, A);
        return GS_ERR_OUT_OF_MEMORY;
    }
    for (q = 0; q < p->Q; q++) {
        const int64_t cin_off = p->G > 1 ? q * p->Cin_q : 0;
        const int64_t batch_off = p->B > 1 ? q * p->No : 0;
        const int64_t cout_off = q * p->Cout_q;
        for (r0 = 0; r0 < M; r0 += mb) {
            const int64_t rows = GS__MIN(mb, M - r0);
            for (t0 = 0; t0 < p->T; t0 += tc) {
                const int64_t nt = GS__MIN(tc, p->T - t0), kc = nt * p->Cin_q;
                int64_t o[GS_MAX_RANK], n = r0 / p->O_total, rem = r0 % p->O_total, r, t;
                int i;
                for (i = p->d - 1; i >= 0; i--) {
                    o[i] = rem % p->O[i];
                    rem /= p->O[i];
                }
                for (r = 0; r < rows; r++) {
                    const float *xb = X + (batch_off + n) * p->S_total * p->Cin + cin_off;
                    float *a = A + r * kc;
                    for (t = 0; t < nt; t++, a += p->Cin_q) {
                        const int64_t off = gs__conv_src(p, o, t0 + t);
                        if (off < 0) memset(a, 0, (size_t)p->Cin_q * sizeof(float));
                        else if (p->Cin_q == 1) a[0] = xb[off * p->Cin];
                        else memcpy(a, xb + off * p->Cin, (size_t)p->Cin_q * sizeof(float));
                    }
                    for (i = p->d - 1; i >= 0; i--) {
                        if (++o[i] < p->O[i]) break;
                        o[i] = 0;
                    }
                    if (i < 0) n++;
                }
                gs__sgemm(rows, p->Cout_q, kc, A, kc, W + t0 * p->Cin_q * p->Cout + cout_off, p->Cout,
                          Y + r0 * p->Cout + cout_off, p->Cout, 1, work);
            }
        }
    }
    gs__free(ctx, work);
    gs__free(ctx, A);
    return GS_OK;
}

/* f32 path for feature-grouped convolutions with very few features per group (depthwise and the like), where
   a gemm per group would be all overhead: a direct loop that runs along the feature dim of every group at
   once. Y zero-initialised by the caller. */
GS__FN void gs__conv_f32_grouped(const gs__conv_plan *p, const float *X, const float *W, float *Y) {
    const int64_t M = p->No * p->O_total;
    int64_t o[GS_MAX_RANK], n = 0, r, t, c, ci, q, co;
    int i;
    for (i = 0; i < p->d; i++) o[i] = 0;
    for (r = 0; r < M; r++) {
        const float *xb = X + n * p->S_total * p->Cin;
        float *y = Y + r * p->Cout;
        for (t = 0; t < p->T; t++) {
            const int64_t off = gs__conv_src(p, o, t);
            const float *x, *w;
            if (off < 0) continue;
            x = xb + off * p->Cin;
            w = W + t * p->Cin_q * p->Cout;
            if (p->Cin_q == 1 && p->Cout_q == 1) {
                for (c = 0; c < p->Cout; c++) y[c] += x[c] * w[c];
            } else {
                for (ci = 0; ci < p->Cin_q; ci++) {
                    const float *wr = w + ci * p->Cout;
                    for (q = 0; q < p->Q; q++) {
                        const float xv = x[q * p->Cin_q + ci];
                        for (co = 0; co < p->Cout_q; co++) y[q * p->Cout_q + co] += xv * wr[q * p->Cout_q + co];
                    }
                }
            }
        }
        for (i = p->d - 1; i >= 0; i--) {
            if (++o[i] < p->O[i]) break;
            o[i] = 0;
        }
        if (i < 0) n++;
    }
}

/* s32/u32 path: exact integer arithmetic (wrap-around modulo 2^32), Y zero-initialised by the caller. */
GS__FN void gs__conv_s32(const gs__conv_plan *p, const int32_t *X, const int32_t *W, int32_t *Y) {
    const int64_t M = p->No * p->O_total;
    int64_t q, r, t, ci, co;
    for (q = 0; q < p->Q; q++) {
        const int64_t cin_off = p->G > 1 ? q * p->Cin_q : 0;
        const int64_t batch_off = p->B > 1 ? q * p->No : 0;
        const int64_t cout_off = q * p->Cout_q;
        int64_t o[GS_MAX_RANK], n = 0;
        int i;
        for (i = 0; i < p->d; i++) o[i] = 0;
        for (r = 0; r < M; r++) {
            const int32_t *xb = X + (batch_off + n) * p->S_total * p->Cin + cin_off;
            int32_t *y = Y + r * p->Cout + cout_off;
            for (t = 0; t < p->T; t++) {
                const int64_t off = gs__conv_src(p, o, t);
                if (off < 0) continue;
                for (ci = 0; ci < p->Cin_q; ci++) {
                    const uint32_t xv = (uint32_t)xb[off * p->Cin + ci];
                    const int32_t *w = W + (t * p->Cin_q + ci) * p->Cout + cout_off;
                    for (co = 0; co < p->Cout_q; co++)
                        y[co] = (int32_t)((uint32_t)y[co] + xv * (uint32_t)w[co]);
                }
            }
            for (i = p->d - 1; i >= 0; i--) {
                if (++o[i] < p->O[i]) break;
                o[i] = 0;
            }
            if (i < 0) n++;
        }
    }
}

GS__FN gs_result gs__k_convolution(gs_ctx *ctx, const gs_value *v, const gs__buf *in, const gs__buf *kernel,
                                   gs__buf *out) {
    gs__conv_plan p;
    const gs_conv_dims *cd;
    int perm_in[GS_MAX_RANK], perm_k[GS_MAX_RANK], perm_out[GS_MAX_RANK];
    int64_t ydims[GS_MAX_RANK];
    void *X = NULL, *W = NULL, *Y = NULL;
    bool own_x, own_w, own_y;
    gs_dtype dt = out->shape.dtype;
    gs_result r;
    int i, rank;
    memset(&p, 0, sizeof p);
    r = gs__conv_check(ctx, v, in, kernel, out, &p);
    if (r != GS_OK) return r;
    if (dt != GS_F32 && dt != GS_BF16 && dt != GS_S32 && dt != GS_U32)
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "convolution %s: dtype %s is not supported", v->name,
                       gs_dtype_name(dt));
    cd = &v->conv->dims;
    rank = p.d + 2;
    /* canonical orders: X [N, S.., Cin], W [K.., Cin_q, Cout], Y [No, O.., Cout] */
    perm_in[0] = (int)cd->input_batch;
    perm_in[rank - 1] = (int)cd->input_feature;
    for (i = 0; i < p.d; i++) {
        perm_in[1 + i] = (int)cd->input_spatial[i];
        perm_k[i] = (int)cd->kernel_spatial[i];
        perm_out[cd->output_spatial[i]] = 1 + i;
        ydims[1 + i] = p.O[i];
    }
    perm_k[p.d] = (int)cd->kernel_input_feature;
    perm_k[p.d + 1] = (int)cd->kernel_output_feature;
    perm_out[cd->output_batch] = 0;
    perm_out[cd->output_feature] = rank - 1;
    ydims[0] = p.No;
    ydims[rank - 1] = p.Cout;
    own_x = !gs__perm_is_identity(rank, perm_in);
    own_w = !gs__perm_is_identity(rank, perm_k);
    own_y = !gs__perm_is_identity(rank, perm_out);
    r = gs__conv_tables(ctx, v, &p);
    if (r != GS_OK) return r;
    X = own_x ? gs__malloc(ctx, (size_t)gs__numel(&in->shape) * 4) : in->data;
    W = own_w ? gs__malloc(ctx, (size_t)gs__numel(&kernel->shape) * 4) : kernel->data;
    Y = own_y ? gs__malloc(ctx, (size_t)gs__numel(&out->shape) * 4) : out->data;
    if (!X || !W || !Y) {
        r = GS_ERR_OUT_OF_MEMORY;
        goto done;
    }
    if (own_x) gs__permute4(in->data, rank, in->shape.dims, perm_in, X);
    if (own_w) gs__permute4(kernel->data, rank, kernel->shape.dims, perm_k, W);
    memset(Y, 0, (size_t)gs__numel(&out->shape) * 4);
    if (dt == GS_S32 || dt == GS_U32) { /* wrap-around multiply-add: the same bits for both */
        gs__conv_s32(&p, (const int32_t *)X, (const int32_t *)W, (int32_t *)Y);
    } else {
        if (p.G > 1 && p.Cin_q <= 4 && p.Cout_q <= 4) {
            gs__conv_f32_grouped(&p, (const float *)X, (const float *)W, (float *)Y);
        } else {
            r = gs__conv_f32(ctx, &p, (const float *)X, (const float *)W, (float *)Y);
            if (r != GS_OK) goto done;
        }
    }
    if (own_y) gs__permute4(Y, rank, ydims, perm_out, out->data);
    if (dt == GS_BF16) gs__round_bf16((float *)out->data, gs__numel(&out->shape));
done:
    if (own_x) gs__free(ctx, X);
    if (own_w) gs__free(ctx, W);
    if (own_y) gs__free(ctx, Y);
    gs__free(ctx, p.taps);
    return r;
}

/* ---------------------------------------------------------------------------------------------------------
   Reduce-window. The result starts as init everywhere; then for each window position, in increasing order,
   every output element whose window position lands on an input element (not padding, not a base-dilation
   hole) is combined with it. Each output thus sees init (op) x_w0 (op) x_w1 ... in window order, and the
   innermost loop runs along the last output dim with a fixed combiner.
   ------------------------------------------------------------------------------------------------------- */

/* y[o] = COMBINE(a = y[o], b = x[ix[o] * xs]) for o < n with ix[o] >= 0 */
#define GS__RW_ROW(T, COMBINE)                                  \
    do {                                                        \
        const T *x_ = (const T *)xrow;                          \
        T *y_ = (T *)yrow;                                      \
        for (o = 0; o < n; o++) {                               \
            const int64_t ix_ = ix[o];                          \
            if (ix_ >= 0) {                                     \
                const T a = y_[o], b = x_[ix_ * xs];            \
                y_[o] = (COMBINE);                              \
            }                                                   \
        }                                                       \
    } while (0)

/* One output row (n elements along the last dim) against one window position. */
GS__FN void gs__rw_row(gs_dtype dt, gs_reduce_kind k, const void *xrow, int64_t xs, const int64_t *ix, void *yrow,
                       int64_t n) {
    int64_t o;
    if (dt == GS_F32 || dt == GS_BF16) {
        switch (k) {
        case GS_REDUCE_SUM: GS__RW_ROW(float, a + b); break;
        case GS_REDUCE_PROD: GS__RW_ROW(float, a * b); break;
        case GS_REDUCE_MAX: GS__RW_ROW(float, (a > b || a != a) ? a : b); break; /* NaN propagates */
        default: GS__RW_ROW(float, (a < b || a != a) ? a : b); break;
        }
    } else if (dt == GS_S32 || dt == GS_U32) {
        /* s32 is handled as uint32_t: sums and products wrap modulo 2^32 without signed overflow */
        switch (k) {
        case GS_REDUCE_SUM: GS__RW_ROW(uint32_t, a + b); break;
        case GS_REDUCE_PROD: GS__RW_ROW(uint32_t, a * b); break;
        case GS_REDUCE_AND: GS__RW_ROW(uint32_t, a & b); break;
        case GS_REDUCE_OR: GS__RW_ROW(uint32_t, a | b); break;
        case GS_REDUCE_MAX:
            if (dt == GS_S32) GS__RW_ROW(uint32_t, (int32_t)a > (int32_t)b ? a : b);
            else GS__RW_ROW(uint32_t, a > b ? a : b);
            break;
        default:
            if (dt == GS_S32) GS__RW_ROW(uint32_t, (int32_t)a < (int32_t)b ? a : b);
            else GS__RW_ROW(uint32_t, a < b ? a : b);
            break;
        }
    } else if (dt != GS_PRED) {   /* every other type: the interpreter's generic combiner (compute format) */
        for (o = 0; o < n; o++)
            if (ix[o] >= 0) gs__ip_gcomb(dt, k, yrow, o, xrow, ix[o] * xs);
    } else { /* pred: sum/max/or are "or", prod/min/and are "and" */
        if (k == GS_REDUCE_SUM || k == GS_REDUCE_MAX || k == GS_REDUCE_OR) GS__RW_ROW(uint8_t, (uint8_t)(a | b));
        else GS__RW_ROW(uint8_t, (uint8_t)(a & b));
    }
}

#undef GS__RW_ROW

GS__FN gs_result gs__k_reduce_window(gs_ctx *ctx, const gs_value *v, const gs__buf *in, const gs__buf *init,
                                     gs__buf *out) {
    const char *name = v->name ? v->name : "?";
    const gs_reduce_kind kind = v->reduce;
    const gs_dtype dt = in->shape.dtype;
    const int rank = in->shape.rank;
    const size_t esz = gs__compute_size(dt);
    int64_t istr[GS_MAX_RANK], oidx[GS_MAX_RANK], widx[GS_MAX_RANK], *tab[GS_MAX_RANK];
    int64_t *mem, ntab = 0, wtotal = 1, n_out, n_rows, n_last, e, j, r;
    int i;
    if (!v->window) return gs__err(ctx, GS_ERR_INVALID_ARG, "reduce-window %s: no window", name);
    if (out->shape.rank != rank || out->shape.dtype != dt || init->shape.dtype != dt)
        return gs__err(ctx, GS_ERR_SHAPE, "reduce-window %s: operand, init and result shapes do not fit", name);
    if (kind < GS_REDUCE_SUM || kind > GS_REDUCE_OR ||
        ((kind == GS_REDUCE_AND || kind == GS_REDUCE_OR) && (gs__is_float(dt) || gs__is_complex(dt))) ||
        ((kind == GS_REDUCE_MAX || kind == GS_REDUCE_MIN) && gs__is_complex(dt)))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "reduce-window %s: reduction %s is invalid for %s", name,
                       gs_reduce_kind_name(kind), gs_dtype_name(dt));
    if (!gs__is_numeric(dt) && dt != GS_PRED)
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "reduce-window %s: dtype %s is not supported", name,
                       gs_dtype_name(dt));
    for (i = 0; i < rank; i++) {
        const gs_window_dim *w = &v->window[i];
        if (!gs__window_dim_ok(w))
            return gs__err(ctx, GS_ERR_INVALID_ARG, "reduce-window %s: invalid window dim %d", name, i);
        if (gs__window_out(w, in->shape.dims[i]) != out->shape.dims[i])
            return gs__err(ctx, GS_ERR_SHAPE, "reduce-window %s: output dim %d is %lld, expected %lld", name, i,
                           (long long)out->shape.dims[i], (long long)gs__window_out(w, in->shape.dims[i]));
        ntab += w->size * out->shape.dims[i];
        wtotal *= w->size;
    }
    n_out = gs__numel(&out->shape);
    if (n_out == 0) return GS_OK;
    /* result = init everywhere */
    for (e = 0; e < n_out; e++) memcpy((char *)out->data + (size_t)e * esz, init->data, esz);
    if (rank == 0) {
        int64_t zero = 0;
        gs__rw_row(dt, kind, in->data, 0, &zero, out->data, 1);
        return GS_OK;
    }
    mem = (int64_t *)gs__malloc(ctx, (size_t)ntab * sizeof(int64_t));
    if (!mem) return GS_ERR_OUT_OF_MEMORY;
    for (i = 0, j = 0; i < rank; i++) {
        tab[i] = mem + j;
        gs__window_table(&v->window[i], in->shape.dims[i], out->shape.dims[i], tab[i]);
        j += v->window[i].size * out->shape.dims[i];
    }
    gs__strides(&in->shape, istr);
    n_last = out->shape.dims[rank - 1];
    n_rows = n_out / n_last;
    for (i = 0; i < rank; i++) widx[i] = 0;
    for (j = 0; j < wtotal; j++) {
        const int64_t *ix = tab[rank - 1] + widx[rank - 1] * n_last;
        for (i = 0; i < rank - 1; i++) oidx[i] = 0;
        for (r = 0; r < n_rows; r++) {
            int64_t off = 0;
            for (i = 0; i < rank - 1; i++) {
                const int64_t idx = tab[i][widx[i] * out->shape.dims[i] + oidx[i]];
                if (idx < 0) break;
                off += idx * istr[i];
            }
            if (i == rank - 1)
                gs__rw_row(dt, kind, (const char *)in->data + (size_t)off * esz, istr[rank - 1], ix,
                           (char *)out->data + (size_t)(r * n_last) * esz, n_last);
            for (i = rank - 2; i >= 0; i--) {
                if (++oidx[i] < out->shape.dims[i]) break;
                oidx[i] = 0;
            }
        }
        for (i = rank - 1; i >= 0; i--) {
            if (++widx[i] < v->window[i].size) break;
            widx[i] = 0;
        }
    }
    if (dt == GS_BF16) gs__round_bf16((float *)out->data, n_out);
    gs__free(ctx, mem);
    return GS_OK;
}
