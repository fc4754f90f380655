/* test_errors.c - the bad-input catalogue: every case must return the documented error code with a message
   naming the problem, never crash, never leak (the suite runs under ASan and valgrind). */
#include "test.h"

typedef struct bad_case {
    const char *name;
    gs_result code;
    const char *msg;                    /* substring the message must contain */
    gs_value *(*build)(gs_graph *g);    /* returns what the failing builder returned (must be NULL) */
} bad_case;

static gs_value *P(gs_graph *g, const char *name, gs_dtype t, int r, int64_t a, int64_t b, int64_t c) {
    int64_t d[3];
    d[0] = a; d[1] = b; d[2] = c;
    return gs_parameter(g, -1, gs_shape_make(t, r, d), name);
}

static gs_value *b_add_mismatch(gs_graph *g) { return gs_add(g, P(g, "a", GS_F32, 1, 4, 0, 0), P(g, "b", GS_F32, 1, 5, 0, 0)); }
static gs_value *b_add_dtype(gs_graph *g) { return gs_add(g, P(g, "a", GS_F32, 1, 4, 0, 0), P(g, "b", GS_S32, 1, 4, 0, 0)); }
static gs_value *b_exp_int(gs_graph *g) { return gs_exp(g, P(g, "a", GS_S32, 1, 4, 0, 0)); }
static gs_value *b_and_float(gs_graph *g) { return gs_binary(g, GS_OP_AND, P(g, "a", GS_F32, 0, 0, 0, 0), P(g, "b", GS_F32, 0, 0, 0, 0)); }
static gs_value *b_binary_bad_op(gs_graph *g) { return gs_binary(g, GS_OP_TANH, P(g, "a", GS_F32, 0, 0, 0, 0), P(g, "b", GS_F32, 0, 0, 0, 0)); }
static gs_value *b_neg_dim(gs_graph *g) { return P(g, "a", GS_F32, 2, 3, -1, 0); }
static gs_value *b_token_dims(gs_graph *g) { return P(g, "t", GS_TOKEN, 1, 2, 0, 0); }
static gs_value *b_bad_rank(gs_graph *g) { int64_t d[1] = {1}; return gs_parameter(g, -1, gs_shape_make(GS_F32, GS_MAX_RANK + 1, d), "a"); }
static gs_value *b_bad_dtype(gs_graph *g) { return P(g, "a", (gs_dtype)42, 1, 3, 0, 0); }
static gs_value *b_dup_param(gs_graph *g) {
    gs_parameter(g, 0, gs_shape_scalar(GS_F32), "a");
    return gs_parameter(g, 0, gs_shape_scalar(GS_F32), "b");
}
static gs_value *b_dup_name(gs_graph *g) { P(g, "a", GS_F32, 0, 0, 0, 0); return P(g, "a", GS_F32, 0, 0, 0, 0); }
static gs_value *b_bad_name(gs_graph *g) { return P(g, "9lives", GS_F32, 0, 0, 0, 0); }
static gs_value *b_reshape_count(gs_graph *g) { int64_t d[2] = {3, 3}; return gs_reshape(g, P(g, "a", GS_F32, 1, 8, 0, 0), 2, d); }
static gs_value *b_transpose_perm(gs_graph *g) { int64_t p[2] = {0, 0}; return gs_transpose(g, P(g, "a", GS_F32, 2, 2, 3, 0), p); }
static gs_value *b_transpose_range(gs_graph *g) { int64_t p[2] = {0, 2}; return gs_transpose(g, P(g, "a", GS_F32, 2, 2, 3, 0), p); }
static gs_value *b_broadcast_size(gs_graph *g) {
    int64_t out[2] = {4, 5}, dims[1] = {0};
    return gs_broadcast_in_dim(g, P(g, "a", GS_F32, 1, 5, 0, 0), 2, out, dims);
}
static gs_value *b_broadcast_order(gs_graph *g) {
    int64_t out[3] = {2, 3, 4}, dims[2] = {2, 0};
    return gs_broadcast_in_dim(g, P(g, "a", GS_F32, 2, 4, 2, 0), 3, out, dims);
}
static gs_value *b_slice_oob(gs_graph *g) { int64_t s[1] = {2}, l[1] = {9}; return gs_slice(g, P(g, "a", GS_F32, 1, 8, 0, 0), s, l, NULL); }
static gs_value *b_slice_stride0(gs_graph *g) { int64_t s[1] = {0}, l[1] = {4}, st[1] = {0}; return gs_slice(g, P(g, "a", GS_F32, 1, 8, 0, 0), s, l, st); }
static gs_value *b_slice_backwards(gs_graph *g) { int64_t s[1] = {5}, l[1] = {4}; return gs_slice(g, P(g, "a", GS_F32, 1, 8, 0, 0), s, l, NULL); }
static gs_value *b_dslice_mixed_index(gs_graph *g) {
    gs_value *st[2];
    int64_t sz[2] = {1, 1};
    st[0] = gs_scalar(g, GS_S32, 0);
    st[1] = gs_scalar(g, GS_U32, 0);
    return gs_dynamic_slice(g, P(g, "a", GS_F32, 2, 4, 4, 0), st, sz);
}
static gs_value *b_dslice_size(gs_graph *g) {
    gs_value *st[1];
    int64_t sz[1] = {9};
    st[0] = gs_scalar(g, GS_S32, 0);
    return gs_dynamic_slice(g, P(g, "a", GS_F32, 1, 8, 0, 0), st, sz);
}
static gs_value *b_dslice_float_index(gs_graph *g) {
    gs_value *st[1];
    int64_t sz[1] = {2};
    st[0] = gs_scalar(g, GS_F32, 0);
    return gs_dynamic_slice(g, P(g, "a", GS_F32, 1, 8, 0, 0), st, sz);
}
static gs_value *b_dus_big_update(gs_graph *g) {
    gs_value *st[1];
    st[0] = gs_scalar(g, GS_S32, 0);
    return gs_dynamic_update_slice(g, P(g, "a", GS_F32, 1, 4, 0, 0), P(g, "u", GS_F32, 1, 5, 0, 0), st);
}
static gs_value *b_pad_negative_result(gs_graph *g) {
    int64_t lo[1] = {-3}, hi[1] = {-2};
    return gs_pad(g, P(g, "a", GS_F32, 1, 4, 0, 0), gs_scalar(g, GS_F32, 0), lo, hi, NULL);
}
static gs_value *b_pad_neg_interior(gs_graph *g) {
    int64_t lo[1] = {0}, hi[1] = {0}, in[1] = {-1};
    return gs_pad(g, P(g, "a", GS_F32, 1, 4, 0, 0), gs_scalar(g, GS_F32, 0), lo, hi, in);
}
static gs_value *b_pad_value_dtype(gs_graph *g) {
    int64_t lo[1] = {0}, hi[1] = {0};
    return gs_pad(g, P(g, "a", GS_F32, 1, 4, 0, 0), gs_scalar(g, GS_S32, 0), lo, hi, NULL);
}
static gs_value *b_concat_mismatch(gs_graph *g) {
    gs_value *xs[2];
    xs[0] = P(g, "a", GS_F32, 2, 2, 3, 0);
    xs[1] = P(g, "b", GS_F32, 2, 2, 4, 0);
    return gs_concatenate(g, 2, xs, 0);
}
static gs_value *b_concat_dim(gs_graph *g) {
    gs_value *xs[1];
    xs[0] = P(g, "a", GS_F32, 2, 2, 3, 0);
    return gs_concatenate(g, 1, xs, 2);
}
static gs_value *b_reverse_dup(gs_graph *g) { int64_t d[2] = {0, 0}; return gs_reverse(g, P(g, "a", GS_F32, 1, 4, 0, 0), 2, d); }
static gs_value *b_select_pred(gs_graph *g) {
    gs_value *a = P(g, "a", GS_F32, 1, 4, 0, 0);
    return gs_select(g, a, a, a);
}
static gs_value *b_select_shape(gs_graph *g) {
    gs_value *a = P(g, "a", GS_F32, 1, 4, 0, 0);
    return gs_select(g, P(g, "p", GS_PRED, 1, 3, 0, 0), a, a);
}
static gs_value *b_reduce_dim(gs_graph *g) { int64_t d[1] = {2}; return gs_reduce(g, P(g, "a", GS_F32, 2, 4, 4, 0), gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, 1, d); }
static gs_value *b_reduce_init(gs_graph *g) { int64_t d[1] = {0}; return gs_reduce(g, P(g, "a", GS_F32, 2, 4, 4, 0), P(g, "i", GS_F32, 1, 1, 0, 0), GS_REDUCE_SUM, 1, d); }
static gs_value *b_reduce_and_float(gs_graph *g) { int64_t d[1] = {0}; return gs_reduce(g, P(g, "a", GS_F32, 1, 4, 0, 0), gs_scalar(g, GS_F32, 0), GS_REDUCE_AND, 1, d); }
static gs_value *b_reduce_custom_no_fn(gs_graph *g) { int64_t d[1] = {0}; return gs_reduce(g, P(g, "a", GS_F32, 1, 4, 0, 0), gs_scalar(g, GS_F32, 0), GS_REDUCE_CUSTOM, 1, d); }
/* a reducer computation on an op that takes none: the error is set and the value is not changed (NULL returned here) */
static gs_value *b_set_reducer_on_add(gs_graph *g) {
    gs_graph *r = gs_graph_new(gs_graph_ctx(g), "r");
    gs_value *x = P(g, "a", GS_F32, 0, 0, 0, 0);
    gs_value *a = gs_add(g, x, x);
    gs_graph_set_root(r, gs_add(r, gs_parameter(r, 0, gs_shape_scalar(GS_F32), "p"), gs_parameter(r, 1, gs_shape_scalar(GS_F32), "q")));
    return gs_value_set_reducer(a, r) == GS_OK ? a : NULL;
}
static gs_value *b_reduce_replace(gs_graph *g) { int64_t d[1] = {0}; return gs_reduce(g, P(g, "a", GS_F32, 1, 4, 0, 0), gs_scalar(g, GS_F32, 0), GS_REDUCE_REPLACE, 1, d); }
static gs_value *b_dot_contract(gs_graph *g) {
    gs_dot_dims d;
    memset(&d, 0, sizeof d);
    d.n_contract = 1; d.lhs_contract[0] = 1; d.rhs_contract[0] = 0;
    return gs_dot(g, P(g, "a", GS_F32, 2, 4, 128, 0), P(g, "b", GS_F32, 2, 64, 4, 0), &d);
}
static gs_value *b_dot_dup(gs_graph *g) {
    gs_dot_dims d;
    memset(&d, 0, sizeof d);
    d.n_batch = 1; d.lhs_batch[0] = 0; d.rhs_batch[0] = 0;
    d.n_contract = 1; d.lhs_contract[0] = 0; d.rhs_contract[0] = 1;
    return gs_dot(g, P(g, "a", GS_F32, 2, 4, 4, 0), P(g, "b", GS_F32, 2, 4, 4, 0), &d);
}
static gs_value *b_dot_pred(gs_graph *g) {
    gs_dot_dims d;
    memset(&d, 0, sizeof d);
    return gs_dot(g, P(g, "a", GS_PRED, 1, 4, 0, 0), P(g, "b", GS_PRED, 1, 4, 0, 0), &d);
}
static gs_value *b_einsum_noarrow(gs_graph *g) { return gs_einsum(g, "ab,bc", P(g, "a", GS_F32, 2, 2, 3, 0), P(g, "b", GS_F32, 2, 3, 4, 0)); }
static gs_value *b_einsum_rank(gs_graph *g) { return gs_einsum(g, "abc,bc->ac", P(g, "a", GS_F32, 2, 2, 3, 0), P(g, "b", GS_F32, 2, 3, 4, 0)); }
static gs_value *b_einsum_char(gs_graph *g) { return gs_einsum(g, "a1,1c->ac", P(g, "a", GS_F32, 2, 2, 3, 0), P(g, "b", GS_F32, 2, 3, 4, 0)); }
static gs_value *b_einsum_repeat(gs_graph *g) { return gs_einsum(g, "aa,ac->ac", P(g, "a", GS_F32, 2, 3, 3, 0), P(g, "b", GS_F32, 2, 3, 4, 0)); }
static gs_value *b_einsum_unknown_out(gs_graph *g) { return gs_einsum(g, "ab,bc->az", P(g, "a", GS_F32, 2, 2, 3, 0), P(g, "b", GS_F32, 2, 3, 4, 0)); }
static gs_value *b_einsum_dangling(gs_graph *g) { return gs_einsum(g, "ab,bc->c", P(g, "a", GS_F32, 2, 2, 3, 0), P(g, "b", GS_F32, 2, 3, 4, 0)); }
static gs_value *b_einsum_size(gs_graph *g) { return gs_einsum(g, "ab,bc->ac", P(g, "a", GS_F32, 2, 2, 3, 0), P(g, "b", GS_F32, 2, 5, 4, 0)); }
static gs_value *b_einsum_two_commas(gs_graph *g) { return gs_einsum(g, "a,b,c->abc", P(g, "a", GS_F32, 1, 2, 0, 0), P(g, "b", GS_F32, 1, 3, 0, 0)); }
static gs_value *b_conv_groups(gs_graph *g) {
    gs_conv_config c;
    memset(&c, 0, sizeof c);
    gs_conv_dims_from_labels("b0f_0io->b0f", &c.dims);
    c.window[0] = gs_window_default();
    c.window[0].size = 3;
    c.feature_group_count = 2;
    return gs_convolution(g, P(g, "x", GS_F32, 3, 1, 8, 5), P(g, "k", GS_F32, 3, 3, 5, 4), &c);
}
static gs_value *b_conv_window(gs_graph *g) {
    gs_conv_config c;
    memset(&c, 0, sizeof c);
    gs_conv_dims_from_labels("b0f_0io->b0f", &c.dims);
    c.window[0] = gs_window_default();
    c.window[0].size = 2; /* kernel says 3 */
    return gs_convolution(g, P(g, "x", GS_F32, 3, 1, 8, 4), P(g, "k", GS_F32, 3, 3, 4, 4), &c);
}
static gs_value *b_conv_stride0(gs_graph *g) {
    gs_conv_config c;
    memset(&c, 0, sizeof c);
    gs_conv_dims_from_labels("b0f_0io->b0f", &c.dims);
    c.window[0] = gs_window_default();
    c.window[0].size = 3;
    c.window[0].stride = 0;
    return gs_convolution(g, P(g, "x", GS_F32, 3, 1, 8, 4), P(g, "k", GS_F32, 3, 3, 4, 4), &c);
}
static gs_value *b_reduce_window_rank(gs_graph *g) {
    gs_window_dim w[1];
    w[0] = gs_window_default();
    w[0].window_dilation = 0;
    return gs_reduce_window(g, P(g, "x", GS_F32, 1, 8, 0, 0), gs_scalar(g, GS_F32, 0), GS_REDUCE_MAX, w);
}
static gs_value *b_gather_index_map(gs_graph *g) {
    gs_gather_dims d;
    memset(&d, 0, sizeof d);
    d.n_offset_dims = 1; d.offset_dims[0] = 1;
    d.n_collapsed_slice_dims = 1; d.collapsed_slice_dims[0] = 0;
    d.n_start_index_map = 2; d.start_index_map[0] = 0; d.start_index_map[1] = 1;
    d.index_vector_dim = 1;
    d.slice_sizes[0] = 1; d.slice_sizes[1] = 4;
    return gs_gather(g, P(g, "t", GS_F32, 2, 10, 4, 0), P(g, "i", GS_S32, 2, 3, 1, 0), &d);
}
static gs_value *b_gather_slice_size(gs_graph *g) {
    gs_gather_dims d;
    memset(&d, 0, sizeof d);
    d.n_offset_dims = 1; d.offset_dims[0] = 1;
    d.n_collapsed_slice_dims = 1; d.collapsed_slice_dims[0] = 0;
    d.n_start_index_map = 1; d.start_index_map[0] = 0;
    d.index_vector_dim = 1;
    d.slice_sizes[0] = 1; d.slice_sizes[1] = 5;
    return gs_gather(g, P(g, "t", GS_F32, 2, 10, 4, 0), P(g, "i", GS_S32, 2, 3, 1, 0), &d);
}
static gs_value *b_scatter_rank(gs_graph *g) {
    gs_scatter_dims d;
    memset(&d, 0, sizeof d);
    d.n_update_window_dims = 1; d.update_window_dims[0] = 1;
    d.n_inserted_window_dims = 1; d.inserted_window_dims[0] = 0;
    d.n_scatter_dims_to_operand_dims = 1; d.scatter_dims_to_operand_dims[0] = 0;
    d.index_vector_dim = 1;
    return gs_scatter(g, P(g, "t", GS_F32, 2, 10, 4, 0), P(g, "i", GS_S32, 2, 3, 1, 0), P(g, "u", GS_F32, 3, 3, 4, 1), &d, GS_REDUCE_SUM);
}
static gs_value *b_sort_dims(gs_graph *g) {
    gs_value *xs[2];
    xs[0] = P(g, "a", GS_F32, 1, 4, 0, 0);
    xs[1] = P(g, "b", GS_S32, 1, 5, 0, 0);
    return gs_sort(g, 2, xs, 0, false);
}
static gs_value *b_topk_k(gs_graph *g) { return gs_topk(g, P(g, "a", GS_F32, 1, 4, 0, 0), 5, true); }
static gs_value *b_cumulative_kind(gs_graph *g) { return gs_cumulative(g, P(g, "a", GS_F32, 1, 4, 0, 0), GS_REDUCE_AND, 0, false); }
static gs_value *b_rng_pred(gs_graph *g) {
    return gs_rng_uniform(g, gs_scalar(g, GS_PRED, 0), gs_scalar(g, GS_PRED, 1), gs_shape_scalar(GS_PRED), 1);
}
/* the shard form of rng: full f32[8,6] unless the case changes it */
static gs_value *rng_shard(gs_graph *g, gs_dtype shard_t, int shard_r, int64_t s0, int64_t s1, gs_dtype full_t, int full_r,
                           gs_value *o0, gs_value *o1) {
    int64_t sd[2], fd[2] = {8, 6};
    gs_value *offs[2];
    sd[0] = s0; sd[1] = s1;
    offs[0] = o0; offs[1] = o1;
    return gs_rng_uniform_shard(g, gs_scalar(g, shard_t, 0), gs_scalar(g, shard_t, 1), gs_shape_make(shard_t, shard_r, sd),
                                gs_shape_make(full_t, full_r, fd), offs, 1);
}
static gs_value *b_rng_shard_u32_offset(gs_graph *g) {
    return rng_shard(g, GS_F32, 2, 4, 3, GS_F32, 2, gs_scalar(g, GS_S32, 0), gs_scalar(g, GS_U32, 0));
}
static gs_value *b_rng_shard_float_offset(gs_graph *g) {
    return rng_shard(g, GS_F32, 2, 4, 3, GS_F32, 2, gs_scalar(g, GS_F32, 0), gs_scalar(g, GS_S32, 0));
}
static gs_value *b_rng_shard_vector_offset(gs_graph *g) {
    return rng_shard(g, GS_F32, 2, 4, 3, GS_F32, 2, gs_scalar(g, GS_S32, 0), P(g, "o", GS_S32, 1, 1, 0, 0));
}
static gs_value *b_rng_shard_rank(gs_graph *g) {
    return rng_shard(g, GS_F32, 1, 4, 0, GS_F32, 2, gs_scalar(g, GS_S32, 0), gs_scalar(g, GS_S32, 0));
}
static gs_value *b_rng_shard_dtype(gs_graph *g) {
    return rng_shard(g, GS_F32, 2, 4, 3, GS_BF16, 2, gs_scalar(g, GS_S32, 0), gs_scalar(g, GS_S32, 0));
}
static gs_value *b_rng_shard_larger(gs_graph *g) {
    return rng_shard(g, GS_F32, 2, 4, 7, GS_F32, 2, gs_scalar(g, GS_S32, 0), gs_scalar(g, GS_S32, 0));
}
static gs_value *b_rng_shard_pred(gs_graph *g) {
    return rng_shard(g, GS_PRED, 2, 4, 3, GS_PRED, 2, gs_scalar(g, GS_S32, 0), gs_scalar(g, GS_S32, 0));
}
static gs_value *b_rng_shard_no_offsets(gs_graph *g) {
    int64_t d[1] = {4};
    return gs_rng_uniform_shard(g, gs_scalar(g, GS_F32, 0), gs_scalar(g, GS_F32, 1), gs_shape_make(GS_F32, 1, d),
                                gs_shape_make(GS_F32, 1, d), NULL, 1);
}
static gs_value *b_rng_shard_full_rank(gs_graph *g) {
    int64_t d[1] = {4};
    gs_value *o[1];
    o[0] = gs_scalar(g, GS_S32, 0);
    return gs_rng_uniform_shard(g, gs_scalar(g, GS_F32, 0), gs_scalar(g, GS_F32, 1), gs_shape_make(GS_F32, 1, d),
                                gs_shape_make(GS_F32, GS_MAX_RANK + 1, d), o, 1);
}
static gs_value *b_rng_shard_full_negative(gs_graph *g) {
    int64_t d[1] = {4}, f[1] = {-4};
    gs_value *o[1];
    o[0] = gs_scalar(g, GS_S32, 0);
    return gs_rng_uniform_shard(g, gs_scalar(g, GS_F32, 0), gs_scalar(g, GS_F32, 1), gs_shape_make(GS_F32, 1, d),
                                gs_shape_make(GS_F32, 1, f), o, 1);
}
static gs_value *b_rng_shard_lo_dtype(gs_graph *g) {
    int64_t d[1] = {4}, f[1] = {8};
    gs_value *o[1];
    o[0] = gs_scalar(g, GS_S32, 0);
    return gs_rng_uniform_shard(g, gs_scalar(g, GS_S32, 0), gs_scalar(g, GS_F32, 1), gs_shape_make(GS_F32, 1, d),
                                gs_shape_make(GS_F32, 1, f), o, 1);
}
static gs_value *b_groups_dup(gs_graph *g) {
    int64_t ids[4] = {0, 1, 1, 2};
    gs_collective_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.groups.n_groups = 2; cd.groups.group_size = 2; cd.groups.ids = ids;
    return gs_all_reduce(g, P(g, "a", GS_F32, 1, 4, 0, 0), GS_REDUCE_SUM, &cd);
}
static gs_value *b_groups_negative(gs_graph *g) {
    int64_t ids[2] = {0, -1};
    gs_collective_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.groups.n_groups = 1; cd.groups.group_size = 2; cd.groups.ids = ids;
    return gs_all_gather(g, P(g, "a", GS_F32, 1, 4, 0, 0), 0, &cd);
}
static gs_value *b_groups_iota_mismatch(gs_graph *g) {
    gs_collective_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.groups.n_groups = 2; cd.groups.group_size = 4; cd.groups.iota_rank = 1; cd.groups.iota_dims[0] = 6;
    return gs_all_reduce(g, P(g, "a", GS_F32, 1, 4, 0, 0), GS_REDUCE_SUM, &cd);
}
static gs_value *b_reduce_scatter_divide(gs_graph *g) {
    int64_t ids[3] = {0, 1, 2};
    gs_collective_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.groups.n_groups = 1; cd.groups.group_size = 3; cd.groups.ids = ids;
    return gs_reduce_scatter(g, P(g, "a", GS_F32, 1, 4, 0, 0), GS_REDUCE_SUM, 0, &cd);
}
static gs_value *b_all_to_all_dim(gs_graph *g) {
    gs_collective_desc cd;
    memset(&cd, 0, sizeof cd);
    return gs_all_to_all(g, P(g, "a", GS_F32, 1, 4, 0, 0), 0, 1, &cd);
}
static gs_value *b_permute_dup_target(gs_graph *g) {
    int64_t pairs[4] = {0, 1, 2, 1};
    return gs_collective_permute(g, P(g, "a", GS_F32, 1, 4, 0, 0), 2, pairs, 0);
}
static gs_value *b_gte_range(gs_graph *g) {
    gs_value *xs[1];
    xs[0] = P(g, "a", GS_F32, 1, 4, 0, 0);
    return gs_get_tuple_element(g, gs_tuple(g, 1, xs), 1);
}
static gs_value *b_gte_array(gs_graph *g) { return gs_get_tuple_element(g, P(g, "a", GS_F32, 1, 4, 0, 0), 0); }
static gs_value *b_tuple_operand(gs_graph *g) {
    gs_value *xs[1];
    xs[0] = P(g, "a", GS_F32, 1, 4, 0, 0);
    return gs_neg(g, gs_tuple(g, 1, xs));
}
static gs_value *b_while_cond_type(gs_graph *g) {
    gs_ctx *ctx = gs_graph_ctx(g);
    gs_graph *cond = gs_graph_new(ctx, "cond"), *body = gs_graph_new(ctx, "body");
    gs_value *p = gs_parameter(cond, 0, gs_shape_scalar(GS_S32), "s");
    gs_graph_set_root(cond, p); /* s32, not pred */
    gs_graph_set_root(body, gs_parameter(body, 0, gs_shape_scalar(GS_S32), "s"));
    return gs_while(g, cond, body, gs_scalar(g, GS_S32, 0));
}
static gs_value *b_while_body_shape(gs_graph *g) {
    gs_ctx *ctx = gs_graph_ctx(g);
    gs_graph *cond = gs_graph_new(ctx, "cond"), *body = gs_graph_new(ctx, "body");
    gs_value *p = gs_parameter(cond, 0, gs_shape_scalar(GS_S32), "s");
    gs_graph_set_root(cond, gs_compare(cond, p, p, GS_CMP_LT));
    gs_parameter(body, 0, gs_shape_scalar(GS_S32), "s");
    gs_graph_set_root(body, gs_scalar(body, GS_F32, 1));
    return gs_while(g, cond, body, gs_scalar(g, GS_S32, 0));
}
static gs_value *b_cross_graph(gs_graph *g) {
    gs_graph *other = gs_graph_new(gs_graph_ctx(g), "other");
    return gs_add(g, P(g, "a", GS_F32, 0, 0, 0, 0), gs_scalar(other, GS_F32, 1));
}
static gs_value *b_annotate_unbalanced(gs_graph *g) { return gs_annotate(g, P(g, "a", GS_F32, 1, 4, 0, 0), "{devices=[2]0,1"); }
static gs_value *b_to_manual_larger(gs_graph *g) {
    int64_t d[1] = {8};
    return gs_to_manual(g, P(g, "a", GS_F32, 1, 4, 0, 0), gs_shape_make(GS_F32, 1, d), "{manual}");
}
static gs_value *b_iota_dim(gs_graph *g) { int64_t d[1] = {4}; return gs_iota(g, gs_shape_make(GS_S32, 1, d), 1); }
static gs_value *b_clamp_bound(gs_graph *g) {
    return gs_clamp(g, P(g, "lo", GS_F32, 1, 3, 0, 0), P(g, "x", GS_F32, 1, 4, 0, 0), gs_scalar(g, GS_F32, 1));
}
static gs_value *b_constant_null(gs_graph *g) { int64_t d[1] = {4}; return gs_constant(g, gs_shape_make(GS_F32, 1, d), NULL); }
static gs_value *b_argmax_dim(gs_graph *g) { return gs_argmax(g, P(g, "a", GS_F32, 1, 4, 0, 0), 1); }
static gs_value *b_compare_dir(gs_graph *g) { gs_value *a = P(g, "a", GS_F32, 0, 0, 0, 0); return gs_compare(g, a, a, (gs_cmp)77); }

