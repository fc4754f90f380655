/* gs_cost.c - the TPU cost model: the chip table, roofline and ICI collective formulas, tori with a logical
   device mesh laid onto them, and the per-instruction cost report of an SPMD program (HLO text and JSON).
   Formulas and notation: "How to Scale Your Model" (Austin et al.), chapters 1-3 and 5, cited as [book];
   docs/cost.md derives each one and lists what the model leaves out. */
#include "gs_internal.h"

/* =========================================================================================================
   Chips
   ========================================================================================================= */

#define GS__CM_BOOK "How to Scale Your Model"

/* Fields: name, HBM capacity, W_hbm, C bf16, C int8, W_uni, links, torus rank, pod, host, wrap rule,
   W_pcie per chip, W_dcn per host, T_min, cores per chip, source; then the appended fields: C fp8, matrix units,
   clock, VMEM bytes, VMEM bandwidth, host DRAM per chip, $ per chip-hour, NVLink domain, W_nvlink, W_ib. */
#define GS__CM_NO_GPU 0, 0.0, 0.0
static const gs_chip gs__cm_chip_table[] = {
    /* TPU v2 (Jouppi et al., "A Domain-Specific Supercomputer for Training Deep Neural Networks", CACM 63(7),
       2020, and Google Cloud's TPU v2 page): 2 cores of one 128x128 MXU each at 700 MHz = 4.6e13 bf16 FLOPs/s
       (Cloud: 45 TFLOPs), 16 GiB HBM at 7e11 B/s, no int8 mode, 4 ICI links of 496 Gbit/s (6.2e10 B/s) in a
       16x16 2-D torus, 4 chips per host. Host figures as v3. No price: v2 is no longer sold by the hour.
       The 496 Gbit/s per link is this paper's figure; no second public source was found to confirm it
       (docs/cost.md marks it unverified). VMEM 16 MiB per core, 2 cores (JAX's Pallas TPU hardware table,
       jax/_src/pallas/mosaic/tpu_info.py, shown on docs.jax.dev as "TPU Hardware Reference"). */
    {"v2", 16.0 * 1073741824.0, 7.0e11, 4.6e13, 0.0, 6.2e10, 4, 2, {16, 16, 0}, {2, 2, 0}, GS_WRAP_RULE_POD_AXIS,
     1.5e10, 2.5e10, 1e-6, 2, "Jouppi et al. CACM 2020 (TPUv2 column); Google Cloud TPU v2 page; JAX Pallas TPU table",
     0.0, 2, 7.0e8, 32.0 * 1048576.0, 0.0, 0.0, 0.0, GS__CM_NO_GPU},
    /* [book] ch.2 chip table: pod 32x32, host 4x2, 32 GB, 9.0e11 B/s, 1.4e14 bf16 and int8; ICI table: 1e11
       one way per link; "TPU networking": v2/v3 form a 2-D torus; ch.2: v3 chips have two cores with separate
       memories. The book states no wraparound rule for v3 slices: the 2-D rule (full pod axes wrap) is assumed.
       PCIe 1.5e10 per chip and DCN 2.5e10 per host are the book's generic figures (end of ch.2 tables).
       Matrix units: 2 cores x 2 MXUs at 940 MHz (Jouppi et al. CACM 2020). VMEM 16 MiB per core (JAX's Pallas
       TPU hardware table). */
    {"v3", 32e9, 9.0e11, 1.4e14, 1.4e14, 1e11, 4, 2, {32, 32, 0}, {4, 2, 0}, GS_WRAP_RULE_POD_AXIS, 1.5e10, 2.5e10,
     1e-6, 2, GS__CM_BOOK ", ch.2 chip and ICI tables (v3 rows); Jouppi et al. CACM 2020 (MXUs, clock); JAX (VMEM)",
     0.0, 4, 9.4e8, 32.0 * 1048576.0, 0.0, 0.0, 0.0, GS__CM_NO_GPU},
    /* ch.2 tables: pod 16x16x16, host 2x2x1, 32 GB, 1.2e12 B/s (ch.2 Q1 uses 1.23e12), 2.75e14 bf16 and int8,
       4.5e10 one way; 3-D torus, 6 neighbours; whole 4x4x4 cubes wrap through the optical switches; PCIe
       16 GB/s each way ("PCIe bandwidth is limited", ch.2). Megacore: two cores act as one device, 4 MXUs each
       (Jouppi et al., ISCA 2023: 8 MXUs at 1050 MHz). VMEM 16 MiB per core (JAX's Pallas TPU hardware table). */
    {"v4p", 32e9, 1.2e12, 2.75e14, 2.75e14, 4.5e10, 6, 3, {16, 16, 16}, {2, 2, 1}, GS_WRAP_RULE_CUBE, 1.6e10,
     2.5e10, 1e-6, 2, GS__CM_BOOK ", ch.2 chip and ICI tables (v4p rows); Jouppi et al. ISCA 2023 (MXUs, clock); JAX (VMEM)",
     0.0, 8, 1.05e9, 32.0 * 1048576.0, 0.0, 0.0, 0.0, GS__CM_NO_GPU},
    /* ch.2 tables: pod 16x20x28, host 2x2x1, 96 GB, 2.8e12 B/s, 4.59e14 bf16, 9.18e14 int8, 9e10 one way
       (the text's "9e10 per axis, 3 axes"); cube rule as v4p. ch.8 price table: $4.2 per chip-hour. VMEM 64 MiB
       per core, 2 cores (JAX's Pallas TPU hardware table). */
    {"v5p", 96e9, 2.8e12, 4.59e14, 9.18e14, 9e10, 6, 3, {16, 20, 28}, {2, 2, 1}, GS_WRAP_RULE_CUBE, 1.5e10, 2.5e10,
     1e-6, 2, GS__CM_BOOK ", ch.2 chip and ICI tables (v5p rows); ch.8 price table; JAX Pallas TPU table (VMEM)",
     0.0, 0, 0.0, 128.0 * 1048576.0, 0.0, 0.0, 4.2, GS__CM_NO_GPU},
    /* ch.2 tables: pod 16x16, host 4x2, 16 GB, 8.1e11 B/s (ch.1 rounds to 8.2e11 for its "240"), 1.97e14 bf16,
       3.94e14 int8, 4.5e10 one way; only axes of size 16 wrap; ch.2 Q5: about 1 us per hop; one core.
       ch.2: about 5e13 FLOPs/s per MXU at 1.5 GHz (so 4 MXUs), VMEM bandwidth about 22x HBM's; ch.7: an 8-chip
       v5e host has about 450 GiB of DRAM (56.25 GiB per chip); ch.8 price table: $1.2 per chip-hour. ch.2: VMEM
       is 128 MiB (JAX's Pallas TPU hardware table agrees). */
    {"v5e", 16e9, 8.1e11, 1.97e14, 3.94e14, 4.5e10, 4, 2, {16, 16, 0}, {4, 2, 0}, GS_WRAP_RULE_POD_AXIS, 1.5e10,
     2.5e10, 1e-6, 1, GS__CM_BOOK ", ch.2 chip and ICI tables (v5e rows), ch.2 MXU and VMEM text, ch.7, ch.8 prices",
     0.0, 4, 1.5e9, 128.0 * 1048576.0, 22.0 * 8.1e11, 450.0 * 1073741824.0 / 8.0, 1.2, GS__CM_NO_GPU},
    /* ch.2 tables: pod 16x16, host 4x2, 32 GB, 1.6e12 B/s, 9.20e14 bf16 (ch.1 says 9.1e14), 1.84e15 int8,
       9e10 one way; wraparound as v5e (Trillium). ch.2: its MXUs are 256x256. VMEM 128 MiB, one core (JAX's
       Pallas TPU hardware table). */
    {"v6e", 32e9, 1.6e12, 9.20e14, 1.84e15, 9e10, 4, 2, {16, 16, 0}, {4, 2, 0}, GS_WRAP_RULE_POD_AXIS, 1.5e10,
     2.5e10, 1e-6, 1, GS__CM_BOOK ", ch.2 chip and ICI tables (v6e rows); JAX Pallas TPU hardware table (VMEM)",
     0.0, 0, 0.0, 128.0 * 1048576.0, 0.0, 0.0, 0.0, GS__CM_NO_GPU},
    /* ch.1: 9.89e14 bf16 FLOPs/s (dense; ch.1 Q5: the spec sheet's 1.979e15 assumes sparsity) and 3.35e12 B/s
       of HBM. The book gives no int8 rate or ICI for it: the torus model costs one H100 only, and several GPUs
       go through the NVLink + InfiniBand model of the whole-model step times. NVIDIA H100 SXM datasheet:
       80 GB, dense FP8 1.979e15, 528 tensor cores, NVLink 900 GB/s both ways (4.5e11 one way) among the 8 GPUs
       of an HGX board, one 400 Gbit/s NIC per GPU (5e10 B/s). ch.8 price table: $10.8 per GPU-hour. */
    {"h100", 80e9, 3.35e12, 9.89e14, 0.0, 0.0, 0, 0, {0, 0, 0}, {0, 0, 0}, GS_WRAP_RULE_NEVER, 0.0, 0.0, 0.0, 1,
     GS__CM_BOOK ", ch.1 (FLOPs/s, HBM bandwidth), ch.8 price; NVIDIA H100 SXM datasheet (80 GB, FP8, NVLink)",
     1.979e15, 528, 0.0, 0.0, 0.0, 0.0, 10.8, 8, 4.5e11, 5e10},
    /* The H800 figures [book] ch.4 Q7 reads from NVIDIA's H800 datasheet: 3,026 TFLOPs FP8 with sparsity, so
       1.513e15 dense, and bf16 half of that (1,513 with sparsity: 7.565e14 dense); 80 GB at 2.0e12 B/s; NVLink
       400 GB/s both ways (2e11 one way), 8 GPUs per NVLink domain, a 400 Gbit/s NIC per GPU. */
    {"h800", 80e9, 2.0e12, 7.565e14, 1.513e15, 0.0, 0, 0, {0, 0, 0}, {0, 0, 0}, GS_WRAP_RULE_NEVER, 0.0, 0.0, 0.0, 1,
     GS__CM_BOOK ", ch.4 Q7 (FP8 rate); NVIDIA H800 datasheet (bf16, HBM, NVLink 400 GB/s)",
     1.513e15, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 8, 2e11, 5e10},
    /* NVIDIA HGX B200 (1000 W) datasheet: dense bf16 2.25e15, FP8 and int8 4.5e15, 180 GB HBM3e at 8e12 B/s,
       NVLink 5 at 1.8 TB/s both ways (9e11 one way) among 8 GPUs, a 400 Gbit/s NIC per GPU. */
    {"b200", 180e9, 8.0e12, 2.25e15, 4.5e15, 0.0, 0, 0, {0, 0, 0}, {0, 0, 0}, GS_WRAP_RULE_NEVER, 0.0, 0.0, 0.0, 1,
     "NVIDIA HGX B200 datasheet (1000 W configuration)",
     4.5e15, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 8, 9e11, 5e10},
};
#undef GS__CM_NO_GPU

GS_API int gs_chip_count(void) { return GS__COUNTOF(gs__cm_chip_table); }

GS_API const gs_chip *gs_chip_at(int i) {
    if (i < 0 || i >= GS__COUNTOF(gs__cm_chip_table)) return NULL;
    return &gs__cm_chip_table[i];
}

/* lower case without ' ', '-', '_' and without a leading "tpu"; false if it does not fit */
GS__FN bool gs__cm_chip_key(const char *name, char *key, size_t cap) {
    size_t n = 0;
    for (; *name; name++) {
        char ch = *name;
        if (ch == ' ' || ch == '-' || ch == '_') continue;
        if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
        if (n + 1 >= cap) return false;
        key[n++] = ch;
    }
    key[n] = 0;
    if (strncmp(key, "tpu", 3) == 0) memmove(key, key + 3, n - 3 + 1);
    return key[0] != 0;
}

GS_API const gs_chip *gs_chip_find(const char *name) {
    static const char *const aliases[][2] = {{"v4", "v4p"}, {"trillium", "v6e"}, {"nvidiah100", "h100"}, {"nvidiah800", "h800"}, {"nvidiab200", "b200"}};
    char key[40];
    int i;
    if (!name || !gs__cm_chip_key(name, key, sizeof key)) return NULL;
    for (i = 0; i < GS__COUNTOF(aliases); i++)
        if (strcmp(key, aliases[i][0]) == 0) memcpy(key, aliases[i][1], strlen(aliases[i][1]) + 1);
    for (i = 0; i < GS__COUNTOF(gs__cm_chip_table); i++)
        if (strcmp(key, gs__cm_chip_table[i].name) == 0) return &gs__cm_chip_table[i];
    return NULL;
}

GS_API gs_result gs_chip_lookup(gs_ctx *ctx, const char *name, const gs_chip **out) {
    const gs_chip *c;
    char known[256];
    size_t n = 0;
    int i;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (out) *out = NULL;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_chip_lookup: out is NULL");
    c = gs_chip_find(name);
    if (c) {
        *out = c;
        return GS_OK;
    }
    known[0] = 0;
    for (i = 0; i < GS__COUNTOF(gs__cm_chip_table) && n < sizeof known; i++)
        n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "", gs__cm_chip_table[i].name);
    return gs__err(ctx, GS_ERR_INVALID_ARG, "unknown chip '%s' (known: %s; any case, with or without a 'tpu' prefix)",
                   name ? name : "(null)", known);
}

GS__FN const char *gs__cm_chip_name(const gs_chip *c) { return c && c->name && *c->name ? c->name : "(unnamed)"; }

GS__FN bool gs__cm_finite_nonneg(double x) { return x == x && x >= 0.0 && x <= DBL_MAX; }

/* the chip's numeric fields by name, for the checker and the `key = value` reader */
typedef enum gs__cm_fkind { GS__CM_F_DOUBLE, GS__CM_F_INT, GS__CM_F_I64, GS__CM_F_DIMS, GS__CM_F_WRAP, GS__CM_F_STR } gs__cm_fkind;
typedef struct gs__cm_field { const char *name; size_t off; gs__cm_fkind kind; } gs__cm_field;
#define GS__CM_FIELD(f, k) {#f, offsetof(gs_chip, f), k}
static const gs__cm_field gs__cm_chip_fields[] = {
    GS__CM_FIELD(name, GS__CM_F_STR), GS__CM_FIELD(hbm_capacity, GS__CM_F_DOUBLE), GS__CM_FIELD(hbm_bw, GS__CM_F_DOUBLE),
    GS__CM_FIELD(flops_bf16, GS__CM_F_DOUBLE), GS__CM_FIELD(flops_int8, GS__CM_F_DOUBLE),
    GS__CM_FIELD(ici_bw_uni, GS__CM_F_DOUBLE), GS__CM_FIELD(ici_links, GS__CM_F_INT), GS__CM_FIELD(torus_rank, GS__CM_F_INT),
    GS__CM_FIELD(pod, GS__CM_F_DIMS), GS__CM_FIELD(host, GS__CM_F_DIMS), GS__CM_FIELD(wrap, GS__CM_F_WRAP),
    GS__CM_FIELD(pcie_bw, GS__CM_F_DOUBLE), GS__CM_FIELD(dcn_bw, GS__CM_F_DOUBLE), GS__CM_FIELD(hop_latency, GS__CM_F_DOUBLE),
    GS__CM_FIELD(cores_per_chip, GS__CM_F_INT), GS__CM_FIELD(source, GS__CM_F_STR), GS__CM_FIELD(flops_fp8, GS__CM_F_DOUBLE),
    GS__CM_FIELD(mxu_count, GS__CM_F_INT), GS__CM_FIELD(clock_hz, GS__CM_F_DOUBLE), GS__CM_FIELD(vmem_bytes, GS__CM_F_DOUBLE),
    GS__CM_FIELD(vmem_bw, GS__CM_F_DOUBLE), GS__CM_FIELD(host_dram, GS__CM_F_DOUBLE),
    GS__CM_FIELD(price_per_hour, GS__CM_F_DOUBLE), GS__CM_FIELD(nvlink_domain, GS__CM_F_I64),
    GS__CM_FIELD(nvlink_bw_uni, GS__CM_F_DOUBLE), GS__CM_FIELD(ib_bw_uni, GS__CM_F_DOUBLE),
};
#undef GS__CM_FIELD

