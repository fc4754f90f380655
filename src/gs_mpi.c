/* gs_mpi.c - the runtime's link between ranks (GSHARD_MPI builds only; without it this file is empty and
 * gshard.h needs no MPI): the messages a rendezvous moves between the R processes of a communicator, the
 * failure notice a failing rank sends to the others, and the sums of the run's accounting.
 *
 * Every wait polls (MPI_Testall) and watches three things besides its requests: the runtime's abort flag (a
 * local failure), a failure notice from another rank (tag GS__NET_TAG_FAIL, any source), and the watchdog.
 * On any of them it returns at once and leaves its requests pending: the link is then broken (a later run is
 * refused) and the job is ended by the caller (MPI_Abort). Messages travel on a duplicate of the caller's
 * communicator, so they never meet the caller's own. MPI is called by one thread at a time (the rank's first
 * worker during a run, the caller otherwise): the process needs MPI_THREAD_SERIALIZED.
 *
 * Tags: 1 failure notices, 2 posts (what each rank is at), 3 gathered results, 16 + d the operand of device d
 * or its pieces (in an order both sides follow), 16 + D + g an all-reduce's folded slices of group g; MPI keeps
 * messages of one tag and source in order, so successive collectives never mix. Transfers are started
 * (gs__net_start) and waited for (gs__net_finish) separately, so that a rendezvous starts its posts and its
 * operands together and waits for the posts first. Messages above 1 GiB go in 1 GiB pieces (MPI counts are
 * int).
 */
#include "gs_thread.h"

#if defined(GSHARD_MPI)
#include <mpi.h>

#define GS__NET_PIECE ((int64_t)1 << 30)

struct gs__net {
    MPI_Comm comm;            /* a duplicate of the caller's */
    int rank, size;
    bool broken;              /* a wait gave up: requests may still be pending */
    char fail_text[1024];     /* the failure notice this rank sent (its buffer must outlive the sends) */
    MPI_Request *fail_req;    /* size: the notices to the other ranks */
    gs_ctx *ctx;              /* the runtime's: the allocator of the request list */
    MPI_Request *req;         /* the transfers started and not yet waited for, in the order started */
    int *req_peer;            /* each one's peer rank, -1 for a send */
    int n_req, cap_req;
    int64_t sent;             /* bytes of every send started (gs__net_sent) */
};

GS__FN gs_result gs__net_open(gs_ctx *ctx, void *comm, gs__net **out) {
    gs__net *n;
    int init = 0, level = 0, fin = 0;
    *out = NULL;
    MPI_Initialized(&init);
    if (init) MPI_Finalized(&fin);
    if (!init || fin)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_create: desc.comm is given but MPI is %s",
                       init ? "finalized" : "not initialized (call MPI_Init_thread first)");
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_SERIALIZED)
        return gs__err(ctx, GS_ERR_UNSUPPORTED,
                       "gs_runtime_create: MPI was initialized below MPI_THREAD_SERIALIZED (the rank's first worker "
                       "thread calls MPI during a run): use MPI_Init_thread");
    n = (gs__net *)gs__malloc(ctx, sizeof *n);
    if (!n) return GS_ERR_OUT_OF_MEMORY;
    memset(n, 0, sizeof *n);
    n->ctx = ctx;
    if (MPI_Comm_dup(*(MPI_Comm *)comm, &n->comm) != MPI_SUCCESS) {
        gs__free(ctx, n);
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_create: MPI_Comm_dup failed on desc.comm");
    }
    MPI_Comm_set_errhandler(n->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(n->comm, &n->rank);
    MPI_Comm_size(n->comm, &n->size);
    n->fail_req = (MPI_Request *)gs__malloc(ctx, sizeof(MPI_Request) * (size_t)n->size);
    if (!n->fail_req) {
        MPI_Comm_free(&n->comm);
        gs__free(ctx, n);
        return GS_ERR_OUT_OF_MEMORY;
    }
    *out = n;
    return GS_OK;
}

/* Frees the link; a broken one keeps its communicator (pending requests on it: MPI_Abort ends the job). */
GS__FN void gs__net_close(gs_ctx *ctx, gs__net *n) {
    if (!n) return;
    if (!n->broken) MPI_Comm_free(&n->comm);
    gs__free(ctx, n->fail_req);
    gs__free(ctx, n->req);
    gs__free(ctx, n->req_peer);
    gs__free(ctx, n);
}

GS__FN int gs__net_rank(const gs__net *n) { return n->rank; }
GS__FN int gs__net_size(const gs__net *n) { return n->size; }
GS__FN bool gs__net_broken(const gs__net *n) { return n->broken; }