static const bad_case builder_cases[] = {
    {"token with dims", GS_ERR_SHAPE, "t: a token has no dims (token[]), not rank 1", b_token_dims},
    {"add of different shapes", GS_ERR_SHAPE, "operand shapes differ", b_add_mismatch},
    {"add of different dtypes", GS_ERR_SHAPE, "f32[4] vs s32[4]", b_add_dtype},
    {"exp of an integer", GS_ERR_SHAPE, "floating-point", b_exp_int},
    {"and of floats", GS_ERR_SHAPE, "pred or integer", b_and_float},
    {"gs_binary with a unary op", GS_ERR_INVALID_ARG, "not a binary", b_binary_bad_op},
    {"negative dim", GS_ERR_SHAPE, "negative", b_neg_dim},
    {"rank above GS_MAX_RANK", GS_ERR_INVALID_ARG, "rank", b_bad_rank},
    {"unknown dtype", GS_ERR_INVALID_ARG, "invalid dtype", b_bad_dtype},
    {"parameter number used twice", GS_ERR_INVALID_ARG, "already has parameter 0", b_dup_param},
    {"duplicate value name", GS_ERR_INVALID_ARG, "already has a value named 'a'", b_dup_name},
    {"invalid value name", GS_ERR_INVALID_ARG, "not a valid name", b_bad_name},
    {"reshape changes element count", GS_ERR_SHAPE, "element counts differ", b_reshape_count},
    {"transpose repeats a dim", GS_ERR_INVALID_ARG, "repeats dim 0", b_transpose_perm},
    {"transpose dim out of range", GS_ERR_INVALID_ARG, "out of range", b_transpose_range},
    {"broadcast size mismatch", GS_ERR_SHAPE, "operand dim 0 (5) != output dim 0 (4)", b_broadcast_size},
    {"broadcast dims not increasing", GS_ERR_INVALID_ARG, "increasing", b_broadcast_order},
    {"slice past the end", GS_ERR_INVALID_ARG, "not within [0, 8]", b_slice_oob},
    {"slice stride 0", GS_ERR_INVALID_ARG, "stride 0", b_slice_stride0},
    {"slice start after limit", GS_ERR_INVALID_ARG, "[5:4]", b_slice_backwards},
    {"dynamic-slice mixes s32 and u32 indices", GS_ERR_SHAPE, "mix s32 and u32", b_dslice_mixed_index},
    {"dynamic-slice size too big", GS_ERR_INVALID_ARG, "slice size 9", b_dslice_size},
    {"dynamic-slice float index", GS_ERR_SHAPE, "s32 or u32", b_dslice_float_index},
    {"dynamic-update-slice update too big", GS_ERR_SHAPE, "exceeds operand dim", b_dus_big_update},
    {"pad makes a dim negative", GS_ERR_SHAPE, "negative", b_pad_negative_result},
    {"pad with negative interior", GS_ERR_INVALID_ARG, "interior padding -1", b_pad_neg_interior},
    {"pad value of another dtype", GS_ERR_SHAPE, "f32 scalar", b_pad_value_dtype},
    {"concatenate mismatched dims", GS_ERR_SHAPE, "dim 1 (4)", b_concat_mismatch},
    {"concatenate dim out of range", GS_ERR_INVALID_ARG, "dimension 2", b_concat_dim},
    {"reverse repeats a dim", GS_ERR_INVALID_ARG, "repeats", b_reverse_dup},
    {"select with a float predicate", GS_ERR_SHAPE, "must be pred", b_select_pred},
    {"select predicate shape", GS_ERR_SHAPE, "must be a scalar or match", b_select_shape},
    {"reduce dim out of range", GS_ERR_INVALID_ARG, "out of range", b_reduce_dim},
    {"reduce init not a scalar", GS_ERR_SHAPE, "scalar", b_reduce_init},
    {"reduce and over floats", GS_ERR_INVALID_ARG, "reduction and is not valid for f32", b_reduce_and_float},
    {"reduce with replace", GS_ERR_INVALID_ARG, "replace", b_reduce_replace},
    {"dot contracting sizes differ", GS_ERR_SHAPE, "lhs contracting dim 1 (128) != rhs contracting dim 0 (64)", b_dot_contract},
    {"dot uses a dim twice", GS_ERR_INVALID_ARG, "repeats dim 0", b_dot_dup},
    {"dot of pred", GS_ERR_SHAPE, "numeric", b_dot_pred},
    {"einsum without ->", GS_ERR_INVALID_ARG, "form", b_einsum_noarrow},
    {"einsum rank mismatch", GS_ERR_SHAPE, "rank 2 but the spec names 3", b_einsum_rank},
    {"einsum non-letter", GS_ERR_INVALID_ARG, "not a letter", b_einsum_char},
    {"einsum repeated letter", GS_ERR_INVALID_ARG, "repeats in the lhs", b_einsum_repeat},
    {"einsum unknown output letter", GS_ERR_INVALID_ARG, "'z' is in neither input", b_einsum_unknown_out},
    {"einsum letter only in one input", GS_ERR_INVALID_ARG, "appears only in the lhs", b_einsum_dangling},
    {"einsum contracted sizes differ", GS_ERR_SHAPE, "contracting", b_einsum_size},
    {"einsum three operands", GS_ERR_INVALID_ARG, "form", b_einsum_two_commas},
    {"convolution feature groups", GS_ERR_SHAPE, "feature_group_count", b_conv_groups},
    {"convolution window size vs kernel", GS_ERR_SHAPE, "window size 2", b_conv_window},
    {"convolution stride 0", GS_ERR_INVALID_ARG, "stride", b_conv_stride0},
    {"reduce-window dilation 0", GS_ERR_INVALID_ARG, "dilation", b_reduce_window_rank},
    {"gather start_index_map length", GS_ERR_INVALID_ARG, "start_index_map has 2 entries", b_gather_index_map},
    {"gather slice larger than operand", GS_ERR_SHAPE, "slice_sizes[1] = 5", b_gather_slice_size},
    {"scatter updates rank", GS_ERR_SHAPE, "updates rank", b_scatter_rank},
    {"sort operands of different dims", GS_ERR_SHAPE, "other dims", b_sort_dims},
    {"top-k with k too large", GS_ERR_INVALID_ARG, "k = 5", b_topk_k},
    {"cumulative and", GS_ERR_INVALID_ARG, "not sum, prod, max or min", b_cumulative_kind},
    {"random pred", GS_ERR_SHAPE, "pred", b_rng_pred},
    {"rng shard: u32 offset", GS_ERR_SHAPE, "must be an s32 scalar, not u32[]", b_rng_shard_u32_offset},
    {"rng shard: f32 offset", GS_ERR_SHAPE, "must be an s32 scalar, not f32[]", b_rng_shard_float_offset},
    {"rng shard: offset not a scalar", GS_ERR_SHAPE, "offset operand 3 (o) must be an s32 scalar, not s32[1]", b_rng_shard_vector_offset},
    {"rng shard: rank differs from full", GS_ERR_SHAPE, "shard shape f32[4] and full_shape f32[8,6] differ in rank", b_rng_shard_rank},
    {"rng shard: dtype differs from full", GS_ERR_SHAPE, "differ in dtype", b_rng_shard_dtype},
    {"rng shard: larger than full", GS_ERR_SHAPE, "shard dim 1 (7) is larger than the full dim (6)", b_rng_shard_larger},
    {"rng shard: pred", GS_ERR_SHAPE, "random pred", b_rng_shard_pred},
    {"rng shard: offsets NULL", GS_ERR_INVALID_ARG, "gs_rng_uniform_shard: offsets is NULL", b_rng_shard_no_offsets},
    {"rng shard: full rank too high", GS_ERR_INVALID_ARG, "full_shape rank -1 is outside", b_rng_shard_full_rank},
    {"rng shard: negative full dim", GS_ERR_SHAPE, "full_shape: dim 0 is negative (-4)", b_rng_shard_full_negative},
    {"rng shard: lo of another dtype", GS_ERR_SHAPE, "operand 0 (constant.", b_rng_shard_lo_dtype},
    {"replica groups repeat a partition", GS_ERR_INVALID_ARG, "partition 1 appears twice", b_groups_dup},
    {"replica group negative id", GS_ERR_INVALID_ARG, "negative", b_groups_negative},
    {"iota replica groups do not match", GS_ERR_INVALID_ARG, "do not match", b_groups_iota_mismatch},
    {"reduce-scatter not divisible", GS_ERR_SHAPE, "not divisible by the group size 3", b_reduce_scatter_divide},
    {"all-to-all concat dim out of range", GS_ERR_INVALID_ARG, "out of range", b_all_to_all_dim},
    {"collective-permute target twice", GS_ERR_INVALID_ARG, "target 1 appears in two pairs", b_permute_dup_target},
    {"get-tuple-element index", GS_ERR_INVALID_ARG, "index 1 is out of range", b_gte_range},
    {"get-tuple-element of an array", GS_ERR_SHAPE, "not a tuple", b_gte_array},
    {"elementwise op on a tuple", GS_ERR_SHAPE, "is a tuple", b_tuple_operand},
    {"while condition not pred", GS_ERR_SHAPE, "must return pred[]", b_while_cond_type},
    {"while body changes the state", GS_ERR_SHAPE, "different shape", b_while_body_shape},
    {"operand from another graph", GS_ERR_INVALID_ARG, "belongs to graph other", b_cross_graph},
    {"unbalanced sharding text", GS_ERR_SHARDING, "column 16: expected '}'", b_annotate_unbalanced},
    {"to-manual shard larger than full", GS_ERR_SHAPE, "larger than the full dim", b_to_manual_larger},
    {"iota dim out of range", GS_ERR_INVALID_ARG, "iota_dimension 1", b_iota_dim},
    {"clamp bound shape", GS_ERR_SHAPE, "bound f32[3]", b_clamp_bound},
    {"constant without data", GS_ERR_INVALID_ARG, "data is NULL", b_constant_null},
    {"argmax dim out of range", GS_ERR_INVALID_ARG, "dim 1 is out of range", b_argmax_dim},
    {"compare with a bad direction", GS_ERR_INVALID_ARG, "direction", b_compare_dir},
    {"kind custom without its computation", GS_ERR_INVALID_ARG, "needs its computation (gs_value_set_reducer)", b_reduce_custom_no_fn},
    {"reducer computation on an add", GS_ERR_INVALID_ARG, "add.", b_set_reducer_on_add},
};