GS_API gs_result gs_chip_check(gs_ctx *ctx, const gs_chip *c) {
    int i;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!c) return gs__err(ctx, GS_ERR_INVALID_ARG, "chip is NULL");
    for (i = 0; i < GS__COUNTOF(gs__cm_chip_fields); i++) {
        double v;
        if (gs__cm_chip_fields[i].kind != GS__CM_F_DOUBLE) continue;
        memcpy(&v, (const char *)c + gs__cm_chip_fields[i].off, sizeof v);
        if (!gs__cm_finite_nonneg(v))
            return gs__err(ctx, GS_ERR_INVALID_ARG, "chip '%s': %s must be finite and >= 0 (got %g)", gs__cm_chip_name(c),
                           gs__cm_chip_fields[i].name, v);
    }
    if (c->flops_bf16 <= 0.0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "chip '%s': flops_bf16 must be > 0 (got %g)", gs__cm_chip_name(c), c->flops_bf16);
    if (c->hbm_bw <= 0.0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "chip '%s': hbm_bw must be > 0 (got %g)", gs__cm_chip_name(c), c->hbm_bw);
    if (c->torus_rank < 0 || c->torus_rank > GS_COST_MAX_AXES)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "chip '%s': torus_rank %d is not 0..%d", gs__cm_chip_name(c), c->torus_rank,
                       GS_COST_MAX_AXES);
    if (c->ici_links < 0 || c->cores_per_chip < 0 || c->mxu_count < 0 || c->nvlink_domain < 0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "chip '%s': ici_links, cores_per_chip, mxu_count and nvlink_domain must be >= 0",
                       gs__cm_chip_name(c));
    if ((int)c->wrap < 0 || (int)c->wrap > (int)GS_WRAP_RULE_NEVER)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "chip '%s': unknown wrap rule %d", gs__cm_chip_name(c), (int)c->wrap);
    for (i = 0; i < GS_COST_MAX_AXES; i++)
        if (c->pod[i] < 0 || c->host[i] < 0)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "chip '%s': pod and host sizes must be >= 0", gs__cm_chip_name(c));
    return GS_OK;
}

/* one `key = value` line of a chip file into *c (key and value already trimmed) */
GS__FN gs_result gs__cm_chip_set(gs_ctx *ctx, gs_chip *c, int line, const char *key, const char *val) {
    static const char *const wraps[] = {"default", "pod_axis", "cube", "always", "never"};
    char *end = NULL;
    int i, j;
    for (i = 0; i < GS__COUNTOF(gs__cm_chip_fields); i++)
        if (strcmp(key, gs__cm_chip_fields[i].name) == 0) break;
    if (i == GS__COUNTOF(gs__cm_chip_fields))
        return gs__err(ctx, GS_ERR_PARSE, "chip file line %d: unknown field '%s' (the names are gs_chip's fields)", line, key);
    {
        const gs__cm_field *f = &gs__cm_chip_fields[i];
        char *dst = (char *)c + f->off;
        switch (f->kind) {
        case GS__CM_F_STR: {
            char *copy = gs__arena_strdup(ctx, val);
            if (!copy) return GS_ERR_OUT_OF_MEMORY;
            memcpy(dst, &copy, sizeof copy);
            return GS_OK;
        }
        case GS__CM_F_WRAP:
            for (j = 0; j < GS__COUNTOF(wraps); j++)
                if (strcmp(val, wraps[j]) == 0) {
                    gs_wrap_rule w = (gs_wrap_rule)j;
                    memcpy(dst, &w, sizeof w);
                    return GS_OK;
                }
            return gs__err(ctx, GS_ERR_PARSE, "chip file line %d: wrap '%s' is not pod_axis, cube, always or never", line, val);
        case GS__CM_F_DIMS: {
            int rank = 0;
            int64_t dims[GS_COST_MAX_AXES] = {0, 0, 0};
            if (gs_cost_parse_dims(ctx, val, &rank, dims) != GS_OK) {
                gs_ctx_clear_error(ctx);
                return gs__err(ctx, GS_ERR_PARSE, "chip file line %d: %s = '%s' is not like 16x16 or 4x4x4", line, key, val);
            }
            memcpy(dst, dims, sizeof dims);
            return GS_OK;
        }
        default: {
            double v;
            v = strtod(val, &end);
            if (end == val || *end || !gs__cm_finite_nonneg(v))
                return gs__err(ctx, GS_ERR_PARSE, "chip file line %d: %s = '%s' is not a finite number >= 0", line, key, val);
            if (f->kind == GS__CM_F_DOUBLE) {
                memcpy(dst, &v, sizeof v);
            } else {
                if (v != floor(v) || v > 9.0e15)
                    return gs__err(ctx, GS_ERR_PARSE, "chip file line %d: %s = '%s' is not a whole number", line, key, val);
                if (f->kind == GS__CM_F_INT) {
                    int iv;
                    if (v > 1e9) return gs__err(ctx, GS_ERR_PARSE, "chip file line %d: %s = '%s' is too large", line, key, val);
                    iv = (int)v;
                    memcpy(dst, &iv, sizeof iv);
                } else {
                    int64_t lv = (int64_t)v;
                    memcpy(dst, &lv, sizeof lv);
                }
            }
            return GS_OK;
        }
        }
    }
}

GS_API gs_result gs_chip_parse(gs_ctx *ctx, const char *text, gs_chip *out) {
    gs_chip c;
    unsigned seen = 0;   /* one bit per field (fewer than 32 fields) */
    int line = 0;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!text || !out) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_chip_parse: text or out is NULL");
    memset(&c, 0, sizeof c);
    while (*text) {
        char buf[512], *key, *val, *eq, *p;
        size_t n = strcspn(text, "\n");
        int i;
        line++;
        if (n >= sizeof buf) return gs__err(ctx, GS_ERR_PARSE, "chip file line %d: longer than %d characters", line, (int)sizeof buf - 1);
        memcpy(buf, text, n);
        buf[n] = 0;
        text += n + (text[n] == '\n');
        if ((p = strchr(buf, '#')) != NULL) *p = 0;
        for (key = buf; *key == ' ' || *key == '\t' || *key == '\r'; key++) {}
        for (p = key + strlen(key); p > key && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\r'); p--) p[-1] = 0;
        if (!*key) continue;
        eq = strchr(key, '=');
        if (!eq) return gs__err(ctx, GS_ERR_PARSE, "chip file line %d: expected `key = value`, got '%s'", line, key);
        *eq = 0;
        for (p = eq; p > key && (p[-1] == ' ' || p[-1] == '\t'); p--) p[-1] = 0;
        for (val = eq + 1; *val == ' ' || *val == '\t'; val++) {}
        if (!*key || !*val) return gs__err(ctx, GS_ERR_PARSE, "chip file line %d: empty key or value", line);
        if (strcmp(key, "base") == 0) {
            const gs_chip *b = gs_chip_find(val);
            if (seen) return gs__err(ctx, GS_ERR_PARSE, "chip file line %d: `base` must come before every other field", line);
            if (!b) return gs__err(ctx, GS_ERR_PARSE, "chip file line %d: unknown base chip '%s'", line, val);
            c = *b;
            seen |= 1u << 31;
            continue;
        }
        for (i = 0; i < GS__COUNTOF(gs__cm_chip_fields); i++)
            if (strcmp(key, gs__cm_chip_fields[i].name) == 0 && (seen & (1u << i)))
                return gs__err(ctx, GS_ERR_PARSE, "chip file line %d: '%s' given twice", line, key);
        if (gs__cm_chip_set(ctx, &c, line, key, val) != GS_OK) return gs_ctx_error(ctx);
        for (i = 0; i < GS__COUNTOF(gs__cm_chip_fields); i++)
            if (strcmp(key, gs__cm_chip_fields[i].name) == 0) seen |= 1u << i;
    }
    if (!c.name || !*c.name) return gs__err(ctx, GS_ERR_PARSE, "chip file: no `name = ...` line");
    if (gs_chip_check(ctx, &c) != GS_OK) return gs__err_prefix(ctx, "chip file: ");
    *out = c;
    return GS_OK;
}

GS__FN double gs__cm_chip_flops(const gs_chip *c, gs_math m) {
    return m == GS_MATH_INT8 ? c->flops_int8 : m == GS_MATH_FP8 ? c->flops_fp8 : c->flops_bf16;
}

GS_API double gs_chip_intensity(const gs_chip *c, gs_math m) {
    if (!c || c->hbm_bw <= 0.0 || gs__cm_chip_flops(c, m) <= 0.0) return 0.0;
    return gs__cm_chip_flops(c, m) / c->hbm_bw;
}

GS_API double gs_chip_latency_bytes(const gs_chip *c) { return c ? c->ici_bw_uni * c->hop_latency : 0.0; }

/* a chip that passes gs_chip_check and has the figure `what` > 0 */
GS__FN gs_result gs__cm_need(gs_ctx *ctx, const char *who, const gs_chip *c, const char *what, double v) {
    gs_result r = gs_chip_check(ctx, c);
    if (r != GS_OK) return r;
    if (v <= 0.0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: chip '%s' has no %s (0): set it in a user chip", who, gs__cm_chip_name(c),
                       what);
    return GS_OK;
}

GS__FN gs_result gs__cm_need_math(gs_ctx *ctx, const char *who, const gs_chip *c, gs_math m) {
    if ((int)m < 0 || (int)m > (int)GS_MATH_FP8) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: unknown math %d", who, (int)m);
    return gs__cm_need(ctx, who, c, m == GS_MATH_INT8 ? "flops_int8" : m == GS_MATH_FP8 ? "flops_fp8" : "flops_bf16",
                       gs__cm_chip_flops(c, m));
}

GS__FN gs_result gs__cm_check_amount(gs_ctx *ctx, const char *who, const char *what, double v) {
    if (v != v || v > DBL_MAX || v < -DBL_MAX) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %s is not finite", who, what);
    if (v < 0.0) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %s is negative (%g)", who, what, v);
    return GS_OK;
}

/* =========================================================================================================
   Roofline ([book] ch.1)
   ========================================================================================================= */

GS_API const char *gs_bound_name(gs_bound b) {
    switch (b) {
    case GS_BOUND_NONE: return "none";
    case GS_BOUND_COMPUTE: return "compute";
    case GS_BOUND_HBM: return "hbm";
    case GS_BOUND_ICI: return "ici";
    case GS_BOUND_LATENCY: return "latency";
    case GS_BOUND_DCN: return "dcn";
    }
    return "invalid";
}

/* T_math = FLOPs / C, T_comms = bytes / W, T_lower = max, T_upper = sum, I = FLOPs / bytes, I* = C / W */
GS__FN void gs__cm_roofline(double flops, double C, double bytes, double W, gs_roofline *o) {
    memset(o, 0, sizeof *o);
    o->flops = flops;
    o->bytes = bytes;
    o->t_math = flops / C;
    o->t_comms = bytes / W;
    o->t_lower = GS__MAX(o->t_math, o->t_comms);
    o->t_upper = o->t_math + o->t_comms;
    o->intensity = bytes > 0.0 ? flops / bytes : 0.0;
    o->critical_intensity = C / W;
    if (flops == 0.0 && bytes == 0.0) o->bound = GS_BOUND_NONE;
    else o->bound = o->t_math > o->t_comms ? GS_BOUND_COMPUTE : GS_BOUND_HBM;
}

GS_API gs_result gs_cost_roofline(gs_ctx *ctx, double flops, double flops_per_s, double bytes, double bytes_per_s,
                                  gs_roofline *out) {
    static const char *who = "gs_cost_roofline";
    gs_result r;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: out is NULL", who);
    if ((r = gs__cm_check_amount(ctx, who, "flops", flops)) != GS_OK) return r;
    if ((r = gs__cm_check_amount(ctx, who, "bytes", bytes)) != GS_OK) return r;
    if (!(flops_per_s > 0.0 && flops_per_s <= DBL_MAX) || !(bytes_per_s > 0.0 && bytes_per_s <= DBL_MAX))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: the FLOP rate (%g) and the bandwidth (%g) must be > 0", who,
                       flops_per_s, bytes_per_s);
    gs__cm_roofline(flops, flops_per_s, bytes, bytes_per_s, out);
    return GS_OK;
}

GS_API gs_result gs_cost_matmul(gs_ctx *ctx, const gs_chip *chip, int64_t B, int64_t D, int64_t F, double s_x,
                                double s_w, double s_o, gs_math math, gs_roofline *out) {
    static const char *who = "gs_cost_matmul";
    gs_result r;
    double b, d, f;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: out is NULL", who);
    if ((r = gs__cm_need_math(ctx, who, chip, math)) != GS_OK) return r;
    if (B < 0 || D < 0 || F < 0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: B, D, F must be >= 0 (got %lld, %lld, %lld)", who, (long long)B,
                       (long long)D, (long long)F);
    if ((r = gs__cm_check_amount(ctx, who, "s_x", s_x)) != GS_OK || (r = gs__cm_check_amount(ctx, who, "s_w", s_w)) != GS_OK ||
        (r = gs__cm_check_amount(ctx, who, "s_o", s_o)) != GS_OK)
        return r;
    b = (double)B;
    d = (double)D;
    f = (double)F;
    gs__cm_roofline(2.0 * b * d * f, gs__cm_chip_flops(chip, math), s_x * b * d + s_w * d * f + s_o * b * f, chip->hbm_bw, out);
    return GS_OK;
}

GS_API gs_result gs_cost_critical_batch(gs_ctx *ctx, const gs_chip *chip, double s_w, gs_math math, double *out) {
    static const char *who = "gs_cost_critical_batch";
    gs_result r;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: out is NULL", who);
    if ((r = gs__cm_need_math(ctx, who, chip, math)) != GS_OK) return r;
    if ((r = gs__cm_check_amount(ctx, who, "s_w", s_w)) != GS_OK) return r;
    *out = s_w * gs__cm_chip_flops(chip, math) / (2.0 * chip->hbm_bw);
    return GS_OK;
}

