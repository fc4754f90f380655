/* test_base.c - context, arena, logger hook, result strings */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200112L /* setenv */
#endif
#include "test.h"

static int log_calls;
static gs_result log_code;
static char log_msg[256];
static void logger(gs_log_level level, gs_result code, const char *msg, void *user) {
    (void)user;
    if (level == GS_LOG_ERROR) {
        log_calls++;
        log_code = code;
        snprintf(log_msg, sizeof log_msg, "%s", msg);
    }
}

static void test_logger_sees_first_error(void) {
    gs_ctx_desc d;
    gs_ctx *ctx = NULL;
    gs_graph *g;
    int64_t d4[1] = {4}, d5[1] = {5};
    memset(&d, 0, sizeof d);
    d.logger.fn = logger;
    CHECK_OK(gs_ctx_create(&d, &ctx));
    g = gs_graph_new(ctx, "g");
    log_calls = 0;
    CHECK(gs_add(g, gs_parameter(g, -1, gs_shape_make(GS_F32, 1, d4), "a"), gs_parameter(g, -1, gs_shape_make(GS_F32, 1, d5), "b")) == NULL);
    CHECK_EQ_INT(log_calls, 1);
    CHECK(log_code == GS_ERR_SHAPE);
    CHECK(strstr(log_msg, "add") != NULL);
    /* a second failure while the first is pending is not logged again */
    CHECK(gs_neg(g, NULL) == NULL);
    CHECK_EQ_INT(log_calls, 1);
    gs_ctx_destroy(ctx);
}

static void test_many_and_large_allocations(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int64_t big[1] = {200000};
    float *data = (float *)calloc(200000, sizeof(float));
    gs_value *c, *x;
    int i;
    data[199999] = 7.0f;
    /* a constant larger than an arena chunk */
    c = gs_constant(g, gs_shape_make(GS_F32, 1, big), data);
    CHECK(c != NULL);
    x = c;
    for (i = 0; i < 5000; i++) x = gs_neg(g, x);
    CHECK(x != NULL);
    CHECK_EQ_INT(gs_graph_num_values(g), 5001);
    CHECK(gs_graph_value(g, 5000) == x);
    CHECK(gs_graph_value(g, 5001) == NULL);
    CHECK(gs_value_id(x) == 5000);
    free(data);
    gs_ctx_destroy(ctx);
}

static void test_result_strings(void) {
    gs_result r[] = {GS_OK, GS_ERR_INVALID_ARG, GS_ERR_OUT_OF_MEMORY, GS_ERR_SHAPE, GS_ERR_SHARDING, GS_ERR_UNSUPPORTED,
                     GS_ERR_THREAD, GS_ERR_PARSE, GS_ERR_IO};
    int i, j;
    for (i = 0; i < (int)(sizeof r / sizeof r[0]); i++)
        for (j = 0; j < i; j++) CHECK(strcmp(gs_result_str(r[i]), gs_result_str(r[j])) != 0);
    CHECK(strcmp(gs_result_str((gs_result)-99), "unknown result") == 0);
    CHECK(strcmp(gs_reduce_kind_name(GS_REDUCE_MAX), "max") == 0);
}

static int warn_calls;
static char warn_msg[256];
static void warn_logger(gs_log_level level, gs_result code, const char *msg, void *user) {
    (void)code;
    (void)user;
    if (level == GS_LOG_WARN || level == GS_LOG_ERROR) {
        warn_calls++;
        snprintf(warn_msg, sizeof warn_msg, "%s", msg);
    }
}

/* a GSHARD_ISA that names no instruction set makes gs_ctx_create fail with the reason logged, and gs_isa_path
   says why; a path every machine runs (scalar) is silent */
static void test_isa_request_warning(void) {
#if defined(_WIN32)
    CHECK(1); /* no setenv */
#else
    gs_ctx_desc d;
    gs_ctx *ctx = NULL;
    const char *old = getenv("GSHARD_ISA"), *path = NULL;
    char saved[64], why[160];
    snprintf(saved, sizeof saved, "%s", old ? old : "");
    memset(&d, 0, sizeof d);
    d.logger.fn = warn_logger;

    /* no such instruction set: an error, from gs_ctx_create (logged) and from gs_isa_path */
    CHECK(setenv("GSHARD_ISA", "quantum", 1) == 0);
    warn_calls = 0;
    CHECK_EQ_INT(gs_ctx_create(&d, &ctx), GS_ERR_INVALID_ARG);
    CHECK(ctx == NULL);
    CHECK_EQ_INT(warn_calls, 1);
    CHECK_MSG(strstr(warn_msg, "GSHARD_ISA=quantum: unknown instruction set") != NULL, "error: %s", warn_msg);
    CHECK_EQ_INT(gs_isa_path(&path, why, sizeof why), GS_ERR_INVALID_ARG);
    CHECK_MSG(strstr(why, "GSHARD_ISA=quantum: unknown instruction set (expected scalar, sse2, avx2 or avx512)") != NULL,
              "gs_isa_path: %s", why);
    CHECK(path != NULL && strcmp(path, "unknown") != 0);

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GSHARD_NO_ISA_DISPATCH)
    /* a path this build does not run on x86-64 (4-wide vectors of other architectures): a warning, not an error */
    CHECK(setenv("GSHARD_ISA", "vec4", 1) == 0);
    warn_calls = 0;
    CHECK_OK(gs_ctx_create(&d, &ctx));
    gs_ctx_destroy(ctx);
    CHECK_EQ_INT(warn_calls, 1);
    CHECK_MSG(strstr(warn_msg, "GSHARD_ISA=vec4: this CPU cannot run it; the kernels use ") != NULL, "warning: %s",
              warn_msg);
    CHECK_OK(gs_isa_path(NULL, why, sizeof why));
    CHECK_MSG(strcmp(why, warn_msg) == 0, "gs_isa_path: %s", why);
#endif

    CHECK(setenv("GSHARD_ISA", "scalar", 1) == 0);
    warn_calls = 0;
    CHECK_OK(gs_ctx_create(&d, &ctx));
    gs_ctx_destroy(ctx);
    CHECK_EQ_INT(warn_calls, 0);
    CHECK_OK(gs_isa_path(NULL, why, sizeof why));
    CHECK_MSG(why[0] == 0, "gs_isa_path: %s", why);

    if (old) CHECK(setenv("GSHARD_ISA", saved, 1) == 0);
    else CHECK(unsetenv("GSHARD_ISA") == 0);
#endif
}

void suite_base(void) {
    RUN(test_logger_sees_first_error);
    RUN(test_many_and_large_allocations);
    RUN(test_result_strings);
    RUN(test_isa_request_warning);
}