static void test_builder_catalogue(void) {
    int i;
    for (i = 0; i < (int)(sizeof builder_cases / sizeof builder_cases[0]); i++) {
        const bad_case *c = &builder_cases[i];
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gs_graph_new(ctx, "g");
        gs_value *v = c->build(g);
        CHECK_MSG(v == NULL, "%s: builder did not fail", c->name);
        CHECK_MSG(gs_ctx_error(ctx) == c->code, "%s: code %s, expected %s (%s)", c->name, gs_result_str(gs_ctx_error(ctx)),
                  gs_result_str(c->code), gs_ctx_error_msg(ctx));
        CHECK_MSG(strstr(gs_ctx_error_msg(ctx), c->msg) != NULL, "%s: message '%s' lacks '%s'", c->name, gs_ctx_error_msg(ctx), c->msg);
        gs_ctx_destroy(ctx);
    }
    CHECK(sizeof builder_cases / sizeof builder_cases[0] >= 40);
}

/* malformed HLO text: code and the line:column the message must name */
typedef struct bad_text { const char *name; const char *text; const char *msg; } bad_text;
/* a ragged dot over lhs f32[2,6,4] (batch 0, contracting 2) and rhs RHS with group_sizes GS and attributes ATTRS */
#define RAGGED(RHS, GS, OUT, ATTRS) "HloModule m\nENTRY e {\n  a = f32[2,6,4] parameter(0)\n  b = " RHS " parameter(1)\n" \
    "  c = " GS " parameter(2)\n  ROOT r = " OUT " ragged-dot(a, b, c), lhs_batch_dims={0}, rhs_batch_dims={1}, " ATTRS "\n}\n"