GS_API gs_result gs_cost_breakeven_batch(gs_ctx *ctx, const gs_chip *chip, int64_t D, int64_t F, double s_x,
                                         double s_w, double s_o, gs_math math, double *out) {
    static const char *who = "gs_cost_breakeven_batch";
    gs_result r;
    double C, W, d, f, den;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: out is NULL", who);
    if ((r = gs__cm_need_math(ctx, who, chip, math)) != GS_OK) return r;
    if (D <= 0 || F <= 0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: D and F must be > 0 (got %lld, %lld)", who, (long long)D, (long long)F);
    if ((r = gs__cm_check_amount(ctx, who, "s_x", s_x)) != GS_OK || (r = gs__cm_check_amount(ctx, who, "s_w", s_w)) != GS_OK ||
        (r = gs__cm_check_amount(ctx, who, "s_o", s_o)) != GS_OK)
        return r;
    C = gs__cm_chip_flops(chip, math);
    W = chip->hbm_bw;
    d = (double)D;
    f = (double)F;
    /* T_math = 2BDF/C against T_hbm = (s_x B D + s_w D F + s_o B F)/W, solved for B */
    den = 2.0 * d * f / C - (s_x * d + s_o * f) / W;
    *out = den > 0.0 ? (s_w * d * f / W) / den : HUGE_VAL;
    return GS_OK;
}

/* =========================================================================================================
   Communication ([book] ch.2, ch.3)
   ========================================================================================================= */

GS_API const char *gs_collective_kind_name(gs_collective_kind k) {
    switch (k) {
    case GS_COLLECTIVE_ALL_GATHER: return "all-gather";
    case GS_COLLECTIVE_REDUCE_SCATTER: return "reduce-scatter";
    case GS_COLLECTIVE_ALL_REDUCE: return "all-reduce";
    case GS_COLLECTIVE_ALL_TO_ALL: return "all-to-all";
    case GS_COLLECTIVE_PERMUTE: return "collective-permute";
    default: return "invalid";
    }
}

GS__FN const char *gs__cm_ring_name(gs_ring_kind k) {
    switch (k) {
    case GS_RING_DEFAULT:
    case GS_RING_BIDIRECTIONAL: return "ring";
    case GS_RING_UNIDIRECTIONAL: return "one-way ring";
    case GS_RING_OPEN_LINE: return "open line";
    }
    return "invalid";
}

GS__FN gs_ring_kind gs__cm_ring(const gs_cost_axis *a) { return a->ring == GS_RING_DEFAULT ? GS_RING_BIDIRECTIONAL : a->ring; }

/* AllGather hops along one axis: ceil((N-1)/2) = floor(N/2) both ways round a ring, N-1 otherwise.
   ([book] ch.3 writes ceil(N/2), one too many for odd N.) */
GS__FN int64_t gs__cm_ag_hops(const gs_cost_axis *a) {
    if (a->size <= 1) return 0;
    return gs__cm_ring(a) == GS_RING_BIDIRECTIONAL ? a->size / 2 : a->size - 1;
}

/* the farthest any message travels along one axis */
GS__FN int64_t gs__cm_diameter(const gs_cost_axis *a) { return gs__cm_ag_hops(a); }

/* AllToAll: bytes on the busiest link of this axis, per byte of a device's payload V_p. Every device sends
   V_p/N to each of the N devices along the axis (and dimension-ordered routing spreads the other axes' traffic
   evenly), so the load is c * (sum of distances) / links: a ring both ways floor(N^2/4) / (2N), a one-way ring
   (N-1)/2, an open line the middle link's floor(N/2) * ceil(N/2) / N. */
GS__FN double gs__cm_a2a_load(const gs_cost_axis *a) {
    double n = (double)a->size, lo = (double)(a->size / 2), hi = (double)(a->size - a->size / 2);
    if (a->size <= 1) return 0.0;
    switch (gs__cm_ring(a)) {
    case GS_RING_UNIDIRECTIONAL: return (n - 1.0) / 2.0;
    case GS_RING_OPEN_LINE: return lo * hi / n;
    default: return lo * hi / (2.0 * n);
    }
}

GS__FN void gs__cm_comm_finish(gs_cost_comm *o) {
    o->seconds = GS__MAX(o->t_latency, o->t_bandwidth);
    if (o->seconds <= 0.0) o->bound = GS_BOUND_NONE;
    else o->bound = o->t_latency >= o->t_bandwidth ? GS_BOUND_LATENCY : GS_BOUND_ICI;
}

/* The collective formulas (arguments already checked; chip has W_uni > 0). */
GS__FN void gs__cm_collective(const gs_chip *chip, gs_collective_kind kind, double V, int n_axes, const gs_cost_axis *axes,
                           gs_cost_comm *o) {
    double W = chip->ici_bw_uni, Tmin = chip->hop_latency, N = 1.0, bw = 0.0, load = 0.0;
    int64_t hops = 0;
    int i;
    memset(o, 0, sizeof *o);
    for (i = 0; i < n_axes; i++) N *= (double)axes[i].size;
    if (N <= 1.0) return;
    switch (kind) {
    case GS_COLLECTIVE_ALL_GATHER:
    case GS_COLLECTIVE_REDUCE_SCATTER:
    case GS_COLLECTIVE_ALL_REDUCE:
        /* h hops of s = V/N each way: h * max(T_min, s/W_uni). An axis moves V at N*W_uni/h bytes/s (W_bi on
           an even ring); several axes add their bandwidths (the book's V / (W_bi * n_axes)) and their hops
           (T_min * sum |X_i|/2). */
        for (i = 0; i < n_axes; i++) {
            int64_t h = gs__cm_ag_hops(&axes[i]);
            if (h == 0) continue;
            hops += h;
            bw += (double)axes[i].size * W / (double)h;
        }
        o->t_bandwidth = V / bw;
        o->t_latency = (double)hops * Tmin;
        o->hops = hops;
        o->bytes_sent = (N - 1.0) / N * V;
        if (kind == GS_COLLECTIVE_ALL_REDUCE) { /* ReduceScatter then AllGather */
            o->t_bandwidth *= 2.0;
            o->t_latency *= 2.0;
            o->hops *= 2;
            o->bytes_sent *= 2.0;
        }
        break;
    case GS_COLLECTIVE_ALL_TO_ALL:
        for (i = 0; i < n_axes; i++) {
            hops += gs__cm_diameter(&axes[i]);
            load = GS__MAX(load, gs__cm_a2a_load(&axes[i]));
        }
        o->t_bandwidth = load * (V / N) / W;
        o->t_latency = (double)hops * Tmin;
        o->hops = hops;
        o->bytes_sent = (N - 1.0) / N * (V / N);
        break;
    case GS_COLLECTIVE_PERMUTE:
        o->t_bandwidth = V / W;
        o->t_latency = Tmin;
        o->hops = 1;
        o->bytes_sent = V;
        break;
    default: break;
    }
    gs__cm_comm_finish(o);
}

GS__FN gs_result gs__cm_need_ici(gs_ctx *ctx, const char *who, const gs_chip *chip) {
    return gs__cm_need(ctx, who, chip, "ICI bandwidth (ici_bw_uni)", chip ? chip->ici_bw_uni : 0.0);
}

GS__FN gs_result gs__cm_check_axes(gs_ctx *ctx, const char *who, int n_axes, const gs_cost_axis *axes) {
    int i;
    if (n_axes < 1 || n_axes > GS_COST_MAX_AXES || !axes)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %d axes (1..%d with a non-NULL array expected)", who, n_axes,
                       GS_COST_MAX_AXES);
    for (i = 0; i < n_axes; i++) {
        if (axes[i].size < 1)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: axis %d has size %lld (must be >= 1)", who, i,
                           (long long)axes[i].size);
        if ((int)axes[i].ring < 0 || (int)axes[i].ring > (int)GS_RING_OPEN_LINE)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: axis %d has an unknown ring kind %d", who, i, (int)axes[i].ring);
    }
    return GS_OK;
}

GS_API gs_result gs_cost_collective(gs_ctx *ctx, const gs_chip *chip, gs_collective_kind kind, double V, int n_axes,
                                    const gs_cost_axis *axes, gs_cost_comm *out) {
    static const char *who = "gs_cost_collective";
    gs_result r;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: out is NULL", who);
    if ((r = gs__cm_need_ici(ctx, who, chip)) != GS_OK) return r;
    if (kind <= GS_COLLECTIVE_INVALID || kind > GS_COLLECTIVE_PERMUTE)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: unknown collective kind %d", who, (int)kind);
    if ((r = gs__cm_check_amount(ctx, who, "V (bytes)", V)) != GS_OK) return r;
    if ((r = gs__cm_check_axes(ctx, who, n_axes, axes)) != GS_OK) return r;
    gs__cm_collective(chip, kind, V, n_axes, axes, out);
    return GS_OK;
}

GS_API gs_result gs_cost_p2p(gs_ctx *ctx, const gs_chip *chip, double bytes, int64_t hops, int ports,
                             gs_cost_comm *out) {
    static const char *who = "gs_cost_p2p";
    gs_result r;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: out is NULL", who);
    if ((r = gs__cm_need_ici(ctx, who, chip)) != GS_OK) return r;
    if ((r = gs__cm_check_amount(ctx, who, "bytes", bytes)) != GS_OK) return r;
    if (hops < 0 || ports < 1)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: hops must be >= 0 and ports >= 1 (got %lld, %d)", who,
                       (long long)hops, ports);
    memset(out, 0, sizeof *out);
    out->t_bandwidth = bytes / ((double)ports * chip->ici_bw_uni);
    out->t_latency = (double)hops * chip->hop_latency;
    out->hops = hops;
    out->bytes_sent = bytes;
    gs__cm_comm_finish(out);
    return GS_OK;
}

GS__FN gs_result gs__cm_host_link(gs_ctx *ctx, const char *who, const gs_chip *chip, const char *what, double bw,
                               double bytes, int64_t n, gs_cost_comm *out) {
    gs_result r;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: out is NULL", who);
    if ((r = gs__cm_need(ctx, who, chip, what, chip ? bw : 0.0)) != GS_OK) return r;
    if ((r = gs__cm_check_amount(ctx, who, "bytes", bytes)) != GS_OK) return r;
    if (n < 1) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %lld links (must be >= 1)", who, (long long)n);
    memset(out, 0, sizeof *out);
    out->t_bandwidth = bytes / ((double)n * bw);
    out->seconds = out->t_bandwidth;
    out->bytes_sent = bytes / (double)n;
    out->bound = bytes > 0.0 ? GS_BOUND_ICI : GS_BOUND_NONE; /* read: bound by the link named */
    return GS_OK;
}

GS_API gs_result gs_cost_pcie(gs_ctx *ctx, const gs_chip *chip, double bytes, int64_t n_chips, gs_cost_comm *out) {
    return gs__cm_host_link(ctx, "gs_cost_pcie", chip, "PCIe bandwidth (pcie_bw)", chip ? chip->pcie_bw : 0.0, bytes,
                         n_chips, out);
}

GS_API gs_result gs_cost_dcn(gs_ctx *ctx, const gs_chip *chip, double bytes, int64_t n_hosts, gs_cost_comm *out) {
    return gs__cm_host_link(ctx, "gs_cost_dcn", chip, "DCN bandwidth (dcn_bw)", chip ? chip->dcn_bw : 0.0, bytes, n_hosts,
                         out);
}

/* =========================================================================================================
   Parallelism thresholds ([book] ch.5)
   ========================================================================================================= */

GS_API gs_result gs_cost_mlp(gs_ctx *ctx, const gs_chip *chip, gs_parallelism p, const gs_mlp_desc *d,
                             gs_mlp_cost *out) {
    static const char *who = "gs_cost_mlp";
    gs_result r;
    double C, W, B, D, F, X, Y, ax, ay, alpha;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out || !d) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %s is NULL", who, out ? "desc" : "out");
    if ((r = gs__cm_need_ici(ctx, who, chip)) != GS_OK) return r;
    if (p <= GS_PARALLEL_INVALID || p > GS_PARALLEL_FSDP_TENSOR)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: unknown parallelism %d", who, (int)p);
    if (d->batch < 1 || d->d_model < 1 || d->d_ff < 1 || d->x < 0 || d->y < 0 || d->axes_x < 0 || d->axes_y < 0)
        return gs__err(ctx, GS_ERR_INVALID_ARG,
                       "%s: batch, d_model, d_ff must be >= 1 and x, y, axes_x, axes_y >= 0 (0 means 1)", who);
    memset(out, 0, sizeof *out);
    C = chip->flops_bf16;
    W = 2.0 * chip->ici_bw_uni;   /* the book's W_ici: bidirectional */
    B = (double)d->batch;
    D = (double)d->d_model;
    F = (double)d->d_ff;
    X = d->x ? (double)d->x : 1.0;
    Y = d->y ? (double)d->y : 1.0;
    ax = d->axes_x ? (double)d->axes_x : 1.0;
    ay = d->axes_y ? (double)d->axes_y : 1.0;
    alpha = C / W;
    switch (p) {
    case GS_PARALLEL_DATA:   /* backward pass: four matmuls, two AllReduces of 2DF bytes */
        out->t_math = 8.0 * B * D * F / (X * C);
        out->t_comms = 8.0 * D * F / (ax * W);
        out->threshold = alpha / ax;
        break;
    case GS_PARALLEL_FSDP:   /* forward pass: two matmuls, two AllGathers of 2DF bytes */
        out->t_math = 4.0 * B * D * F / (X * C);
        out->t_comms = 4.0 * D * F / (ax * W);
        out->threshold = alpha / ax;
        break;
    case GS_PARALLEL_TENSOR: /* forward pass: AllGather of In, ReduceScatter of Out, 2BD bytes each */
        out->t_math = 4.0 * B * D * F / (Y * C);
        out->t_comms = 4.0 * B * D / (ay * W);
        out->threshold = ay * F / alpha;
        break;
    default:                 /* FSDP over X, tensor over Y */
        out->t_math = 4.0 * B * D * F / (X * Y * C);
        out->t_comms = 4.0 * D * F / (Y * W * ax) + 4.0 * B * D / (X * W * ay);
        out->threshold = 4.0 * alpha * alpha / (ax * ay * F);
        out->x_opt = sqrt(B / F * ax / ay * X * Y);
        break;
    }
    out->comm_bound = out->t_comms > out->t_math;
    return GS_OK;
}

GS_API gs_result gs_cost_dcn_min_batch(gs_ctx *ctx, const gs_chip *chip, double *out) {
    static const char *who = "gs_cost_dcn_min_batch";
    gs_result r;
    double per_host = 1.0;
    int i;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: out is NULL", who);
    if ((r = gs__cm_need(ctx, who, chip, "DCN bandwidth (dcn_bw)", chip ? chip->dcn_bw : 0.0)) != GS_OK) return r;
    for (i = 0; i < GS_COST_MAX_AXES; i++)
        if (chip->host[i] > 0) per_host *= (double)chip->host[i];
    /* C_pod / W_dcn,pod = (n C) / ((n / per_host) W_dcn): the pod size cancels */
    *out = per_host * chip->flops_bf16 / chip->dcn_bw;
    return GS_OK;
}

/* =========================================================================================================
   Topologies
   ========================================================================================================= */

#define GS__CM_MAX_DEVICES ((int64_t)1 << 24)

struct gs_topology {
    gs_chip chip;
    int mesh_rank;
    int64_t mesh[GS_COST_MAX_AXES];
    int rank;
    int64_t dims[GS_COST_MAX_AXES];
    bool wrap[GS_COST_MAX_AXES];
    int64_t n;
    int64_t *chip_of;   /* logical device -> physical chip (row-major over dims) */
};