/* src into dst[0, cap), cut to fit */
GS__FN void gs__net_copy(char *dst, size_t cap, const char *src) {
    size_t n = strlen(src);
    if (cap == 0) return;
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* A failure notice from another rank, if one has come: "<code>:<message>" into msg. */
GS__FN bool gs__net_notice(gs__net *n, int *code, char *msg, size_t cap) {
    int flag = 0, len = 0;
    MPI_Status st;
    char buf[1100];
    char *end = NULL;
    long c;
    MPI_Iprobe(MPI_ANY_SOURCE, GS__NET_TAG_FAIL, n->comm, &flag, &st);
    if (!flag) return false;
    MPI_Get_count(&st, MPI_CHAR, &len);
    if (len < 0 || len > (int)sizeof buf - 1) len = (int)sizeof buf - 1;
    memset(buf, 0, sizeof buf);
    MPI_Recv(buf, len, MPI_CHAR, st.MPI_SOURCE, GS__NET_TAG_FAIL, n->comm, MPI_STATUS_IGNORE);
    c = strtol(buf, &end, 10);
    *code = end && *end == ':' ? (int)c : (int)GS_ERR_THREAD;
    gs__net_copy(msg, cap, end && *end == ':' ? end + 1 : buf);
    return true;
}

/* Waits for reqs[0, cnt). GS__NET_OK; else the link is broken and msg says why (abort: nothing). */
GS__FN int gs__net_wait(gs__net *n, int cnt, MPI_Request *reqs, int64_t timeout_us, const int *abort_flag, int *code,
                        char *msg, size_t cap) {
    int64_t t0 = gs__now_us(), polls = 0;
    for (;;) {
        int flag = 0;
        if (MPI_Testall(cnt, reqs, &flag, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
            n->broken = true;
            *code = GS_ERR_THREAD;
            snprintf(msg, cap, "rank %d: an MPI transfer failed", n->rank);
            return GS__NET_ERROR;
        }
        if (flag) return GS__NET_OK;
        if (abort_flag && GS__LOAD(abort_flag)) {
            n->broken = true;
            return GS__NET_ABORT;
        }
        if (gs__net_notice(n, code, msg, cap)) {
            n->broken = true;
            return GS__NET_REMOTE;
        }
        if (timeout_us >= 0 && gs__now_us() - t0 > timeout_us) {
            n->broken = true;
            return GS__NET_TIMEOUT;
        }
        /* spin briefly, then give the processor away: ranks often share cores with each other */
        if (++polls > 64) sched_yield();
        else gs__cpu_relax();
    }
}

/* Room for `more` requests after the n_req started ones. */
GS__FN bool gs__net_reserve(gs__net *n, int64_t more) {
    MPI_Request *req;
    int *peer;
    int64_t cap = n->cap_req;
    if (n->n_req + more <= n->cap_req) return true;
    while (cap < n->n_req + more) cap = cap ? 2 * cap : 64;
    if (cap > INT_MAX) return false;
    req = (MPI_Request *)gs__malloc(n->ctx, sizeof(MPI_Request) * (size_t)cap);
    peer = (int *)gs__malloc(n->ctx, sizeof(int) * (size_t)cap);
    if (!req || !peer) {
        gs__free(n->ctx, req);
        gs__free(n->ctx, peer);
        return false;
    }
    if (n->n_req) {
        memcpy(req, n->req, sizeof(MPI_Request) * (size_t)n->n_req);
        memcpy(peer, n->req_peer, sizeof(int) * (size_t)n->n_req);
    }
    gs__free(n->ctx, n->req);
    gs__free(n->ctx, n->req_peer);
    n->req = req;
    n->req_peer = peer;
    n->cap_req = (int)cap;
    return true;
}

/* Starts the transfers x[0, cnt) (receives when `recv`) after the ones started before; gs__net_finish waits
   for them. GS__NET_OK, or GS__NET_ERROR (out of memory: the link is broken and msg says so). */
GS__FN int gs__net_start(gs__net *n, const gs__net_xfer *x, int cnt, bool recv, int *code, char *msg, size_t cap) {
    int64_t total = 0, off;
    int i;
    for (i = 0; i < cnt; i++) total += (x[i].bytes + GS__NET_PIECE - 1) / GS__NET_PIECE + 1;
    if (!gs__net_reserve(n, total)) {
        *code = GS_ERR_OUT_OF_MEMORY;
        snprintf(msg, cap, "rank %d: out of memory for %lld MPI requests", n->rank, (long long)(n->n_req + total));
        n->broken = true;
        return GS__NET_ERROR;
    }
    for (i = 0; i < cnt; i++) {
        if (!recv) n->sent += x[i].bytes;
        for (off = 0; off == 0 || off < x[i].bytes; off += GS__NET_PIECE) {
            char *b = (char *)x[i].buf + off;
            int len = (int)GS__MIN(GS__NET_PIECE, x[i].bytes - off);
            if (recv) MPI_Irecv(b, len, MPI_BYTE, x[i].peer, x[i].tag, n->comm, &n->req[n->n_req]);
            else MPI_Isend(b, len, MPI_BYTE, x[i].peer, x[i].tag, n->comm, &n->req[n->n_req]);
            n->req_peer[n->n_req++] = recv ? x[i].peer : -1;
        }
    }
    return GS__NET_OK;
}

/* The bytes this rank has started sending since the link opened. */
GS__FN int64_t gs__net_sent(const gs__net *n) { return n->sent; }

/* The number of transfers started and not yet finished (a mark for gs__net_finish). */
GS__FN int gs__net_started(const gs__net *n) { return n->n_req; }

/* Waits for the first `upto` requests started (a gs__net_started mark; < 0: all of them, after which the list
   is empty again). On a timeout, late[r] (R entries) is set for every rank a receive from which did not
   complete. */
GS__FN int gs__net_finish(gs__net *n, int upto, int64_t timeout_us, const int *abort_flag, uint8_t *late, int *code,
                          char *msg, size_t cap) {
    int cnt = upto < 0 || upto > n->n_req ? n->n_req : upto, rc = GS__NET_OK, i;
    if (cnt > 0) rc = gs__net_wait(n, cnt, n->req, timeout_us, abort_flag, code, msg, cap);
    if (rc == GS__NET_TIMEOUT && late) {
        memset(late, 0, (size_t)n->size);
        for (i = 0; i < cnt; i++) {
            int flag = 0;
            if (n->req_peer[i] < 0) continue;
            MPI_Test(&n->req[i], &flag, MPI_STATUS_IGNORE);
            if (!flag) late[n->req_peer[i]] = 1;
        }
    }
    if (rc == GS__NET_OK && cnt == n->n_req) n->n_req = 0;
    return rc;
}

/* Starts the transfers (sends, then receives) and waits for all (late: as gs__net_finish). */
GS__FN int gs__net_move(gs__net *n, const gs__net_xfer *send, int n_send, const gs__net_xfer *recv, int n_recv,
                        int64_t timeout_us, const int *abort_flag, uint8_t *late, int *code, char *msg, size_t cap) {
    int rc = gs__net_start(n, send, n_send, false, code, msg, cap);
    if (rc == GS__NET_OK) rc = gs__net_start(n, recv, n_recv, true, code, msg, cap);
    if (rc == GS__NET_OK) rc = gs__net_finish(n, -1, timeout_us, abort_flag, late, code, msg, cap);
    return rc;
}

/* Tells every other rank that this one failed ("<code>:<message>"); their waits end with GS__NET_REMOTE. */
GS__FN void gs__net_tell(gs__net *n, int code, const char *msg) {
    int r, k = 0;
    snprintf(n->fail_text, sizeof n->fail_text, "%d:%s", code, msg);
    for (r = 0; r < n->size; r++)
        if (r != n->rank)
            MPI_Isend(n->fail_text, (int)strlen(n->fail_text) + 1, MPI_CHAR, r, GS__NET_TAG_FAIL, n->comm, &n->fail_req[k++]);
    n->broken = true;
}

/* x[0, count) summed over the ranks, in place (after a successful run: every rank is here). */
GS__FN bool gs__net_sum(gs__net *n, int64_t *x, int64_t count) {
    return MPI_Allreduce(MPI_IN_PLACE, x, (int)count, MPI_INT64_T, MPI_SUM, n->comm) == MPI_SUCCESS;
}

/* MPI's own all-reduce of buf (count elements of t, compute format) over every rank, in place, watched like
   gs__net_move. GS__NET_ERROR (nothing started) when MPI has no matching type or operation. */
GS__FN int gs__net_allreduce(gs__net *n, gs_dtype t, gs_reduce_kind kind, void *buf, int64_t count, int64_t timeout_us,
                             const int *abort_flag, int *code, char *msg, size_t cap) {
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Request req;
    switch (t) {
    case GS_F32: dt = MPI_FLOAT; break;
    case GS_F64: dt = MPI_DOUBLE; break;
    case GS_S32: dt = MPI_INT32_T; break;
    case GS_U32: dt = MPI_UINT32_T; break;
    default: return GS__NET_ERROR;
    }
    switch (kind) {
    case GS_REDUCE_SUM: op = MPI_SUM; break;
    case GS_REDUCE_PROD: op = MPI_PROD; break;
    case GS_REDUCE_MAX: op = MPI_MAX; break;
    case GS_REDUCE_MIN: op = MPI_MIN; break;
    default: return GS__NET_ERROR;
    }
    if (count > INT_MAX) return GS__NET_ERROR;
    if (MPI_Iallreduce(MPI_IN_PLACE, buf, (int)count, dt, op, n->comm, &req) != MPI_SUCCESS) return GS__NET_ERROR;
    return gs__net_wait(n, 1, &req, timeout_us, abort_flag, code, msg, cap);
}

#endif /* GSHARD_MPI */