#define RAGGED_NC "lhs_contracting_dims={2}, rhs_contracting_dims={2}"
static const bad_text text_cases[] = {
    {"empty input", "", "ENTRY"},
    {"a signed parameter number", "ENTRY e {\n  x = f32[2] parameter(-0)\n}\n",
     "line 2, column 24: expected a parameter number >= 0, found '-0'"},
    {"a token with dims", "ENTRY e {\n  x = token[2] parameter(0)\n}\n", "line 2, column 7: a token has no dims: token[]"},
    {"a token with dims in a tuple", "ENTRY e {\n  x = (f32[2], token[1,1]) parameter(0)\n}\n",
     "line 2, column 16: a token has no dims: token[]"},
    {"fft_length that does not fit", "HloModule m\nENTRY e {\n  x = c64[4,6] parameter(0)\n"
     "  ROOT f = c64[4,6] fft(x), fft_type=FFT, fft_length={5}\n}\n", "line 4, column 8: fft f: operand dim 1 is 6, fft_length asks for 5"},
    {"rfft of complex", "HloModule m\nENTRY e {\n  x = c64[6] parameter(0)\n"
     "  ROOT f = c64[4] fft(x), fft_type=RFFT, fft_length={6}\n}\n", "fft f: RFFT needs an f32 or f64 operand, got c64"},
    {"unknown fft_type", "HloModule m\nENTRY e {\n  x = c64[6] parameter(0)\n"
     "  ROOT f = c64[6] fft(x), fft_type=DCT, fft_length={6}\n}\n", "line 4, column 36: expected FFT, IFFT, RFFT or IRFFT"},
    {"sort comparator with the wrong parameter count", "HloModule m\nc {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
     "  ROOT r = pred[] compare(a, b), direction=LT\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  i = s32[4] parameter(1)\n"
     "  ROOT s = (f32[4], s32[4]) sort(x, i), dimensions={0}, to_apply=c\n}\n",
     "sort comparator: computation 'c' has 2 parameters, expected 4"},
    {"sort comparator returning f32", "HloModule m\nc {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
     "  ROOT r = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n"
     "  ROOT s = f32[4] sort(x), dimensions={0}, to_apply=c\n}\n",
     "sort comparator: computation 'c' must return pred[]"},
    {"no entry", "HloModule m\n\nc {\n  ROOT p = f32[] parameter(0)\n}\n", "ENTRY"},
    {"unknown opcode", "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] frobnicate(p)\n}\n", "line 4"},
    {"unknown operand", "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] negate(q)\n}\n", "line 4"},
    {"bad dtype", "HloModule m\nENTRY e {\n  ROOT p = f99[4] parameter(0)\n}\n", "line 3"},
    {"shape disagrees with the op", "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[5] negate(p)\n}\n", "line 4"},
    {"unterminated computation", "HloModule m\nENTRY e {\n  ROOT p = f32[4] parameter(0)\n", "line"},
    {"builder error surfaces with position", "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[5] parameter(1)\n  ROOT r = f32[4] add(a, b)\n}\n", "line 5, column 8: add r: operand shapes differ"},
    {"bad replica groups", "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(p), replica_groups={{0,0}}, to_apply=sum\n}\n", "line 4"},
    {"rng shard: too few offsets", "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  o = s32[] parameter(1)\n"
     "  ROOT r = f32[4,3] rng(a, a, o), distribution=rng_uniform, seed=1, full_shape=f32[8,6]\n}\n",
     "line 5, column 21: rng 'r' with full_shape of rank 2 takes 4 operands (lo, hi and 2 offsets), found 3"},
    {"rng: offsets without full_shape", "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  o = s32[] parameter(1)\n"
     "  ROOT r = f32[4] rng(a, a, o), distribution=rng_uniform, seed=1\n}\n",
     "line 5, column 19: rng 'r' takes 2 operands (lo, hi) without full_shape=, found 3"},
    {"rng: one operand", "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT r = f32[4] rng(a), distribution=rng_uniform\n}\n",
     "rng takes at least 2 operands, found 1"},
    {"rng shard: u32 offset", "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  o = u32[] parameter(1)\n"
     "  ROOT r = f32[4] rng(a, a, o), distribution=rng_uniform, full_shape=f32[8]\n}\n",
     "line 5, column 8: rng r: offset operand 2 (o) must be an s32 scalar, not u32[]"},
    {"rng shard: bad full_shape", "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  o = s32[] parameter(1)\n"
     "  ROOT r = f32[4] rng(a, a, o), distribution=rng_uniform, full_shape=f32[8]x\n}\n",
     "line 5, column 76: expected the end of the value, found 'x'"},
    {"rng shard: shard larger than full", "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  o = s32[] parameter(1)\n"
     "  ROOT r = f32[9] rng(a, a, o), distribution=rng_uniform, full_shape=f32[8]\n}\n",
     "shard dim 0 (9) is larger than the full dim (8)"},
    {"rng: seed above 2^64-1", "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
     "  ROOT r = f32[4] rng(a, a), distribution=rng_uniform, seed=18446744073709551616\n}\n",
     "integer out of range"},
    {"rng: negative seed", "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
     "  ROOT r = f32[4] rng(a, a), distribution=rng_uniform, seed=-1\n}\n",
     "expected a seed (0 to 2^64-1)"},
    {"duplicate names", "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  p = f32[4] parameter(1)\n  ROOT r = f32[4] add(p, p)\n}\n", "line 4"},
    {"reducer computation with a collective", "HloModule m\nr {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
     "  s = f32[] all-reduce(a), replica_groups={}, to_apply=r\n  ROOT c = f32[] subtract(s, b)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n"
     "  z = f32[] constant(0)\n  ROOT y = f32[] reduce(x, z), dimensions={0}, to_apply=r\n}\n", "line 5, column 56: computation 'r' calls itself"},
    {"reducer computation returning a tuple", "HloModule m\nr {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
     "  ROOT t = (f32[], f32[]) tuple(b, a)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n"
     "  z = f32[] constant(0)\n  ROOT y = f32[] reduce(x, z), dimensions={0}, to_apply=r\n}\n", "line 10, column 8: reducer: computation 'r' must return f32[]"},
    {"reducer computation of the wrong type", "HloModule m\nr {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
     "  ROOT c = s32[] subtract(a, b)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n"
     "  ROOT y = f32[4] all-reduce(x), replica_groups={}, to_apply=r\n}\n", "line 9, column 8: reducer: parameter 0 of computation 'r' must be f32[]"},
    {"tiled bitcast that moves elements", "HloModule m\nENTRY e {\n  x = f32[4,4]{1,0:T(2,2)} parameter(0)\n  ROOT b = f32[16]{0} bitcast(x)\n}\n",
     "line 4, column 23: bitcast 'b' between tiled layouts moves elements"},
    {"tile size 0", "HloModule m\nENTRY e {\n  x = f32[4]{0:T(0)} parameter(0)\n  ROOT b = f32[4]{0} bitcast(x)\n}\n",
     "line 3, column 18: expected a tile size >= 1"},
    {"unknown subgroup type", "HloModule m\nENTRY e {\n  x = f32[4] parameter(0), sharding={devices=[2,2]<=[4] last_tile_dims={unreduce}}\n}\n",
     "line 3, column"},
    /* ragged-dot: XLA's shape inference messages (InferRaggedDotOpShape), each at the instruction */
    {"ragged-dot without a ragged dim", RAGGED("f32[3,2,4,5]", "s32[2,3]", "f32[2,6,5]", RAGGED_NC ", rhs_group_dims={0}"),
     "line 6, column 8: ragged-dot r: Cannot infer shape for ragged dot operation: f32[2,6,4] <ragged_dot> f32[3,2,4,5]. "
     "There must be exactly one ragged dimension in the lhs."},
    {"ragged-dot with two ragged dims", RAGGED("f32[3,2,4,5]", "s32[2,3]", "f32[2,6,5]", RAGGED_NC ", lhs_ragged_dims={1,0}, rhs_group_dims={0}"),
     "line 6, column 8: ragged-dot r: Cannot infer shape for ragged dot operation: f32[2,6,4] <ragged_dot> f32[3,2,4,5]. "
     "There must be exactly one ragged dimension in the lhs."},
    {"ragged-dot ragged dim out of range", RAGGED("f32[3,2,4,5]", "s32[2,3]", "f32[2,6,5]", RAGGED_NC ", lhs_ragged_dims={3}, rhs_group_dims={0}"),
     "line 6, column 8: ragged-dot r: Cannot infer shape for ragged dot operation: f32[2,6,4] <ragged_dot> f32[3,2,4,5]. "
     "lhs ragged dimension 3 is out of range [0, 3)"},
    {"ragged-dot group_sizes of the wrong rank", RAGGED("f32[3,2,4,5]", "s32[2,6,3]", "f32[2,6,5]", RAGGED_NC ", lhs_ragged_dims={1}, rhs_group_dims={0}"),
     "line 6, column 8: ragged-dot r: Cannot infer shape for ragged dot operation: f32[2,6,4] <ragged_dot> f32[3,2,4,5]. "
     "expected group_sizes to have rank 2, got 3"},
    {"ragged-dot group_sizes of the wrong shape", RAGGED("f32[3,2,4,5]", "s32[5,3]", "f32[2,6,5]", RAGGED_NC ", lhs_ragged_dims={1}, rhs_group_dims={0}"),
     "line 6, column 8: ragged-dot r: Cannot infer shape for ragged dot operation: f32[2,6,4] <ragged_dot> f32[3,2,4,5]. "
     "group_sizes is expected to have shape [2, 3], got [5, 3]"},
    {"ragged-dot rhs group dim out of range", RAGGED("f32[3,2,4,5]", "s32[3]", "f32[2,6,5]", RAGGED_NC ", lhs_ragged_dims={1}, rhs_group_dims={4}"),
     "line 6, column 8: ragged-dot r: Cannot infer shape for ragged dot operation: f32[2,6,4] <ragged_dot> f32[3,2,4,5]. "
     "rhs group dimension 4 is out of range [0, 4)"},
    {"ragged-dot rhs group dim that is contracted", RAGGED("f32[3,2,4,5]", "s32[3]", "f32[2,6,5]", RAGGED_NC ", lhs_ragged_dims={1}, rhs_group_dims={2}"),
     "line 6, column 8: ragged-dot r: Cannot infer shape for ragged dot operation: f32[2,6,4] <ragged_dot> f32[3,2,4,5]. "
     "rhs group dimension cannot be a batch or contracting dimension"},
    {"ragged-dot non-contracting without a group dim", RAGGED("f32[3,2,4,5]", "s32[3]", "f32[2,6,3,5]", RAGGED_NC ", lhs_ragged_dims={1}"),
     "line 6, column 8: ragged-dot r: Cannot infer shape for ragged dot operation: f32[2,6,4] <ragged_dot> f32[3,2,4,5]. "
     "There must be exactly one group dimension in the rhs when the lhs ragged dimension is non-contracting."},
    {"ragged-dot contracting with a group dim", RAGGED("f32[3,2,4,5]", "s32[2,3]", "f32[3,2,6,5]", RAGGED_NC ", lhs_ragged_dims={2}, rhs_group_dims={0}"),
     "line 6, column 8: ragged-dot r: Cannot infer shape for ragged dot operation: f32[2,6,4] <ragged_dot> f32[3,2,4,5]. "
     "There must be zero group dimensions in the rhs when the ragged dimension is batch or contracting."},
    {"ragged-dot group count differs from the rhs group dim", RAGGED("f32[3,2,4,5]", "s32[2,4]", "f32[2,6,5]", RAGGED_NC ", lhs_ragged_dims={1}, rhs_group_dims={0}"),
     "line 6, column 8: ragged-dot r: Cannot infer shape for ragged dot operation: f32[2,6,4] <ragged_dot> f32[3,2,4,5]. "
     "rhs group dimension is expected to have size=4, got 3"},
    {"ragged-dot contracting dims of different sizes", RAGGED("f32[3,2,5,5]", "s32[3]", "f32[2,6,5]", RAGGED_NC ", lhs_ragged_dims={1}, rhs_group_dims={0}"),
     "line 6, column 8: ragged-dot r: Cannot infer shape for dot operation: f32[2,6,4] <dot> f32[3,2,5,5]. "
     "Contracting dimension sizes are not compatible."},
    {"ragged-dot with more lhs than rhs contracting dims", RAGGED("f32[3,2,4,5]", "s32[3]", "f32[2,6,5]",
     "lhs_contracting_dims={2,1}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={0}"),
     "line 6, column 23: ragged-dot r: Cannot infer shape for dot operation: f32[2,6,4] <dot> f32[3,2,4,5]. "
     "Must specify the same number of contracting dimensions for lhs and rhs."},
    {"ragged-dot float group_sizes", RAGGED("f32[3,2,4,5]", "f32[3]", "f32[2,6,5]", RAGGED_NC ", lhs_ragged_dims={1}, rhs_group_dims={0}"),
     "line 6, column 8: ragged-dot r: group_sizes must be an integer array of rank >= 1, not f32[3]"},
    {"ragged-dot declared shape that differs", RAGGED("f32[3,2,4,5]", "s32[3]", "f32[2,6,4]", RAGGED_NC ", lhs_ragged_dims={1}, rhs_group_dims={0}"),
     "line 6, column"},
    {"ragged-dot misspelt attribute", RAGGED("f32[3,2,4,5]", "s32[3]", "f32[2,6,5]", RAGGED_NC ", lhs_raged_dims={1}, rhs_group_dims={0}"),
     "unknown attribute 'lhs_raged_dims' (did you mean 'lhs_ragged_dims'?)"},
    {"ragged-dot with two operands", "HloModule m\nENTRY e {\n  a = f32[6,4] parameter(0)\n  b = f32[3,4,5] parameter(1)\n"
     "  ROOT r = f32[6,5] ragged-dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}\n}\n",
     "line 5, column 21: ragged-dot takes 3 operands, found 2"},
    {"unreduced mesh axis that also shards a dim", "HloModule m\nENTRY e {\n  x = f32[4] parameter(0), sharding={mesh['x'=2] [{'x'}], unreduced={'x'}}\n}\n",
     "shards two dims"},
};