GS__FN void gs__cm_dims_text(char *buf, size_t cap, int rank, const int64_t *dims) {
    size_t n = 0;
    int i;
    buf[0] = 0;
    for (i = 0; i < rank && n < cap; i++) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "x" : "", (long long)dims[i]);
}

GS__FN void gs__cm_ids_text(char *buf, size_t cap, int64_t n, const int64_t *ids) {
    size_t k = 0;
    int64_t i;
    k += (size_t)snprintf(buf, cap, "{");
    for (i = 0; i < n && k < cap; i++) {
        if (i == 8 && n > 9) {
            k += (size_t)snprintf(buf + k, cap - k, ",...");
            break;
        }
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "," : "", (long long)ids[i]);
    }
    if (k < cap) snprintf(buf + k, cap - k, "}");
}

GS_API gs_result gs_cost_parse_dims(gs_ctx *ctx, const char *text, int *rank, int64_t *dims) {
    const char *p = text;
    int n = 0;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!text || !rank || !dims) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_cost_parse_dims: NULL argument");
    *rank = 0;
    if (!*p) return gs__err(ctx, GS_ERR_INVALID_ARG, "mesh '': expected sizes such as 8x4");
    for (;;) {
        int64_t v = 0;
        if (*p < '0' || *p > '9')
            return gs__err(ctx, GS_ERR_INVALID_ARG, "mesh '%s': expected a size at '%s' (sizes such as 8x4 or 4x4x4)", text,
                           *p ? p : "the end");
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p - '0');
            if (v > GS__CM_MAX_DEVICES)
                return gs__err(ctx, GS_ERR_INVALID_ARG, "mesh '%s': size too large (at most %lld)", text,
                               (long long)GS__CM_MAX_DEVICES);
            p++;
        }
        if (v < 1) return gs__err(ctx, GS_ERR_INVALID_ARG, "mesh '%s': axis %d has size 0 (sizes must be >= 1)", text, n);
        if (n == GS_COST_MAX_AXES)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "mesh '%s': too many axes (at most %d)", text, GS_COST_MAX_AXES);
        dims[n++] = v;
        if (*p == 0) break;
        if (*p != 'x' && *p != 'X')
            return gs__err(ctx, GS_ERR_INVALID_ARG, "mesh '%s': expected 'x' between sizes at '%s'", text, p);
        p++;
    }
    *rank = n;
    return GS_OK;
}

GS__FN void gs__cm_sort_desc(int64_t *a, int n) {
    int i, j;
    for (i = 1; i < n; i++)
        for (j = i; j > 0 && a[j] > a[j - 1]; j--) {
            int64_t t = a[j];
            a[j] = a[j - 1];
            a[j - 1] = t;
        }
}

GS__FN bool gs__cm_axis_wraps(const gs_chip *c, gs_wrap_mode mode, int64_t size) {
    int i;
    if (size <= 1) return false;
    if (mode == GS_WRAP_ALL) return true;
    if (mode == GS_WRAP_NONE) return false;
    switch (c->wrap) {
    case GS_WRAP_RULE_ALWAYS: return size > 2;
    case GS_WRAP_RULE_NEVER: return false;
    case GS_WRAP_RULE_CUBE: return size % 4 == 0;   /* [book] ch.2: multiples of 4x4x4 cubes wrap */
    default:                                        /* [book] ch.2: only full (pod-length) axes wrap */
        for (i = 0; i < GS_COST_MAX_AXES; i++)
            if (c->pod[i] > 0 && size == c->pod[i]) return true;
        return false;
    }
}

GS_API gs_result gs_topology_create(gs_ctx *ctx, const gs_topology_desc *desc, gs_topology **out) {
    static const char *who = "gs_topology_create";
    gs_topology *t;
    gs_result r;
    int i, big = 0, pod_rank = 0;
    int64_t n = 1, m = 1, sl[GS_COST_MAX_AXES], pd[GS_COST_MAX_AXES];
    char a[64], b[64];
    char *seen;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (out) *out = NULL;
    if (!desc || !out) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %s is NULL", who, desc ? "out" : "desc");
    if ((r = gs_chip_check(ctx, desc->chip)) != GS_OK) return r;
    if (desc->mesh_rank < 1 || desc->mesh_rank > GS_COST_MAX_AXES)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: mesh_rank %d is not 1..%d", who, desc->mesh_rank, GS_COST_MAX_AXES);
    if (desc->torus_rank < 0 || desc->torus_rank > GS_COST_MAX_AXES)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: torus_rank %d is not 0..%d", who, desc->torus_rank, GS_COST_MAX_AXES);
    if ((int)desc->wrap < 0 || (int)desc->wrap > (int)GS_WRAP_NONE)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: unknown wrap mode %d", who, (int)desc->wrap);
    for (i = 0; i < desc->mesh_rank; i++) {
        if (desc->mesh[i] < 1 || desc->mesh[i] > GS__CM_MAX_DEVICES)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: mesh axis %d has size %lld", who, i, (long long)desc->mesh[i]);
        m *= desc->mesh[i];
        if (m > GS__CM_MAX_DEVICES)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: more than %lld devices", who, (long long)GS__CM_MAX_DEVICES);
    }
    t = (gs_topology *)gs__arena_alloc(ctx, sizeof *t);
    if (!t) return GS_ERR_OUT_OF_MEMORY;
    t->chip = *desc->chip;
    t->mesh_rank = desc->mesh_rank;
    memcpy(t->mesh, desc->mesh, sizeof(int64_t) * (size_t)desc->mesh_rank);
    if (desc->torus_rank == 0) {
        t->rank = desc->mesh_rank;
        memcpy(t->dims, desc->mesh, sizeof(int64_t) * (size_t)desc->mesh_rank);
    } else {
        t->rank = desc->torus_rank;
        for (i = 0; i < desc->torus_rank; i++) {
            if (desc->torus[i] < 1 || desc->torus[i] > GS__CM_MAX_DEVICES)
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: torus axis %d has size %lld", who, i, (long long)desc->torus[i]);
            t->dims[i] = desc->torus[i];
        }
    }
    for (i = 0; i < t->rank; i++) {
        n *= t->dims[i];
        if (n > GS__CM_MAX_DEVICES)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: more than %lld chips", who, (long long)GS__CM_MAX_DEVICES);
    }
    gs__cm_dims_text(a, sizeof a, t->mesh_rank, t->mesh);
    gs__cm_dims_text(b, sizeof b, t->rank, t->dims);
    if (n != m)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: the mesh %s has %lld devices but the torus %s has %lld chips", who, a,
                       (long long)m, b, (long long)n);
    t->n = n;
    for (i = 0; i < t->rank; i++)
        if (t->dims[i] > 1) sl[big++] = t->dims[i];
    if (n > 1) {
        if (t->chip.torus_rank == 0)
            return gs__err(ctx, GS_ERR_UNSUPPORTED,
                           "%s: chip '%s' has no ICI torus in this model: only a single device (mesh 1) can be costed", who,
                           gs__cm_chip_name(&t->chip));
        if (t->chip.ici_bw_uni <= 0.0)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: chip '%s' has no ICI bandwidth (ici_bw_uni = 0), so %lld devices cannot talk",
                           who, gs__cm_chip_name(&t->chip), (long long)n);
        if (big > t->chip.torus_rank)
            return gs__err(ctx, GS_ERR_INVALID_ARG,
                           "%s: the slice %s has %d axes longer than 1 but a %s torus has %d (lay the mesh onto a torus of at most %d axes)",
                           who, b, big, gs__cm_chip_name(&t->chip), t->chip.torus_rank, t->chip.torus_rank);
        for (i = 0; i < GS_COST_MAX_AXES; i++)
            if (t->chip.pod[i] > 0) pd[pod_rank++] = t->chip.pod[i];
        if (pod_rank > 0) {
            bool fits = big <= pod_rank;
            gs__cm_sort_desc(sl, big);
            gs__cm_sort_desc(pd, pod_rank);
            for (i = 0; fits && i < big; i++)
                if (sl[i] > pd[i]) fits = false;
            if (!fits) {
                char c[64];
                int64_t pod[GS_COST_MAX_AXES];
                int k, np = 0;
                for (k = 0; k < GS_COST_MAX_AXES; k++)
                    if (t->chip.pod[k] > 0) pod[np++] = t->chip.pod[k];
                gs__cm_dims_text(c, sizeof c, np, pod);
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: the slice %s does not fit in a %s pod (%s)", who, b,
                               gs__cm_chip_name(&t->chip), c);
            }
        }
    }
    for (i = 0; i < t->rank; i++) t->wrap[i] = gs__cm_axis_wraps(&t->chip, desc->wrap, t->dims[i]);
    t->chip_of = (int64_t *)gs__arena_alloc(ctx, sizeof(int64_t) * (size_t)n);
    if (!t->chip_of) return GS_ERR_OUT_OF_MEMORY;
    if (!desc->device_order) {
        int64_t d;
        for (d = 0; d < n; d++) t->chip_of[d] = d;
    } else {
        int64_t d;
        seen = (char *)gs__malloc(ctx, (size_t)n);
        if (!seen) return GS_ERR_OUT_OF_MEMORY;
        memset(seen, 0, (size_t)n);
        for (d = 0; d < n; d++) {
            int64_t c = desc->device_order[d];
            if (c < 0 || c >= n || seen[c]) {
                gs__free(ctx, seen);
                if (c < 0 || c >= n)
                    return gs__err(ctx, GS_ERR_INVALID_ARG,
                                   "%s: the device order is not a permutation of 0..%lld: entry %lld is %lld", who,
                                   (long long)(n - 1), (long long)d, (long long)c);
                return gs__err(ctx, GS_ERR_INVALID_ARG,
                               "%s: the device order is not a permutation of 0..%lld: chip %lld appears twice", who,
                               (long long)(n - 1), (long long)c);
            }
            seen[c] = 1;
            t->chip_of[d] = c;
        }
        gs__free(ctx, seen);
    }
    *out = t;
    return GS_OK;
}

GS_API const gs_chip *gs_topology_chip(const gs_topology *t) { return t ? &t->chip : NULL; }
GS_API int64_t gs_topology_num_devices(const gs_topology *t) { return t ? t->n : 0; }

GS_API int gs_topology_torus(const gs_topology *t, int64_t *dims, bool *wrap) {
    int i;
    if (!t) return 0;
    for (i = 0; i < t->rank; i++) {
        if (dims) dims[i] = t->dims[i];
        if (wrap) wrap[i] = t->wrap[i];
    }
    return t->rank;
}

GS__FN void gs__cm_chip_coords(const gs_topology *t, int64_t chip, int64_t *coords) {
    int i;
    for (i = t->rank - 1; i >= 0; i--) {
        coords[i] = chip % t->dims[i];
        chip /= t->dims[i];
    }
}

GS__FN int64_t gs__cm_chip_at(const gs_topology *t, const int64_t *coords) {
    int64_t c = 0;
    int i;
    for (i = 0; i < t->rank; i++) c = c * t->dims[i] + coords[i];
    return c;
}

GS_API gs_result gs_topology_coords(const gs_topology *t, int64_t device, int64_t *coords) {
    if (!t || !coords || device < 0 || device >= t->n) return GS_ERR_INVALID_ARG;
    gs__cm_chip_coords(t, t->chip_of[device], coords);
    return GS_OK;
}

GS__FN int gs__cm_cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The box a group spans (see gs_topology_group_shape). */
GS__FN gs_result gs__cm_group_shape(gs_ctx *ctx, const char *who, const gs_topology *t, int64_t n, const int64_t *ids,
                                    gs_topology_group *out) {
    int64_t maxdim = 1, i, cnt[GS_COST_MAX_AXES], prod = 1, co[GS_COST_MAX_AXES], *sorted;
    char *used;
    char txt[160];
    int a;
    memset(out, 0, sizeof *out);
    if (n < 1 || !ids) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: an empty replica group", who);
    for (a = 0; a < t->rank; a++) maxdim = GS__MAX(maxdim, t->dims[a]);
    used = (char *)gs__malloc(ctx, (size_t)(t->rank * maxdim));
    if (!used) return GS_ERR_OUT_OF_MEMORY;
    memset(used, 0, (size_t)(t->rank * maxdim));
    sorted = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)n);
    if (!sorted) {
        gs__free(ctx, used);
        return GS_ERR_OUT_OF_MEMORY;
    }
    memcpy(sorted, ids, sizeof(int64_t) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(int64_t), gs__cm_cmp_i64);
    for (i = 0; i < n; i++) {
        if (sorted[i] < 0 || sorted[i] >= t->n || (i > 0 && sorted[i] == sorted[i - 1])) {
            int64_t bad = sorted[i];
            gs__free(ctx, sorted);
            gs__free(ctx, used);
            gs__cm_ids_text(txt, sizeof txt, n, ids);
            if (bad < 0 || bad >= t->n)
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: replica group %s names device %lld, but the mesh has %lld", who,
                               txt, (long long)bad, (long long)t->n);
            return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: replica group %s names device %lld twice", who, txt,
                           (long long)bad);
        }
    }
    gs__free(ctx, sorted);
    for (i = 0; i < n; i++) {
        gs__cm_chip_coords(t, t->chip_of[ids[i]], co);
        for (a = 0; a < t->rank; a++) used[a * maxdim + co[a]] = 1;
    }
    for (a = 0; a < t->rank; a++) {
        int64_t c;
        cnt[a] = 0;
        for (c = 0; c < t->dims[a]; c++) cnt[a] += used[a * maxdim + c];
        prod *= cnt[a];
    }
    if (prod != n) {
        gs__free(ctx, used);
        gs__cm_ids_text(txt, sizeof txt, n, ids);
        return gs__err(ctx, GS_ERR_INVALID_ARG,
                       "%s: replica group %s is not a box of the physical torus (its devices do not fill the product of the "
                       "coordinates they use; reorder the devices so each group lies along whole mesh axes)",
                       who, txt);
    }
    for (a = 0; a < t->rank; a++) {
        int64_t c, lo = -1, hi = -1, starts = 0, dim = t->dims[a];
        const char *u = used + a * maxdim;
        gs_cost_axis ax;
        if (cnt[a] <= 1) continue;
        ax.size = cnt[a];
        if (cnt[a] == dim) {
            ax.ring = t->wrap[a] ? GS_RING_BIDIRECTIONAL : GS_RING_OPEN_LINE;
        } else {
            for (c = 0; c < dim; c++) {
                if (!u[c]) continue;
                if (lo < 0) lo = c;
                hi = c;
                if (!u[(c + dim - 1) % dim]) starts++;
            }
            /* a contiguous run: one start on a wrapping axis (it may cross the seam), else lo..hi full */
            if (t->wrap[a] ? starts != 1 : hi - lo + 1 != cnt[a]) {
                gs__free(ctx, used);
                gs__cm_ids_text(txt, sizeof txt, n, ids);
                return gs__err(ctx, GS_ERR_INVALID_ARG,
                               "%s: replica group %s is not contiguous along physical axis %d (it uses %lld of its %lld "
                               "chips with gaps; reorder the devices so each group lies along whole mesh axes)",
                               who, txt, a, (long long)cnt[a], (long long)dim);
            }
            ax.ring = GS_RING_OPEN_LINE;
        }
        out->physical_axis[out->n_axes] = a;
        out->axes[out->n_axes] = ax;
        out->n_axes++;
    }
    gs__free(ctx, used);
    return GS_OK;
}

