/* gs_thread.h - the types and calls of the portable layer under the SPMD runtime (gs_thread.c says what it
   provides and which platforms it supports): atomics, a clock, a mutex and condition variable, the worker
   pool and the barrier the emulated devices meet at. */
#ifndef GS_THREAD_H
#define GS_THREAD_H
#include "gs_internal.h"

#if !defined(GSHARD_NO_THREADS)
#  if defined(_WIN32) && !defined(__MINGW32__)
#    error "gshard.h: the runtime's threads need POSIX threads; define GSHARD_NO_THREADS (lockstep mode) here"
#  endif
#  if !defined(__GNUC__) && !defined(__clang__)
#    error "gshard.h: the runtime's threads need GCC/Clang __atomic builtins; define GSHARD_NO_THREADS here"
#  endif
#  include <pthread.h>
#  include <sched.h>
#  include <unistd.h>
#endif
#if defined(_WIN32)
#  include <time.h>
#else
#  include <sys/time.h>
#endif

/* ---------------------------------------------------------------------------------------------------------
   Atomics on int and int64_t: acquire loads, release stores, acq_rel read-modify-write, and a sequentially
   consistent pair for the sleep/wake handshake. Without threads they are plain accesses.
   ------------------------------------------------------------------------------------------------------- */
#if !defined(GSHARD_NO_THREADS)
#  define GS__LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#  define GS__LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#  define GS__STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#  define GS__STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#  define GS__ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#  define GS__LOAD_SC(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#  define GS__STORE_SC(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#  define GS__ADD_SC(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#  define GS__CAS(p, expect, v) \
       __atomic_compare_exchange_n((p), (expect), (v), false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
#else
#  define GS__LOAD(p) (*(p))
#  define GS__LOAD_RELAXED(p) (*(p))
#  define GS__STORE(p, v) (*(p) = (v))
#  define GS__STORE_RELAXED(p, v) (*(p) = (v))
#  define GS__ADD(p, v) (*(p) += (v))
#  define GS__LOAD_SC(p) (*(p))
#  define GS__STORE_SC(p, v) (*(p) = (v))
#  define GS__ADD_SC(p, v) (*(p) += (v))
#  define GS__CAS(p, expect, v) (*(p) == *(expect) ? (*(p) = (v), true) : (*(expect) = *(p), false))
#endif

GS__FN void gs__cpu_relax(void);      /* a spin-wait hint */
GS__FN int64_t gs__now_us(void);      /* microseconds of wall time */
GS__FN int gs__cpu_count(void);       /* online processors (1 without threads) */

#if !defined(GSHARD_NO_THREADS)
typedef struct gs__mutex { pthread_mutex_t m; } gs__mutex;
typedef struct gs__cond { pthread_cond_t c; } gs__cond;

/* ---------------------------------------------------------------------------------------------------------
   The worker pool: n threads that sleep until gs__pool_run hands them a job, run fn(arg, worker) each, and
   report back. One job at a time; the caller blocks until every worker has finished it. gs__pool_run_n hands
   the job to the first k workers only (the others go back to sleep).
   ------------------------------------------------------------------------------------------------------- */
typedef struct gs__pool gs__pool;
typedef struct gs__pool_worker {
    gs__pool *pool;
    int index;
    pthread_t thread;
} gs__pool_worker;

struct gs__pool {
    gs_ctx *ctx;
    int n, started;
    gs__pool_worker *workers;
    gs__mutex m;
    gs__cond work, done;
    int64_t job;              /* job number, incremented by gs__pool_run (under m) */
    int pending;              /* workers still on the current job (under m) */
    int active;               /* workers 0 .. active-1 take the current job (under m) */
    bool quit;                /* under m */
    void (*fn)(void *arg, int worker);
    void *arg;
};

/* starts n workers (stack_size bytes each, 0: the default) */
GS__FN gs_result gs__pool_start(gs_ctx *ctx, gs__pool *p, int n, size_t stack_size);
GS__FN void gs__pool_stop(gs__pool *p);
/* runs fn(arg, worker) on the first k workers and returns when all have returned */
GS__FN void gs__pool_run_n(gs__pool *p, void (*fn)(void *arg, int worker), void *arg, int k);
GS__FN void gs__pool_run(gs__pool *p, void (*fn)(void *arg, int worker), void *arg);
#endif /* !GSHARD_NO_THREADS */

/* ---------------------------------------------------------------------------------------------------------
   The barrier. n participants call gs__barrier_wait; the last to arrive opens the round. A waiter spins
   (only when there are no more participants than processors: spinning on an oversubscribed machine steals
   the time the late participants need), then yields its processor for a while, then sleeps on a condition
   variable (at once when the recent waits were long). A raised abort flag or a timeout ends every wait.
   Measured on 2 cores: a spinning round
   costs well under a microsecond with 2 participants but milliseconds with 4, a yielding round a few
   microseconds, a sleeping one tens of microseconds - hence the three phases.
   After an abort or a timeout the barrier's counts are meaningless: it is set up again before the next use.
   ------------------------------------------------------------------------------------------------------- */
enum { GS__BARRIER_OK = 0, GS__BARRIER_ABORT = 1, GS__BARRIER_TIMEOUT = 2 };
#define GS__BARRIER_SKIP 16       /* waits with short spins after the first missed spin */
#define GS__BARRIER_SHORT_US 1    /* a short spin (microseconds) */

/* With many participants, the arrival counter (written by every arrival) and gen (read by every spinning
   waiter) live on different cache lines, so an arrival does not disturb the waiters' spinning. With a few
   (4 or less), the counter shares gen's line: the last arrival then opens the round with one line transfer
   less (about a third of a 2-thread round). */
typedef struct gs__barrier {
    int count_far;            /* arrivals in the current round (many participants) */
    char pad0[64 - sizeof(int)];
    int gen;                  /* round number */
    int sleepers;             /* waiters in (or entering) the sleeping phase */
    int count_near;           /* arrivals in the current round (a few participants) */
    char pad1[64 - 3 * sizeof(int)];
    int *count;               /* &count_near or &count_far */
    int n;
    int *abort;               /* shared flag: nonzero ends every wait */
    int64_t spin_us;          /* phase 1 length (0: no spinning) */
    int64_t yield_us;         /* phase 2 length */
    int64_t last_wait_us;     /* the latest wait that went past spinning (relaxed: only a hint) */
    int spin_skip;            /* waits left that do not spin, after a spin that missed (relaxed: a hint) */
    int spin_penalty;         /* the next miss's spin_skip: doubles while spins keep missing (relaxed) */
#if !defined(GSHARD_NO_THREADS)
    gs__mutex m;
    gs__cond c;
#endif
} gs__barrier;

/* cpus: the processors online (gs__cpu_count, counted once by the caller: counting is a system call) */
GS__FN bool gs__barrier_init(gs__barrier *b, int n, int *abort_flag, int cpus);
GS__FN void gs__barrier_destroy(gs__barrier *b);
GS__FN void gs__barrier_abort(gs__barrier *b);
#if !defined(GSHARD_NO_THREADS)
/* GS__BARRIER_OK, _ABORT or _TIMEOUT; *waited_us: the time spent waiting */
GS__FN int gs__barrier_wait(gs__barrier *b, int64_t timeout_us, int64_t *waited_us);
#endif

#endif /* GS_THREAD_H */