static void test_text_catalogue(void) {
    int i;
    for (i = 0; i < (int)(sizeof text_cases / sizeof text_cases[0]); i++) {
        const bad_text *c = &text_cases[i];
        gs_ctx *ctx = gst_ctx();
        gs_graph *entry = NULL;
        gs_result r = gs_hlo_parse(ctx, c->text, strlen(c->text), &entry);
        CHECK_MSG(r != GS_OK, "%s: parse did not fail", c->name);
        CHECK_MSG(gs_ctx_error(ctx) == r, "%s: context error differs from the returned code", c->name);
        CHECK_MSG(strstr(gs_ctx_error_msg(ctx), c->msg) != NULL, "%s: message '%s' lacks '%s'", c->name, gs_ctx_error_msg(ctx), c->msg);
        gs_ctx_destroy(ctx);
    }
}

/* A NUL byte inside the text (here within a kept metadata={...} value, which is printed back as a C string and
   so would lose everything after it) is an error naming its line and column; NULs that only end the buffer (a C
   string's terminator counted in len) are not. */
static void test_text_nul_byte(void) {
    static const char text[] = "HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0), metadata={op_name=\"a\0b\"}\n}\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL;
    CHECK(gs_hlo_parse(ctx, text, sizeof text - 1, &g) == GS_ERR_PARSE);
    CHECK_MSG(strstr(gs_ctx_error_msg(ctx), "line 3, column 53: a NUL byte in the text") != NULL, "%s", gs_ctx_error_msg(ctx));
    CHECK(g == NULL);
    gs_ctx_clear_error(ctx);
    CHECK_OK(gs_hlo_parse(ctx, "HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n\0", 56, &g));
    CHECK(g != NULL);
    gs_ctx_destroy(ctx);
}