GS_API gs_result gs_topology_group_shape(gs_ctx *ctx, const gs_topology *t, int64_t n, const int64_t *ids,
                                         gs_topology_group *out) {
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!t || !out) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_topology_group_shape: NULL argument");
    return gs__cm_group_shape(ctx, "gs_topology_group_shape", t, n, ids, out);
}

/* every group's box and time; the slowest group's time and layout are returned */
GS__FN gs_result gs__cm_topo_collective(gs_ctx *ctx, const char *who, const gs_topology *t, gs_collective_kind kind,
                                     double V, int64_t n_groups, int64_t group_size, const int64_t *ids,
                                     gs_cost_comm *out, gs_topology_group *layout) {
    int64_t g;
    gs_topology_group gl;
    gs_cost_comm c;
    gs_result r;
    memset(out, 0, sizeof *out);
    if (layout) memset(layout, 0, sizeof *layout);
    for (g = 0; g < n_groups; g++) {
        r = gs__cm_group_shape(ctx, who, t, group_size, ids + g * group_size, &gl);
        if (r != GS_OK) return r;
        if (gl.n_axes == 0) continue;
        gs__cm_collective(&t->chip, kind, V, gl.n_axes, gl.axes, &c);
        if (c.seconds > out->seconds || (out->bound == GS_BOUND_NONE && c.bound != GS_BOUND_NONE)) {
            *out = c;
            if (layout) *layout = gl;
        }
    }
    return GS_OK;
}

GS_API gs_result gs_topology_collective(gs_ctx *ctx, const gs_topology *t, gs_collective_kind kind, double V,
                                        int64_t n_groups, int64_t group_size, const int64_t *ids, gs_cost_comm *out) {
    static const char *who = "gs_topology_collective";
    gs_result r;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!t || !out || !ids) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: NULL argument", who);
    if (kind <= GS_COLLECTIVE_INVALID || kind >= GS_COLLECTIVE_PERMUTE)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: kind %d is not AllGather, ReduceScatter, AllReduce or AllToAll "
                       "(use gs_topology_permute for a collective-permute)", who, (int)kind);
    if ((r = gs__cm_check_amount(ctx, who, "V (bytes)", V)) != GS_OK) return r;
    if (n_groups < 1 || group_size < 1 || n_groups > t->n || group_size > t->n)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %lld groups of %lld devices on %lld devices", who,
                       (long long)n_groups, (long long)group_size, (long long)t->n);
    return gs__cm_topo_collective(ctx, who, t, kind, V, n_groups, group_size, ids, out, NULL);
}

/* ---- collective-permute routing ---- */
typedef struct gs__cm_router {
    const gs_topology *t;
    double *load;        /* [chip][axis][2] bytes per directed link */
    int64_t dst[GS_COST_MAX_AXES];
    double bytes;
} gs__cm_router;

/* moves along order[k..] from cur towards dst, adding frac of the message to every link crossed */
GS__FN void gs__cm_route(gs__cm_router *R, const int *order, int n_order, int k, int64_t *cur, double frac) {
    const gs_topology *t = R->t;
    int a, dir;
    int64_t steps, dim, s, save;
    if (k == n_order) return;
    a = order[k];
    dim = t->dims[a];
    save = cur[a];
    if (t->wrap[a]) {
        int64_t fwd = ((R->dst[a] - cur[a]) % dim + dim) % dim, bwd = (dim - fwd) % dim;
        if (fwd == bwd && fwd != 0) { /* half way round: half each way */
            int64_t c2[GS_COST_MAX_AXES];
            memcpy(c2, cur, sizeof c2);
            for (s = 0; s < fwd; s++) {
                R->load[(gs__cm_chip_at(t, c2) * t->rank + a) * 2 + 0] += frac * 0.5 * R->bytes;
                c2[a] = (c2[a] + 1) % dim;
            }
            gs__cm_route(R, order, n_order, k + 1, c2, frac * 0.5);
            memcpy(c2, cur, sizeof c2);
            for (s = 0; s < bwd; s++) {
                R->load[(gs__cm_chip_at(t, c2) * t->rank + a) * 2 + 1] += frac * 0.5 * R->bytes;
                c2[a] = (c2[a] + dim - 1) % dim;
            }
            gs__cm_route(R, order, n_order, k + 1, c2, frac * 0.5);
            return;
        }
        dir = fwd <= bwd ? 0 : 1;
        steps = fwd <= bwd ? fwd : bwd;
    } else {
        dir = R->dst[a] >= cur[a] ? 0 : 1;
        steps = dir == 0 ? R->dst[a] - cur[a] : cur[a] - R->dst[a];
    }
    for (s = 0; s < steps; s++) {
        R->load[(gs__cm_chip_at(t, cur) * t->rank + a) * 2 + dir] += frac * R->bytes;
        cur[a] = dir == 0 ? (cur[a] + 1) % dim : (cur[a] + dim - 1) % dim;
    }
    gs__cm_route(R, order, n_order, k + 1, cur, frac);
    cur[a] = save;
}

GS__FN gs_result gs__cm_topo_permute(gs_ctx *ctx, const char *who, const gs_topology *t, double bytes, int64_t n_pairs,
                                  const int64_t *pairs, gs_cost_comm *out) {
    gs__cm_router R;
    int64_t p, maxhops = 0, i, nlinks = t->n * t->rank * 2;
    double maxload = 0.0;
    bool moves = false;
    memset(out, 0, sizeof *out);
    for (p = 0; p < n_pairs; p++) {
        for (i = 0; i < 2; i++)
            if (pairs[2 * p + i] < 0 || pairs[2 * p + i] >= t->n)
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: pair %lld names device %lld, but the mesh has %lld", who,
                               (long long)p, (long long)pairs[2 * p + i], (long long)t->n);
    }
    R.t = t;
    R.bytes = bytes;
    R.load = (double *)gs__malloc(ctx, sizeof(double) * (size_t)(nlinks ? nlinks : 1));
    if (!R.load) return GS_ERR_OUT_OF_MEMORY;
    for (i = 0; i < nlinks; i++) R.load[i] = 0.0;
    for (p = 0; p < n_pairs; p++) {
        int64_t src[GS_COST_MAX_AXES], cur[GS_COST_MAX_AXES], hops = 0;
        int diff[GS_COST_MAX_AXES], nd = 0, r, a, order[GS_COST_MAX_AXES];
        if (pairs[2 * p] == pairs[2 * p + 1]) continue;
        moves = true;
        gs__cm_chip_coords(t, t->chip_of[pairs[2 * p]], src);
        gs__cm_chip_coords(t, t->chip_of[pairs[2 * p + 1]], R.dst);
        for (a = 0; a < t->rank; a++) {
            int64_t d = R.dst[a] - src[a], dim = t->dims[a];
            if (d == 0) continue;
            diff[nd++] = a;
            if (d < 0) d = -d;
            hops += t->wrap[a] ? GS__MIN(d, dim - d) : d;
        }
        maxhops = GS__MAX(maxhops, hops);
        /* dimension-ordered routes, one per rotation of the axis order, each carrying 1/nd */
        for (r = 0; r < nd; r++) {
            for (a = 0; a < nd; a++) order[a] = diff[(r + a) % nd];
            memcpy(cur, src, sizeof cur);
            gs__cm_route(&R, order, nd, 0, cur, 1.0 / (double)nd);
        }
    }
    for (i = 0; i < nlinks; i++) maxload = GS__MAX(maxload, R.load[i]);
    gs__free(ctx, R.load);
    if (!moves) return GS_OK;
    out->t_bandwidth = maxload / t->chip.ici_bw_uni;
    out->t_latency = (double)maxhops * t->chip.hop_latency;
    out->hops = maxhops;
    out->bytes_sent = bytes;
    gs__cm_comm_finish(out);
    return GS_OK;
}

GS_API gs_result gs_topology_permute(gs_ctx *ctx, const gs_topology *t, double bytes, int64_t n_pairs,
                                     const int64_t *pairs, gs_cost_comm *out) {
    static const char *who = "gs_topology_permute";
    gs_result r;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!t || !out || (n_pairs > 0 && !pairs)) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: NULL argument", who);
    if (n_pairs < 0) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %lld pairs", who, (long long)n_pairs);
    if ((r = gs__cm_check_amount(ctx, who, "bytes", bytes)) != GS_OK) return r;
    return gs__cm_topo_permute(ctx, who, t, bytes, n_pairs, pairs, out);
}

/* =========================================================================================================
   Program cost
   ========================================================================================================= */

struct gs_cost_report {
    gs_ctx *ctx;
    gs_graph *entry;
    const gs_topology *topo;
    gs_cost_row *rows;
    int n_rows;
    const char **warnings;
    int n_warnings;
    gs_cost_totals totals;
    const char *text, *json;
};

GS__FN gs_ctx *gs__cm_report_ctx(const gs_cost_report *r) { return r->ctx; }
GS__FN const gs_topology *gs__cm_report_topo(const gs_cost_report *r) { return r->topo; }

/* sums over a computation's rows (a while row counts its loop's) */
typedef struct gs__cm_csum {
    double flops, hbm, hbm_read, ici, t_math, t_hbm, t_ici, seconds, seconds_comm, seconds_other;
    double by_bound[5];   /* seconds per gs_bound */
} gs__cm_csum;

typedef struct gs__cm_coster {
    gs_ctx *ctx;
    const gs_topology *topo;
    int64_t parts;
    gs_cost_row *rows;   /* stb_ds */
    char **warns;        /* stb_ds of arena strings */
    bool failed;
} gs__cm_coster;

GS__FN double gs__cm_vbytes(const gs_value *v) {
    double b = 0.0;
    int i;
    if (!v) return 0.0;
    if (v->shape.dtype != GS_TUPLE) return (double)gs_shape_bytes(&v->shape);
    for (i = 0; i < v->n_tuple; i++) b += (double)gs_shape_bytes(&v->tuple[i]);
    return b;
}

GS__FN double gs__cm_vnumel(const gs_value *v) { return v && v->shape.dtype != GS_TUPLE ? (double)gs__numel(&v->shape) : 0.0; }

GS__FN bool gs__cm_is_collective(gs_op op) {
    return op == GS_OP_ALL_REDUCE || op == GS_OP_ALL_GATHER || op == GS_OP_REDUCE_SCATTER || op == GS_OP_ALL_TO_ALL ||
           op == GS_OP_COLLECTIVE_PERMUTE || op == GS_OP_RAGGED_ALL_TO_ALL;
}

/* ops whose result is (a view of) an operand's buffer: no data moves and no new buffer */
GS__FN bool gs__cm_is_alias(gs_op op) {
    return op == GS_OP_TUPLE || op == GS_OP_GET_TUPLE_ELEMENT || op == GS_OP_RESHAPE || op == GS_OP_ANNOTATE ||
           op == GS_OP_TO_MANUAL || op == GS_OP_TO_FULL || op == GS_OP_WHILE;
}

GS__FN double gs__cm_ceil_log2(double x) {
    double k = 0.0, p = 1.0;
    while (p < x) {
        p *= 2.0;
        k += 1.0;
    }
    return k;
}

GS__FN const char *gs__cm_vname(const gs_value *v) { return v && v->name ? v->name : "_"; }

/* FLOPs and HBM bytes read and written by a non-collective, non-while instruction */
/* operations per application of a reducer computation: its instructions that compute (at least 1) */
GS__FN double gs__cm_reducer_ops(const gs_graph *r) {
    int i, n = 0;
    for (i = 0; i < (int)stbds_arrlen(r->values); i++) {
        gs_op op = r->values[i]->op;
        n += op != GS_OP_PARAMETER && op != GS_OP_CONSTANT && op != GS_OP_TUPLE && op != GS_OP_GET_TUPLE_ELEMENT;
    }
    return n > 0 ? (double)n : 1.0;
}

GS__FN void gs__cm_op_work(const gs_value *v, double *flops, double *rd, double *wr) {
    double out = gs__cm_vbytes(v), in = 0.0, n = gs__cm_vnumel(v);
    int i;
    for (i = 0; i < v->n_operands; i++) in += gs__cm_vbytes(v->operands[i]);
    *flops = 0.0;
    *rd = in;
    *wr = out;
    switch (v->op) {
    case GS_OP_PARAMETER: case GS_OP_CONSTANT: case GS_OP_TUPLE: case GS_OP_GET_TUPLE_ELEMENT: case GS_OP_RESHAPE:
    case GS_OP_PARTITION_ID: case GS_OP_ANNOTATE: case GS_OP_TO_MANUAL: case GS_OP_TO_FULL:
        *rd = *wr = 0.0;
        break;
    case GS_OP_IOTA:
        *rd = 0.0;
        break;
    case GS_OP_SLICE:
        *rd = out;
        break;
    case GS_OP_DYNAMIC_SLICE:        /* the slice and the start indices */
        *rd = out + (in - gs__cm_vbytes(v->operands[0]));
        break;
    case GS_OP_DYNAMIC_UPDATE_SLICE: /* in place: read the update and the starts, write the update */
        *rd = in - gs__cm_vbytes(v->operands[0]);
        *wr = gs__cm_vbytes(v->operands[1]);
        break;
    case GS_OP_GATHER:               /* the gathered rows and the indices */
        *rd = out + gs__cm_vbytes(v->operands[1]);
        break;
    case GS_OP_SCATTER:              /* in place: indices, updates, and the touched region read and written */
        *flops = gs__cm_vnumel(v->operands[2]);
        *rd = gs__cm_vbytes(v->operands[1]) + 2.0 * gs__cm_vbytes(v->operands[2]);
        *wr = gs__cm_vbytes(v->operands[2]);
        break;
    case GS_OP_BROADCAST: case GS_OP_TRANSPOSE: case GS_OP_PAD: case GS_OP_CONCATENATE: case GS_OP_REVERSE:
    case GS_OP_COPY:
        break;
    case GS_OP_REDUCE: case GS_OP_ARGMAX: case GS_OP_ARGMIN: case GS_OP_CUMSUM: case GS_OP_CUMPROD: case GS_OP_CUMMAX:
    case GS_OP_CUMMIN:
        *flops = gs__cm_vnumel(v->operands[0]);
        break;
    case GS_OP_REDUCE_WINDOW: {
        double w = 1.0;
        for (i = 0; i < v->operands[0]->shape.rank; i++) w *= (double)v->window[i].size;
        *flops = n * w;
        break;
    }
    case GS_OP_DOT: {
        double k = 1.0;
        for (i = 0; i < v->dot->n_contract; i++) k *= (double)v->operands[0]->shape.dims[v->dot->lhs_contract[i]];
        *flops = 2.0 * n * k;
        break;
    }
    case GS_OP_RAGGED_DOT: {   /* a dot's 2 * outputs * contracted extent; in contracting mode each k falls in one
                                  group, so the result's group dim does not multiply the work */
        const gs_ragged_dot_dims *rdd = v->ragged;
        gs__rdinfo I;
        double k = 1.0;
        for (i = 0; i < rdd->dot.n_contract; i++) k *= (double)v->operands[0]->shape.dims[rdd->dot.lhs_contract[i]];
        if (gs__ragged_info(rdd, v->operands[0]->shape.rank, &I) == GS__RD_CONTRACT && v->shape.dims[0] > 0)
            k /= (double)v->shape.dims[0];
        *flops = 2.0 * n * k;
        break;
    }
    case GS_OP_CONVOLUTION: { /* 2 * outputs * window * input features per group (the kernel's input-feature dim) */
        const gs_conv_dims *cd = &v->conv->dims;
        const gs_shape *ks = &v->operands[1]->shape;
        double k = (double)ks->dims[cd->kernel_input_feature];
        for (i = 0; i < cd->n_spatial; i++) k *= (double)ks->dims[cd->kernel_spatial[i]];
        *flops = 2.0 * n * k;
        break;
    }
    case GS_OP_SORT: {
        const gs_value *x = v->operands[0];
        *flops = gs__cm_vnumel(x) * GS__MAX(1.0, gs__cm_ceil_log2((double)x->shape.dims[v->dim]));
        break;
    }
    case GS_OP_TOPK:
        *flops = gs__cm_vnumel(v->operands[0]) * GS__MAX(1.0, gs__cm_ceil_log2((double)v->dim));
        break;
    case GS_OP_BATCH_NORM_TRAINING: case GS_OP_BATCH_NORM_INFERENCE: case GS_OP_BATCH_NORM_GRAD:
        /* per element of x: the statistics' sums (training, grad) and the normalisation, about 8 operations */
        *flops = 8.0 * gs__cm_vnumel(v->operands[0]);
        break;
    case GS_OP_RNG_BIT_GENERATOR: {   /* Threefry: 20 rounds of 3 operations per 2 words; Philox: 10 of ~6 per 4 */
        const gs_shape *bs = v->rbg_shape;
        *flops = bs ? 30.0 * (double)gs__numel(bs) : 0.0;
        break;
    }
    case GS_OP_CHOLESKY: {   /* n^3 / 3 multiply-adds per matrix */
        const gs_shape *a = &v->operands[0]->shape;
        double m = (double)a->dims[a->rank - 1];
        *flops = n / (m > 0 ? m * m : 1.0) * (2.0 * m * m * m / 3.0);
        break;
    }
    case GS_OP_FFT: {   /* 5 N log2 N real operations per complex transform of N points (the radix-2 count); a
                           real transform is about half of that: counted over the complex half spectrum */
        double pts = 1.0;
        int a;
        for (a = 0; a < v->fft_n && a < 3; a++) pts *= (double)v->fft_len[a];
        *flops = pts > 1.0 ? 5.0 * gs__cm_vnumel(v->fft_type == GS_FFT_RFFT ? v : v->operands[0]) * log2(pts) : 0.0;
        break;
    }
    case GS_OP_SELECT_AND_SCATTER: {   /* a select per window element, a scatter per window */
        double w = 1.0;
        int a;
        for (a = 0; v->window && a < v->shape.rank; a++) w *= (double)v->window[a].size;
        *flops = gs__cm_vnumel(v->operands[1]) * (w + 1.0);
        break;
    }
    case GS_OP_TRIANGULAR_SOLVE: {   /* m^2 multiply-adds per right-hand side */
        const gs_shape *a = &v->operands[0]->shape;
        *flops = n * (double)a->dims[a->rank - 1];
        break;
    }
    default: /* elementwise, convert, compare, select, clamp, rng: one operation per output element */
        *flops = n;
        break;
    }
    if (v->reduce == GS_REDUCE_CUSTOM && v->reducer) *flops *= gs__cm_reducer_ops(v->reducer);   /* per combination */
    if (v->red_n > 0) {   /* one result of a variadic op: its share of the one fold over every operand, read once */
        int b = gs__red_base(v);
        double all = v->op == GS_OP_SCATTER ? gs__cm_vbytes(v->operands[1]) : 0.0;
        for (i = b; i < v->n_operands; i++)   /* scatter: the updates, read, and the touched region read */
            if (v->op != GS_OP_SCATTER || i >= b + v->red_n) all += (v->op == GS_OP_SCATTER ? 2.0 : 1.0) * gs__cm_vbytes(v->operands[i]);
        *flops /= v->red_n;
        *rd = all / v->red_n;
    }
}

/* the sticky error of a failed call, its message prefixed with the instruction */
GS__FN gs_result gs__cm_fail(gs_ctx *ctx, gs_result code, const gs_value *v) {
    if (ctx->err == GS_OK) return gs__err(ctx, code, "gs_cost_program: %s '%s' failed", gs_op_name(v->op), gs__cm_vname(v));
    return gs__err_prefix(ctx, "gs_cost_program: %s '%.64s': ", gs_op_name(v->op), gs__cm_vname(v));
}

GS__FN gs_result gs__cm_row_collective(gs__cm_coster *K, const gs_value *v, gs_cost_row *row) {
    char who[256];
    gs_cost_comm c;
    gs_result r;
    double in = gs__cm_vbytes(v->operands[0]), out = gs__cm_vbytes(v), V = 0.0;
    gs_collective_kind kind = GS_COLLECTIVE_INVALID;
    snprintf(who, sizeof who, "gs_cost_program: %s '%s'", gs_op_name(v->op), gs__cm_vname(v));
    row->hbm_read = in;
    row->hbm_written = out;
    row->hbm_bytes = in + out;
    if (v->op == GS_OP_COLLECTIVE_PERMUTE) {
        r = gs__cm_topo_permute(K->ctx, who, K->topo, in, v->n_pairs, v->pairs, &c);
        if (r != GS_OK) return r;
    } else {
        int64_t ng = 0, gsz = 0;
        const int64_t *ids = NULL;
        r = gs__groups_expand(K->ctx, &v->coll.groups, K->parts, &ng, &gsz, &ids);
        if (r != GS_OK) return gs__cm_fail(K->ctx, r, v);
        switch (v->op) {
        case GS_OP_ALL_GATHER: kind = GS_COLLECTIVE_ALL_GATHER; V = out; break;
        case GS_OP_REDUCE_SCATTER: kind = GS_COLLECTIVE_REDUCE_SCATTER; V = in; break;
        case GS_OP_ALL_REDUCE: kind = GS_COLLECTIVE_ALL_REDUCE; V = in; break;
        /* ragged-all-to-all: the rows sent are data (send_sizes); the bound is an all-to-all whose every device
           receives its whole output buffer */
        case GS_OP_RAGGED_ALL_TO_ALL: kind = GS_COLLECTIVE_ALL_TO_ALL; V = (double)gsz * out; break;
        default: kind = GS_COLLECTIVE_ALL_TO_ALL; V = (double)gsz * in; break;
        }
        r = gs__cm_topo_collective(K->ctx, who, K->topo, kind, V, ng, gsz, ids, &c, &row->group);
        gs__free(K->ctx, (void *)ids);
        if (r != GS_OK) return r;
        row->group_size = gsz;
        if ((kind == GS_COLLECTIVE_ALL_REDUCE || kind == GS_COLLECTIVE_REDUCE_SCATTER) && gsz > 1)
            row->flops = (double)(gsz - 1) / (double)gsz * gs__cm_vnumel(v->operands[0]);
    }
    row->ici_bytes = c.bytes_sent;
    row->t_ici = c.seconds;
    row->bound = c.bound;   /* refined against T_math and T_hbm by the caller */
    return GS_OK;
}

/* ---- while trip counts ---- */
GS__FN bool gs__cm_const_int(const gs_value *v, int64_t *out) {
    if (!v || v->op != GS_OP_CONSTANT || !v->data || (v->shape.rank != 0 && !v->splat)) return false;
    if (v->shape.dtype == GS_S32) {
        int32_t x;
        memcpy(&x, v->data, 4);
        *out = x;
        return true;
    }
    if (v->shape.dtype == GS_U32) {
        uint32_t x;
        memcpy(&x, v->data, 4);
        *out = (int64_t)x;
        return true;
    }
    return false;
}

/* is v element k of the state parameter p (get-tuple-element(p, k), or p itself for an array state)? */
GS__FN bool gs__cm_is_counter(const gs_value *v, const gs_value *p, bool tuple, int64_t k) {
    if (!tuple) return v == p;
    return v && v->op == GS_OP_GET_TUPLE_ELEMENT && v->operands[0] == p && v->index == k;
}

GS__FN int64_t gs__cm_floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

GS__FN bool gs__cm_trip_count(const gs_value *w, int64_t *trips) {
    const gs_value *init = w->operands[0], *croot, *broot, *cp, *bp, *other = NULL, *upd;
    bool tuple = init->shape.dtype == GS_TUPLE;
    int64_t k, start = 0, limit = 0, step = 0, nk, span;
    gs_cmp dir;
    if (!w->cond || !w->body || !w->cond->root || !w->body->root) return false;
    croot = w->cond->root;
    broot = w->body->root;
    cp = gs_graph_param(w->cond, 0);
    bp = gs_graph_param(w->body, 0);
    if (!cp || !bp || croot->op != GS_OP_COMPARE) return false;
    dir = croot->cmp;
    nk = tuple ? w->n_tuple : 1;
    for (k = 0; k < nk; k++) {
        if (gs__cm_is_counter(croot->operands[0], cp, tuple, k) && gs__cm_const_int(croot->operands[1], &limit)) break;
        if (gs__cm_is_counter(croot->operands[1], cp, tuple, k) && gs__cm_const_int(croot->operands[0], &limit)) {
            /* constant on the left: flip the direction */
            dir = dir == GS_CMP_LT ? GS_CMP_GT : dir == GS_CMP_GT ? GS_CMP_LT : dir == GS_CMP_LE ? GS_CMP_GE
                : dir == GS_CMP_GE ? GS_CMP_LE : dir;
            break;
        }
    }
    if (k == nk) return false;
    /* start: element k of a tuple(...) init, or the init constant itself */
    if (tuple) {
        if (init->op != GS_OP_TUPLE || !gs__cm_const_int(init->operands[k], &start)) return false;
        if (broot->op != GS_OP_TUPLE) return false;
        upd = broot->operands[k];
    } else {
        if (!gs__cm_const_int(init, &start)) return false;
        upd = broot;
    }
    /* step: counter + c, c + counter or counter - c */
    if (upd->op == GS_OP_ADD && gs__cm_is_counter(upd->operands[0], bp, tuple, k)) other = upd->operands[1];
    else if (upd->op == GS_OP_ADD && gs__cm_is_counter(upd->operands[1], bp, tuple, k)) other = upd->operands[0];
    else if (upd->op == GS_OP_SUBTRACT && gs__cm_is_counter(upd->operands[0], bp, tuple, k)) other = upd->operands[1];
    if (!other || !gs__cm_const_int(other, &step)) return false;
    if (upd->op == GS_OP_SUBTRACT) step = -step;
    if (step == 0) return false;
    span = limit - start;
    switch (dir) {
    case GS_CMP_LT: if (step < 0) return false; *trips = span <= 0 ? 0 : gs__cm_floor_div(span + step - 1, step); break;
    case GS_CMP_LE: if (step < 0) return false; *trips = span < 0 ? 0 : gs__cm_floor_div(span, step) + 1; break;
    case GS_CMP_GT: if (step > 0) return false; *trips = span >= 0 ? 0 : gs__cm_floor_div(-span + (-step) - 1, -step); break;
    case GS_CMP_GE: if (step > 0) return false; *trips = span > 0 ? 0 : gs__cm_floor_div(-span, -step) + 1; break;
    case GS_CMP_NE:
        if (span % step != 0 || span / step < 0) return false;
        *trips = span / step;
        break;
    default: return false;
    }
    return true;
}