static void test_eval_bad_calls(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g"), *noroot = gs_graph_new(ctx, "noroot");
    int64_t d[1] = {4};
    gs_value *a = gs_parameter(g, -1, gs_shape_make(GS_F32, 1, d), "a");
    float in[4] = {1, 2, 3, 4}, out[4];
    const void *ins[1];
    void *outs[1];
    ins[0] = in;
    outs[0] = out;
    gs_graph_set_root(g, gs_neg(g, a));
    CHECK(gs_eval(g, NULL, outs) != GS_OK);
    gs_ctx_clear_error(ctx);
    CHECK(gs_eval(g, ins, NULL) != GS_OK);
    gs_ctx_clear_error(ctx);
    CHECK(gs_eval(NULL, ins, outs) != GS_OK);
    CHECK(gs_eval(noroot, ins, outs) != GS_OK);
    gs_ctx_clear_error(ctx);
    CHECK_OK(gs_eval(g, ins, outs));
    CHECK(out[3] == -4.0f);
    gs_ctx_destroy(ctx);
}

static void test_ctx_null_safety(void) {
    CHECK(gs_ctx_create(NULL, NULL) == GS_ERR_INVALID_ARG);
    CHECK(gs_graph_new(NULL, "x") == NULL);
    CHECK(gs_ctx_error(NULL) == GS_ERR_INVALID_ARG);
    CHECK(gs_value_op(NULL) == GS_OP_INVALID);
    CHECK(gs_graph_verify(NULL) == GS_ERR_INVALID_ARG);
    gs_ctx_destroy(NULL);
}

void suite_errors(void) {
    RUN(test_builder_catalogue);
    RUN(test_text_catalogue);
    RUN(test_text_nul_byte);
    RUN(test_eval_bad_calls);
    RUN(test_ctx_null_safety);
}