GS__FN void gs__cm_warn(gs__cm_coster *K, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
GS__FN void gs__cm_warn(gs__cm_coster *K, const char *fmt, ...) {
    char buf[512];
    char *s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    s = gs__arena_strdup(K->ctx, buf);
    if (!s) {
        K->failed = true;
        return;
    }
    stbds_arrput(K->warns, s);
}

GS__FN void gs__cm_row_bound(gs_cost_row *row) {
    gs_bound ici = row->bound;
    row->seconds = GS__MAX(row->t_math, GS__MAX(row->t_hbm, row->t_ici));
    if (row->seconds <= 0.0) row->bound = GS_BOUND_NONE;
    else if (row->t_ici >= row->t_math && row->t_ici >= row->t_hbm) row->bound = ici == GS_BOUND_LATENCY ? GS_BOUND_LATENCY : GS_BOUND_ICI;
    else if (row->t_math >= row->t_hbm) row->bound = GS_BOUND_COMPUTE;
    else row->bound = GS_BOUND_HBM;
}

GS__FN void gs__cm_csum_add(gs__cm_csum *s, const gs__cm_csum *x, double k) {
    int b;
    s->flops += k * x->flops;
    s->hbm += k * x->hbm;
    s->hbm_read += k * x->hbm_read;
    s->ici += k * x->ici;
    s->t_math += k * x->t_math;
    s->t_hbm += k * x->t_hbm;
    s->t_ici += k * x->t_ici;
    s->seconds += k * x->seconds;
    s->seconds_comm += k * x->seconds_comm;
    s->seconds_other += k * x->seconds_other;
    for (b = 0; b < 5; b++) s->by_bound[b] += k * x->by_bound[b];
}

/* Peak bytes of live buffers over g's instructions. extra[i] is added at instruction i (a loop's own peak).
   Parameters count (live from the start) only when with_params. Aliasing ops (tuple, get-tuple-element,
   bitcast reshape, sharding custom-calls, while) make no buffer and keep their operands alive as long as
   themselves; dynamic-update-slice and scatter update operand 0 in place when nothing reads it later and it
   is not a parameter (XLA's in-place rule without donation), else they make a new buffer. */
GS__FN gs_result gs__cm_graph_peak(gs_ctx *ctx, const gs_graph *g, const double *extra, bool with_params, double *peak) {
    int n = (int)stbds_arrlen(g->values), i, j;
    int *last;
    char *inplace;
    double *delta, live = 0.0;
    *peak = 0.0;
    last = (int *)gs__malloc(ctx, sizeof(int) * (size_t)(n + 1));
    delta = (double *)gs__malloc(ctx, sizeof(double) * (size_t)(n + 3));
    inplace = (char *)gs__malloc(ctx, (size_t)(n + 1));
    if (!last || !delta || !inplace) {
        gs__free(ctx, last);
        gs__free(ctx, delta);
        gs__free(ctx, inplace);
        return GS_ERR_OUT_OF_MEMORY;
    }
    for (i = 0; i < n; i++) last[i] = g->values[i] == g->root ? n : i;
    for (i = 0; i < n + 3; i++) delta[i] = 0.0;
    memset(inplace, 0, (size_t)(n + 1));
    /* users come after their operands: walking backwards, last[u] is final when u is reached */
    for (i = n - 1; i >= 0; i--) {
        const gs_value *u = g->values[i], *o0 = u->n_operands ? u->operands[0] : NULL;
        if ((u->op == GS_OP_DYNAMIC_UPDATE_SLICE || u->op == GS_OP_SCATTER) && o0 && o0->graph == g &&
            o0->op != GS_OP_PARAMETER && last[o0->id] <= i)
            inplace[i] = 1;
        for (j = 0; j < u->n_operands; j++) {
            const gs_value *o = u->operands[j];
            int end = gs__cm_is_alias(u->op) || (inplace[i] && j == 0) ? last[i] : i;
            if (o && o->graph == g && last[o->id] < end) last[o->id] = end;
        }
    }
    /* slot s = instruction s - 1; slot 0 is "before the first instruction" (parameters), slot n + 1 the end */
    for (i = 0; i < n; i++) {
        const gs_value *v = g->values[i];
        int from;
        if (gs__cm_is_alias(v->op) || inplace[i]) continue;
        if (v->op == GS_OP_PARAMETER && !with_params) continue;
        from = v->op == GS_OP_PARAMETER ? 0 : i + 1;
        delta[from] += gs__cm_vbytes(v);
        delta[last[i] + 2] -= gs__cm_vbytes(v);
    }
    for (i = 0; i <= n + 1; i++) {
        double here;
        live += delta[i];
        here = live + (i >= 1 && i <= n && extra ? extra[i - 1] : 0.0);
        if (here > *peak) *peak = here;
    }
    gs__free(ctx, last);
    gs__free(ctx, delta);
    gs__free(ctx, inplace);
    return GS_OK;
}

/* a row that stands for computations it runs (a while, a conditional): their sums, bound by where the time goes */
GS__FN void gs__cm_row_from_sum(gs_cost_row *rp, const gs__cm_csum *one) {
    int b;
    double best = 0.0;
    rp->flops = one->flops;
    rp->hbm_bytes = one->hbm;
    rp->hbm_read = one->hbm_read;
    rp->hbm_written = one->hbm - one->hbm_read;
    rp->ici_bytes = one->ici;
    rp->t_math = one->t_math;
    rp->t_hbm = one->t_hbm;
    rp->t_ici = one->t_ici;
    rp->seconds = one->seconds;
    rp->bound = GS_BOUND_NONE;
    for (b = 1; b < 5; b++)
        if (one->by_bound[b] > best) {
            best = one->by_bound[b];
            rp->bound = (gs_bound)b;
        }
}

GS__FN gs_result gs__cm_graph(gs__cm_coster *K, gs_graph *g, int parent, int role, gs__cm_csum *sum, double *peak);

/* A conditional runs one branch, and which one is known only at run time: its row counts the branch that takes
   longest (the worst case), each branch's rows follow it (role 3), and its peak is the largest branch's. */
GS__FN gs_result gs__cm_cond_row(gs__cm_coster *K, const gs_value *v, int idx, gs__cm_csum *one, double *extra) {
    int k, worst = -1;
    gs_result r = GS_OK;
    for (k = 0; k < v->n_branches && r == GS_OK; k++) {
        gs__cm_csum bs;
        double bpk = 0.0;
        r = gs__cm_graph(K, v->branches[k], idx, 3, &bs, &bpk);
        if (r != GS_OK) break;
        *extra = GS__MAX(*extra, bpk);
        if (worst < 0 || bs.seconds > one->seconds) {
            *one = bs;
            worst = k;
        }
    }
    if (r == GS_OK) {
        K->rows[idx].trips = worst;   /* the branch counted */
        gs__cm_row_from_sum(&K->rows[idx], one);
    }
    return r;
}

GS__FN gs_result gs__cm_graph(gs__cm_coster *K, gs_graph *g, int parent, int role, gs__cm_csum *sum, double *peak) {
    int n = (int)stbds_arrlen(g->values), i;
    double *extra;
    const gs_chip *chip = &K->topo->chip;
    gs_result r = GS_OK;
    memset(sum, 0, sizeof *sum);
    *peak = 0.0;
    extra = (double *)gs__malloc(K->ctx, sizeof(double) * (size_t)(n + 1));
    if (!extra) return GS_ERR_OUT_OF_MEMORY;
    for (i = 0; i < n; i++) extra[i] = 0.0;
    for (i = 0; i < n && r == GS_OK; i++) {
        gs_value *v = g->values[i];
        gs_cost_row row, *rp;
        int idx = (int)stbds_arrlen(K->rows);
        gs__cm_csum one;
        memset(&row, 0, sizeof row);
        memset(&one, 0, sizeof one);
        row.value = v;
        row.parent = parent;
        row.role = role;
        row.trips = 1;
        row.trips_known = true;
        stbds_arrput(K->rows, row);
        if (v->op == GS_OP_CONDITIONAL) {
            r = gs__cm_cond_row(K, v, idx, &one, &extra[i]);
            if (r != GS_OK) break;
        } else if (v->op == GS_OP_WHILE) {
            gs__cm_csum cs, bs;
            double cpk = 0.0, bpk = 0.0, tb, tc;
            int64_t trips = 1;
            bool known;
            r = gs__cm_graph(K, v->cond, idx, 2, &cs, &cpk);
            if (r == GS_OK) r = gs__cm_graph(K, v->body, idx, 1, &bs, &bpk);
            if (r != GS_OK) break;
            known = gs__cm_trip_count(v, &trips);
            if (!known) {
                trips = 1;
                gs__cm_warn(K, "while '%s': iteration count not found (it needs a constant start in the init tuple, "
                         "compare(counter, constant) in the condition and counter +/- constant in the body); "
                         "its condition and body are counted once", gs__cm_vname(v));
            }
            tb = (double)trips;
            tc = known ? (double)trips + 1.0 : 1.0;
            gs__cm_csum_add(&one, &bs, tb);
            gs__cm_csum_add(&one, &cs, tc);
            extra[i] = GS__MAX(cpk, bpk);
            rp = &K->rows[idx];
            rp->trips = trips;
            rp->trips_known = known;
            gs__cm_row_from_sum(rp, &one);
        } else {
            rp = &K->rows[idx];
            if (gs__cm_is_collective(v->op)) {
                r = gs__cm_row_collective(K, v, rp);
                if (r != GS_OK) break;
            } else {
                gs__cm_op_work(v, &rp->flops, &rp->hbm_read, &rp->hbm_written);
                rp->hbm_bytes = rp->hbm_read + rp->hbm_written;
            }
            rp->t_math = rp->flops / chip->flops_bf16;
            rp->t_hbm = rp->hbm_bytes / chip->hbm_bw;
            gs__cm_row_bound(rp);
            one.flops = rp->flops;
            one.hbm = rp->hbm_bytes;
            one.hbm_read = rp->hbm_read;
            one.ici = rp->ici_bytes;
            one.t_math = rp->t_math;
            one.t_hbm = rp->t_hbm;
            one.t_ici = rp->t_ici;
            one.seconds = rp->seconds;
            if (gs__cm_is_collective(v->op)) one.seconds_comm = rp->seconds;
            else one.seconds_other = rp->seconds;
            one.by_bound[rp->bound] = rp->seconds;
        }
        gs__cm_csum_add(sum, &one, 1.0);
    }
    if (r == GS_OK) r = gs__cm_graph_peak(K->ctx, g, extra, parent < 0, peak);
    gs__free(K->ctx, extra);
    return r;
}

GS__FN bool gs__cm_graph_has(const gs_graph *g, bool (*pred)(const gs_value *v), int depth) {
    int i;
    if (!g || depth > 64) return false;
    for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
        const gs_value *v = g->values[i];
        if (pred(v)) return true;
        int k;
        for (k = 0; k < gs__n_subgraphs(v); k++)
            if (gs__cm_graph_has(gs__subgraph(v, k), pred, depth + 1)) return true;
    }
    return false;
}

GS__FN bool gs__cm_pred_collective(const gs_value *v) { return gs__cm_is_collective(v->op); }
GS__FN bool gs__cm_pred_sharded(const gs_value *v) { return v->sharding != NULL; }

GS__FN const gs_value *gs__cm_first_sharded(const gs_graph *g, int depth) {
    int i;
    if (!g || depth > 64) return NULL;
    for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
        const gs_value *v = g->values[i], *w;
        int k;
        if (v->sharding) return v;
        for (k = 0; k < gs__n_subgraphs(v); k++)
            if ((w = gs__cm_first_sharded(gs__subgraph(v, k), depth + 1)) != NULL) return w;
    }
    return NULL;
}

GS_API gs_result gs_cost_program(gs_graph *entry, const gs_topology *topo, gs_cost_report **out) {
    gs_ctx *ctx;
    gs__cm_coster K;
    gs__cm_csum sum;
    double peak = 0.0;
    gs_result r;
    gs_cost_report *rep;
    int i;
    if (out) *out = NULL;
    if (!entry) return GS_ERR_INVALID_ARG;
    ctx = entry->ctx;
    if (ctx->err != GS_OK) return ctx->err;
    if (!topo || !out) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_cost_program: %s is NULL", topo ? "out" : "topology");
    if ((r = gs__verify_once(entry)) != GS_OK) return r;
    if (gs__cm_graph_has(entry, gs__cm_pred_sharded, 0) && !gs__cm_graph_has(entry, gs__cm_pred_collective, 0)) {
        const gs_value *v = gs__cm_first_sharded(entry, 0);
        const char *st = gs_value_sharding_text(v);
        return gs__err(ctx, GS_ERR_UNSUPPORTED,
                       "gs_cost_program: '%s' carries sharding=%s but the program has no collectives: it is annotated, not "
                       "partitioned. Partition it first; the cost model reads SPMD programs (per-device shapes, explicit "
                       "collectives)", gs__cm_vname(v), st ? st : "{...}");
    }
    if (gs_graph_num_partitions(entry) != topo->n) {
        char m[64];
        gs__cm_dims_text(m, sizeof m, topo->mesh_rank, topo->mesh);
        return gs__err(ctx, GS_ERR_INVALID_ARG,
                       "gs_cost_program: the program is written for %lld partitions (num_partitions) but the mesh %s has "
                       "%lld devices", (long long)gs_graph_num_partitions(entry), m, (long long)topo->n);
    }
    memset(&K, 0, sizeof K);
    K.ctx = ctx;
    K.topo = topo;
    K.parts = topo->n;
    r = gs__cm_graph(&K, entry, -1, 0, &sum, &peak);
    if (r == GS_OK && K.failed) r = GS_ERR_OUT_OF_MEMORY;
    rep = NULL;
    if (r == GS_OK) {
        rep = (gs_cost_report *)gs__arena_alloc(ctx, sizeof *rep);
        if (!rep) r = GS_ERR_OUT_OF_MEMORY;
    }
    if (r == GS_OK) {
        rep->ctx = ctx;
        rep->entry = entry;
        rep->topo = topo;
        rep->n_rows = (int)stbds_arrlen(K.rows);
        rep->rows = (gs_cost_row *)gs__arena_dup(ctx, K.rows, sizeof(gs_cost_row) * (size_t)(rep->n_rows ? rep->n_rows : 0));
        rep->totals.flops = sum.flops;
        rep->totals.hbm_bytes = sum.hbm;
        rep->totals.ici_bytes = sum.ici;
        rep->totals.seconds_serial = sum.seconds;
        rep->totals.seconds_overlapped = GS__MAX(sum.seconds_other, sum.seconds_comm);
        rep->totals.seconds_compute = sum.t_math;
        rep->totals.seconds_hbm = sum.t_hbm;
        rep->totals.seconds_ici = sum.t_ici;
        rep->totals.peak_hbm_bytes = peak;
        rep->totals.hbm_capacity = topo->chip.hbm_capacity;
        rep->totals.fits_in_hbm = topo->chip.hbm_capacity <= 0.0 || peak <= topo->chip.hbm_capacity;
        if (!rep->totals.fits_in_hbm)
            gs__cm_warn(&K, "peak HBM per device is %.4g GB but a %s chip has %.4g GB: the program does not fit",
                     peak / 1e9, gs__cm_chip_name(&topo->chip), topo->chip.hbm_capacity / 1e9);
        rep->n_warnings = (int)stbds_arrlen(K.warns);
        rep->warnings = (const char **)gs__arena_alloc(ctx, sizeof(char *) * (size_t)(rep->n_warnings + 1));
        if ((rep->n_rows && !rep->rows) || !rep->warnings || K.failed) {
            r = GS_ERR_OUT_OF_MEMORY;
        } else {
            for (i = 0; i < rep->n_warnings; i++) rep->warnings[i] = K.warns[i];
            gs__log(ctx, GS_LOG_INFO, GS_OK, "gs_cost_program: %d instructions, %.4g s serial", rep->n_rows,
                    sum.seconds);
            for (i = 0; i < rep->n_warnings; i++) gs__log(ctx, GS_LOG_WARN, GS_OK, "%s", rep->warnings[i]);
        }
    }
    stbds_arrfree(K.rows);
    stbds_arrfree(K.warns);
    if (r != GS_OK) {
        if (ctx->err == GS_OK) gs__err(ctx, r, "gs_cost_program: %s", gs_result_str(r));
        return r;
    }
    *out = rep;
    return GS_OK;
}

GS_API int gs_cost_report_num_rows(const gs_cost_report *r) { return r ? r->n_rows : 0; }
GS_API const gs_cost_row *gs_cost_report_row(const gs_cost_report *r, int i) {
    return r && i >= 0 && i < r->n_rows ? &r->rows[i] : NULL;
}
GS_API gs_cost_totals gs_cost_report_totals(const gs_cost_report *r) {
    gs_cost_totals t;
    if (r) return r->totals;
    memset(&t, 0, sizeof t);
    return t;
}
GS_API int gs_cost_report_num_warnings(const gs_cost_report *r) { return r ? r->n_warnings : 0; }
GS_API const char *gs_cost_report_warning(const gs_cost_report *r, int i) {
    return r && i >= 0 && i < r->n_warnings ? r->warnings[i] : NULL;
}

/* ---- text ---- */

/* 3 significant digits with an SI prefix: "17.2 GFLOP", "8.39 MB", "0 B" */
GS__FN void gs__cm_fmt_si(char *buf, size_t cap, double x, const char *unit) {
    static const char *const pre[] = {"", "k", "M", "G", "T", "P", "E"};
    int k = 0;
    if (x == 0.0) {
        snprintf(buf, cap, "0 %s", unit);
        return;
    }
    while (x >= 999.5 && k < 6) {
        x /= 1000.0;
        k++;
    }
    snprintf(buf, cap, "%.3g %s%s", x, pre[k], unit);
}

GS__FN void gs__cm_fmt_time(char *buf, size_t cap, double s) {
    if (s == 0.0) snprintf(buf, cap, "0 s");
    else if (s < 1e-6) snprintf(buf, cap, "%.3g ns", s * 1e9);
    else if (s < 1e-3) snprintf(buf, cap, "%.3g us", s * 1e6);
    else if (s < 1.0) snprintf(buf, cap, "%.3g ms", s * 1e3);
    else snprintf(buf, cap, "%.3g s", s);
}

/* value -> its first row, per graph (no hash map: stb_ds's byte hash shifts into the sign bit) */
typedef struct gs__cm_rowmap { const gs_graph *g; int *row_of; } gs__cm_rowmap;

typedef struct gs__cm_textctx {
    gs_cost_report *rep;
    gs__cm_rowmap *maps;  /* stb_ds array, one per graph with rows */
    bool oom;
} gs__cm_textctx;

GS__FN int *gs__cm_rows_of(gs__cm_textctx *T, const gs_graph *g, bool make) {
    int i, n;
    gs__cm_rowmap m;
    for (i = 0; i < (int)stbds_arrlen(T->maps); i++)
        if (T->maps[i].g == g) return T->maps[i].row_of;
    if (!make) return NULL;
    n = (int)stbds_arrlen(g->values);
    m.g = g;
    m.row_of = (int *)gs__malloc(T->rep->ctx, sizeof(int) * (size_t)(n + 1));
    if (!m.row_of) {
        T->oom = true;
        return NULL;
    }
    for (i = 0; i < n; i++) m.row_of[i] = -1;
    stbds_arrput(T->maps, m);
    return m.row_of;
}

GS__FN void gs__cm_group_text(gs__sb *sb, const gs_cost_row *row) {
    int a;
    if (row->group.n_axes == 0) return;
    gs__sb_printf(sb, " over %lld devices (", (long long)row->group_size);
    for (a = 0; a < row->group.n_axes; a++)
        gs__sb_printf(sb, "%sphysical axis %d: %s of %lld", a ? ", " : "", row->group.physical_axis[a],
                      gs__cm_ring_name(row->group.axes[a].ring), (long long)row->group.axes[a].size);
    gs__sb_puts(sb, ")");
}

/* one line "  // 87.2 us, compute-bound, 17.2 GFLOP, HBM 44 MB" written above the instruction */
GS__FN void gs__cm_row_comment(gs__sb *sb, const gs_cost_row *row) {
    char a[48], b[48], c[48];
    gs__sb_puts(sb, "  // ");
    if (row->value->op == GS_OP_WHILE) {
        if (row->trips_known) gs__sb_printf(sb, "%lld iterations", (long long)row->trips);
        else gs__sb_puts(sb, "iteration count unknown: counted once");
        gs__sb_puts(sb, "; ");
    }
    if (row->value->op == GS_OP_CONDITIONAL) gs__sb_printf(sb, "the longest branch (%lld); ", (long long)row->trips);
    if (row->bound == GS_BOUND_NONE && row->seconds == 0.0) {
        gs__sb_puts(sb, "none");
    } else {
        gs__cm_fmt_time(a, sizeof a, row->seconds);
        gs__sb_printf(sb, "%s, %s-bound", a, gs_bound_name(row->bound));
        if (row->flops > 0.0) {
            gs__cm_fmt_si(b, sizeof b, row->flops, "FLOP");
            gs__sb_printf(sb, ", %s", b);
        }
        if (row->hbm_bytes > 0.0) {
            gs__cm_fmt_si(b, sizeof b, row->hbm_bytes, "B");
            gs__sb_printf(sb, ", HBM %s", b);
        }
        if (row->ici_bytes > 0.0 || gs__cm_is_collective(row->value->op)) {
            gs__cm_fmt_si(c, sizeof c, row->ici_bytes, "B");
            gs__sb_printf(sb, ", ICI %s", c);
            gs__cm_group_text(sb, row);
        }
    }
    if (row->role == 1) gs__sb_puts(sb, " (per iteration)");
    else if (row->role == 2) gs__sb_puts(sb, " (per loop test)");
    else if (row->role == 3) gs__sb_puts(sb, " (when its branch runs)");
    gs__sb_puts(sb, "\n");
}

GS__FN void gs__cm_text_comment(gs__sb *sb, const gs_value *v, void *user) {
    gs__cm_textctx *T = (gs__cm_textctx *)user;
    int *row_of = gs__cm_rows_of(T, v->graph, false);
    if (row_of && row_of[v->id] >= 0) gs__cm_row_comment(sb, &T->rep->rows[row_of[v->id]]);
}

GS__FN void gs__cm_topo_text(gs__sb *sb, const gs_topology *t) {
    char m[64], p[64];
    int i, nw = 0;
    gs__cm_dims_text(m, sizeof m, t->mesh_rank, t->mesh);
    gs__cm_dims_text(p, sizeof p, t->rank, t->dims);
    gs__sb_printf(sb, "// cost model: chip %s, %lld device%s, mesh %s on a physical %s slice (wraparound on ",
                  gs__cm_chip_name(&t->chip), (long long)t->n, t->n == 1 ? "" : "s", m, p);
    for (i = 0; i < t->rank; i++)
        if (t->wrap[i]) gs__sb_printf(sb, "%saxis %d", nw++ ? ", " : "", i);
    gs__sb_printf(sb, "%s)\n", nw ? "" : "no axis");
    gs__sb_printf(sb, "// per device: C %.3g FLOP/s, HBM %.3g B/s, ICI %.3g B/s per link one way, %.3g us per hop\n",
                  t->chip.flops_bf16, t->chip.hbm_bw, t->chip.ici_bw_uni, t->chip.hop_latency * 1e6);
}

GS_API const char *gs_cost_report_text(gs_cost_report *rep) {
    gs__cm_textctx T;
    gs__sb sb;
    const char *body;
    char a[48], b[48], c[48];
    int i;
    if (!rep) return NULL;
    if (rep->text) return rep->text;
    T.rep = rep;
    T.maps = NULL;
    T.oom = false;
    for (i = 0; i < rep->n_rows && !T.oom; i++) {
        const gs_value *v = rep->rows[i].value;
        int *row_of = gs__cm_rows_of(&T, v->graph, true);
        if (row_of && row_of[v->id] < 0) row_of[v->id] = i; /* a body shared by two loops: the first */
    }
    body = T.oom ? NULL : gs__hlo_print_ex(rep->entry, gs__cm_text_comment, &T);
    for (i = 0; i < (int)stbds_arrlen(T.maps); i++) gs__free(rep->ctx, T.maps[i].row_of);
    stbds_arrfree(T.maps);
    if (!body) return NULL;
    gs__sb_init(&sb, rep->ctx);
    gs__cm_topo_text(&sb, rep->topo);
    gs__sb_puts(&sb, body);
    gs__cm_fmt_si(a, sizeof a, rep->totals.flops, "FLOP");
    gs__cm_fmt_si(b, sizeof b, rep->totals.hbm_bytes, "B");
    gs__cm_fmt_si(c, sizeof c, rep->totals.ici_bytes, "B");
    gs__sb_printf(&sb, "\n// totals per device: %s, HBM %s, ICI %s\n", a, b, c);
    gs__cm_fmt_time(a, sizeof a, rep->totals.seconds_serial);
    gs__cm_fmt_time(b, sizeof b, rep->totals.seconds_overlapped);
    gs__sb_printf(&sb, "// time: %s with nothing overlapped, %s with compute and communication overlapped\n", a, b);
    gs__cm_fmt_time(a, sizeof a, rep->totals.seconds_compute);
    gs__cm_fmt_time(b, sizeof b, rep->totals.seconds_hbm);
    gs__cm_fmt_time(c, sizeof c, rep->totals.seconds_ici);
    gs__sb_printf(&sb, "// sums of the terms: math %s, HBM %s, ICI %s\n", a, b, c);
    gs__cm_fmt_si(a, sizeof a, rep->totals.peak_hbm_bytes, "B");
    gs__cm_fmt_si(b, sizeof b, rep->totals.hbm_capacity, "B");
    gs__sb_printf(&sb, "// peak HBM of live buffers: %s of %s (%s)\n", a, b,
                  rep->totals.fits_in_hbm ? "fits" : "DOES NOT FIT");
    for (i = 0; i < rep->n_warnings; i++) gs__sb_printf(&sb, "// warning: %s\n", rep->warnings[i]);
    if (!sb.oom && sb.buf) rep->text = gs__arena_strdup(rep->ctx, sb.buf);
    else gs__err(rep->ctx, GS_ERR_OUT_OF_MEMORY, "gs_cost_report_text: out of memory");
    gs__sb_free(&sb);
    return rep->text;
}

/* ---- JSON ---- */
GS__FN void gs__cm_json_str(gs__sb *sb, const char *s) {
    gs__sb_put(sb, "\"", 1);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') gs__sb_printf(sb, "\\%c", ch);
        else if (ch < 0x20) gs__sb_printf(sb, "\\u%04x", ch);
        else gs__sb_put(sb, s, 1);
    }
    gs__sb_put(sb, "\"", 1);
}

GS__FN void gs__cm_json_num(gs__sb *sb, double x) {
    if (x == floor(x) && fabs(x) < 9007199254740992.0) gs__sb_printf(sb, "%.0f", x);
    else gs__sb_printf(sb, "%.12g", x);
}

GS__FN void gs__cm_json_rows(gs__sb *sb, const gs_cost_report *rep, int parent, int role, int depth);

GS__FN void gs__cm_json_row(gs__sb *sb, const gs_cost_report *rep, int i, int depth) {
    const gs_cost_row *row = &rep->rows[i];
    int a;
    gs__sb_printf(sb, "%*s{\"name\": ", 2 * depth, "");
    gs__cm_json_str(sb, gs__cm_vname(row->value));
    gs__sb_puts(sb, ", \"opcode\": ");
    gs__cm_json_str(sb, gs_op_name(row->value->op));
    gs__sb_puts(sb, ", \"flops\": ");
    gs__cm_json_num(sb, row->flops);
    gs__sb_puts(sb, ", \"hbm_bytes\": ");
    gs__cm_json_num(sb, row->hbm_bytes);
    gs__sb_puts(sb, ", \"hbm_read_bytes\": ");
    gs__cm_json_num(sb, row->hbm_read);
    gs__sb_puts(sb, ", \"hbm_written_bytes\": ");
    gs__cm_json_num(sb, row->hbm_written);
    gs__sb_puts(sb, ", \"ici_bytes\": ");
    gs__cm_json_num(sb, row->ici_bytes);
    gs__sb_puts(sb, ", \"seconds\": ");
    gs__cm_json_num(sb, row->seconds);
    gs__sb_printf(sb, ", \"bound\": \"%s\", \"t_math\": ", gs_bound_name(row->bound));
    gs__cm_json_num(sb, row->t_math);
    gs__sb_puts(sb, ", \"t_hbm\": ");
    gs__cm_json_num(sb, row->t_hbm);
    gs__sb_puts(sb, ", \"t_ici\": ");
    gs__cm_json_num(sb, row->t_ici);
    if (gs__cm_is_collective(row->value->op)) {
        gs__sb_printf(sb, ", \"group_size\": %lld, \"axes\": [", (long long)row->group_size);
        for (a = 0; a < row->group.n_axes; a++)
            gs__sb_printf(sb, "%s{\"physical_axis\": %d, \"size\": %lld, \"ring\": \"%s\"}", a ? ", " : "",
                          row->group.physical_axis[a], (long long)row->group.axes[a].size,
                          gs__cm_ring_name(row->group.axes[a].ring));
        gs__sb_puts(sb, "]");
    }
    if (row->value->op == GS_OP_WHILE) {
        gs__sb_printf(sb, ", \"trip_count\": %lld, \"trip_count_known\": %s,\n%*s \"condition\": [\n", (long long)row->trips,
                      row->trips_known ? "true" : "false", 2 * depth, "");
        gs__cm_json_rows(sb, rep, i, 2, depth + 1);
        gs__sb_printf(sb, "%*s ],\n%*s \"body\": [\n", 2 * depth, "", 2 * depth, "");
        gs__cm_json_rows(sb, rep, i, 1, depth + 1);
        gs__sb_printf(sb, "%*s ]", 2 * depth, "");
    }
    if (row->value->op == GS_OP_CONDITIONAL) {
        gs__sb_printf(sb, ", \"branch_counted\": %lld,\n%*s \"branches\": [\n", (long long)row->trips, 2 * depth, "");
        gs__cm_json_rows(sb, rep, i, 3, depth + 1);
        gs__sb_printf(sb, "%*s ]", 2 * depth, "");
    }
    gs__sb_puts(sb, "}");
}

GS__FN void gs__cm_json_rows(gs__sb *sb, const gs_cost_report *rep, int parent, int role, int depth) {
    int i;
    bool first = true;
    for (i = 0; i < rep->n_rows; i++) {
        if (rep->rows[i].parent != parent || rep->rows[i].role != role) continue;
        if (!first) gs__sb_puts(sb, ",\n");
        first = false;
        gs__cm_json_row(sb, rep, i, depth + 1);
    }
    if (!first) gs__sb_puts(sb, "\n");
}

GS__FN void gs__cm_json_ints(gs__sb *sb, int n, const int64_t *v) {
    int i;
    gs__sb_puts(sb, "[");
    for (i = 0; i < n; i++) gs__sb_printf(sb, "%s%lld", i ? ", " : "", (long long)v[i]);
    gs__sb_puts(sb, "]");
}

GS_API const char *gs_cost_report_json(gs_cost_report *rep) {
    gs__sb sb;
    const gs_topology *t;
    const gs_cost_totals *T;
    int i;
    if (!rep) return NULL;
    if (rep->json) return rep->json;
    t = rep->topo;
    T = &rep->totals;
    gs__sb_init(&sb, rep->ctx);
    gs__sb_puts(&sb, "{\n  \"module\": ");
    gs__cm_json_str(&sb, gs_hlo_module_name(rep->entry));
    gs__sb_puts(&sb, ",\n  \"chip\": ");
    gs__cm_json_str(&sb, gs__cm_chip_name(&t->chip));
    gs__sb_printf(&sb, ",\n  \"devices\": %lld,\n  \"mesh\": ", (long long)t->n);
    gs__cm_json_ints(&sb, t->mesh_rank, t->mesh);
    gs__sb_puts(&sb, ",\n  \"torus\": ");
    gs__cm_json_ints(&sb, t->rank, t->dims);
    gs__sb_puts(&sb, ",\n  \"wrap\": [");
    for (i = 0; i < t->rank; i++) gs__sb_printf(&sb, "%s%s", i ? ", " : "", t->wrap[i] ? "true" : "false");
    gs__sb_puts(&sb, "],\n  \"instructions\": [\n");
    gs__cm_json_rows(&sb, rep, -1, 0, 1);
    gs__sb_puts(&sb, "  ],\n  \"totals\": {\"seconds_serial\": ");
    gs__cm_json_num(&sb, T->seconds_serial);
    gs__sb_puts(&sb, ", \"seconds_overlapped\": ");
    gs__cm_json_num(&sb, T->seconds_overlapped);
    gs__sb_puts(&sb, ", \"peak_hbm_bytes\": ");
    gs__cm_json_num(&sb, T->peak_hbm_bytes);
    gs__sb_puts(&sb, ",\n             \"flops\": ");
    gs__cm_json_num(&sb, T->flops);
    gs__sb_puts(&sb, ", \"hbm_bytes\": ");
    gs__cm_json_num(&sb, T->hbm_bytes);
    gs__sb_puts(&sb, ", \"ici_bytes\": ");
    gs__cm_json_num(&sb, T->ici_bytes);
    gs__sb_puts(&sb, ",\n             \"seconds_compute\": ");
    gs__cm_json_num(&sb, T->seconds_compute);
    gs__sb_puts(&sb, ", \"seconds_hbm\": ");
    gs__cm_json_num(&sb, T->seconds_hbm);
    gs__sb_puts(&sb, ", \"seconds_ici\": ");
    gs__cm_json_num(&sb, T->seconds_ici);
    gs__sb_puts(&sb, ",\n             \"hbm_capacity_bytes\": ");
    gs__cm_json_num(&sb, T->hbm_capacity);
    gs__sb_printf(&sb, ", \"fits_in_hbm\": %s},\n  \"warnings\": [", T->fits_in_hbm ? "true" : "false");
    for (i = 0; i < rep->n_warnings; i++) {
        if (i) gs__sb_puts(&sb, ", ");
        gs__cm_json_str(&sb, rep->warnings[i]);
    }
    gs__sb_puts(&sb, "]\n}\n");
    if (!sb.oom && sb.buf) rep->json = gs__arena_strdup(rep->ctx, sb.buf);
    else gs__err(rep->ctx, GS_ERR_OUT_OF_MEMORY, "gs_cost_report_json: out of memory");
    gs__sb_free(&sb);
    return rep->json;
}
