/* gs_thread.c - the portable layer under the SPMD runtime: atomics, a clock, threads, a mutex and condition
 * variable, a persistent pool of worker threads, and the barrier the emulated devices meet at.
 *
 * POSIX threads only (Linux, macOS, BSDs, MinGW with winpthreads). Build with GSHARD_NO_THREADS where there
 * are none: then only the clock and the plain (non-atomic) versions of the atomics remain, and the runtime
 * runs every device in lockstep in the calling thread.
 *
 * Only functions that strict C99 (`-std=c99`, no _POSIX_C_SOURCE) declares are used: the implementation may
 * be compiled in such a TU, and by the time it is reached <stdint.h> has fixed glibc's feature set. So the
 * clock is gettimeofday (microseconds, wall time) and timed waits use pthread_cond_timedwait on the same
 * clock; sched_yield, sysconf(_SC_NPROCESSORS_ONLN) and pthread_attr_setstacksize are available there too.
 *
 * Atomics are GCC/Clang's __atomic builtins (C and C++ alike, understood by ThreadSanitizer).
 */
#include "gs_thread.h"

/* A spin-wait hint: the pause instruction on x86, yield on Arm, nothing elsewhere. */
GS__FN void gs__cpu_relax(void) {
#if !defined(GSHARD_NO_THREADS) && (defined(__x86_64__) || defined(__i386__))
    __asm__ __volatile__("pause");
#elif !defined(GSHARD_NO_THREADS) && (defined(__aarch64__) || defined(__arm__))
    __asm__ __volatile__("yield");
#endif
}

/* Microseconds of wall time (gettimeofday: strict C99 has no monotonic clock; see the top of this file). */
GS__FN int64_t gs__now_us(void) {
#if defined(_WIN32)
    return (int64_t)((double)clock() * 1e6 / (double)CLOCKS_PER_SEC);
#else
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000000 + (int64_t)tv.tv_usec;
#endif
}

/* Online processors (1 when unknown or without threads). */
GS__FN int gs__cpu_count(void) {
#if !defined(GSHARD_NO_THREADS) && defined(_SC_NPROCESSORS_ONLN)
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (n > 65536 ? 65536 : (int)n) : 1;
#else
    return 1;
#endif
}

#if !defined(GSHARD_NO_THREADS)
/* ---------------------------------------------------------------------------------------------------------
   Threads, mutex, condition variable
   ------------------------------------------------------------------------------------------------------- */

GS__FN bool gs__mutex_init(gs__mutex *m) { return pthread_mutex_init(&m->m, NULL) == 0; }
GS__FN void gs__mutex_destroy(gs__mutex *m) { pthread_mutex_destroy(&m->m); }
GS__FN void gs__mutex_lock(gs__mutex *m) { pthread_mutex_lock(&m->m); }
GS__FN void gs__mutex_unlock(gs__mutex *m) { pthread_mutex_unlock(&m->m); }
GS__FN bool gs__cond_init(gs__cond *c) { return pthread_cond_init(&c->c, NULL) == 0; }
GS__FN void gs__cond_destroy(gs__cond *c) { pthread_cond_destroy(&c->c); }
GS__FN void gs__cond_wait(gs__cond *c, gs__mutex *m) { pthread_cond_wait(&c->c, &m->m); }
GS__FN void gs__cond_broadcast(gs__cond *c) { pthread_cond_broadcast(&c->c); }
GS__FN void gs__cond_signal(gs__cond *c) { pthread_cond_signal(&c->c); }
/* Waits until woken or until the wall-clock time until_us (gs__now_us scale); spurious returns happen. */
GS__FN void gs__cond_wait_until(gs__cond *c, gs__mutex *m, int64_t until_us) {
    struct timespec ts;
    ts.tv_sec = (time_t)(until_us / 1000000);
    ts.tv_nsec = (long)(until_us % 1000000) * 1000;
    pthread_cond_timedwait(&c->c, &m->m, &ts);
}
GS__FN void gs__yield(void) { sched_yield(); }

GS__FN void *gs__pool_main(void *p) {
    gs__pool_worker *w = (gs__pool_worker *)p;
    gs__pool *pool = w->pool;
    int64_t seen = 0;
    for (;;) {
        void (*fn)(void *, int);
        void *arg;
        gs__mutex_lock(&pool->m);
        while (pool->job == seen && !pool->quit) gs__cond_wait(&pool->work, &pool->m);
        if (pool->quit) {
            gs__mutex_unlock(&pool->m);
            return NULL;
        }
        seen = pool->job;
        if (w->index >= pool->active) {
            gs__mutex_unlock(&pool->m);
            continue;
        }
        fn = pool->fn;
        arg = pool->arg;
        gs__mutex_unlock(&pool->m);
        fn(arg, w->index);
        gs__mutex_lock(&pool->m);
        if (--pool->pending == 0) gs__cond_signal(&pool->done);
        gs__mutex_unlock(&pool->m);
    }
}

GS__FN void gs__pool_stop(gs__pool *p) {
    int i;
    if (!p->workers) return;
    gs__mutex_lock(&p->m);
    p->quit = true;
    gs__cond_broadcast(&p->work);
    gs__mutex_unlock(&p->m);
    for (i = 0; i < p->started; i++) pthread_join(p->workers[i].thread, NULL);
    gs__cond_destroy(&p->work);
    gs__cond_destroy(&p->done);
    gs__mutex_destroy(&p->m);
    gs__free(p->ctx, p->workers);
    p->workers = NULL;
    p->started = 0;
}

/* Starts n workers with stack_size bytes of stack each (0: the system default). */
GS__FN gs_result gs__pool_start(gs_ctx *ctx, gs__pool *p, int n, size_t stack_size) {
    pthread_attr_t attr;
    int i, rc = 0;
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    p->n = n;
    p->workers = (gs__pool_worker *)gs__malloc(ctx, sizeof(gs__pool_worker) * (size_t)n);
    if (!p->workers) return GS_ERR_OUT_OF_MEMORY;
    if (!gs__mutex_init(&p->m)) {
        gs__free(ctx, p->workers);
        p->workers = NULL;
        return gs__err(ctx, GS_ERR_THREAD, "gs_runtime_create: cannot create a mutex");
    }
    if (!gs__cond_init(&p->work)) {
        gs__mutex_destroy(&p->m);
        gs__free(ctx, p->workers);
        p->workers = NULL;
        return gs__err(ctx, GS_ERR_THREAD, "gs_runtime_create: cannot create a condition variable");
    }
    if (!gs__cond_init(&p->done)) {
        gs__cond_destroy(&p->work);
        gs__mutex_destroy(&p->m);
        gs__free(ctx, p->workers);
        p->workers = NULL;
        return gs__err(ctx, GS_ERR_THREAD, "gs_runtime_create: cannot create a condition variable");
    }
    if (pthread_attr_init(&attr) != 0) {
        gs__pool_stop(p);
        return gs__err(ctx, GS_ERR_THREAD, "gs_runtime_create: pthread_attr_init failed");
    }
    if (stack_size) pthread_attr_setstacksize(&attr, stack_size);   /* a refused size keeps the default */
    for (i = 0; i < n; i++) {
        p->workers[i].pool = p;
        p->workers[i].index = i;
        rc = pthread_create(&p->workers[i].thread, &attr, gs__pool_main, &p->workers[i]);
        if (rc != 0) break;
        p->started++;
    }
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        gs__pool_stop(p);
        return gs__err(ctx, GS_ERR_THREAD, "gs_runtime_create: cannot start thread %d of %d (error %d)", i, n, rc);
    }
    return GS_OK;
}

/* Runs fn(arg, i) on workers i = 0 .. k-1 (1 <= k <= n) and returns when they have returned. */
GS__FN void gs__pool_run_n(gs__pool *p, void (*fn)(void *arg, int worker), void *arg, int k) {
    gs__mutex_lock(&p->m);
    p->fn = fn;
    p->arg = arg;
    p->active = k;
    p->pending = k;
    p->job++;
    gs__cond_broadcast(&p->work);
    while (p->pending > 0) gs__cond_wait(&p->done, &p->m);
    gs__mutex_unlock(&p->m);
}

/* Runs fn(arg, i) on every worker i and returns when all have returned. */
GS__FN void gs__pool_run(gs__pool *p, void (*fn)(void *arg, int worker), void *arg) { gs__pool_run_n(p, fn, arg, p->n); }
#endif /* !GSHARD_NO_THREADS */

GS__FN bool gs__barrier_init(gs__barrier *b, int n, int *abort_flag, int cpus) {
    memset(b, 0, sizeof *b);
    b->n = n;
    b->abort = abort_flag;
    /* spin only while every participant can have a processor, and only briefly: on a machine that also runs
       other work a partner may be descheduled, and a long spin then only delays it */
    b->spin_us = n <= cpus ? 5 : 0;
    /* yielding helps while the runnable threads are few; with hundreds it only delays the late ones */
    b->yield_us = n <= 4 * cpus ? 200 : (n <= 16 * cpus ? 50 : 0);
    b->spin_penalty = GS__BARRIER_SKIP;
    b->count = n <= 4 ? &b->count_near : &b->count_far;
#if !defined(GSHARD_NO_THREADS)
    if (!gs__mutex_init(&b->m)) return false;
    if (!gs__cond_init(&b->c)) {
        gs__mutex_destroy(&b->m);
        return false;
    }
#endif
    return true;
}

GS__FN void gs__barrier_destroy(gs__barrier *b) {
#if !defined(GSHARD_NO_THREADS)
    gs__cond_destroy(&b->c);
    gs__mutex_destroy(&b->m);
#else
    (void)b;
#endif
}

/* Raises the abort flag and wakes every sleeper. */
GS__FN void gs__barrier_abort(gs__barrier *b) {
    GS__STORE_SC(b->abort, 1);
#if !defined(GSHARD_NO_THREADS)
    gs__mutex_lock(&b->m);
    gs__cond_broadcast(&b->c);
    gs__mutex_unlock(&b->m);
#endif
}

#if !defined(GSHARD_NO_THREADS)
/* A spin missed its round: no spinning for the next spin_penalty waits, and twice as long after the next miss. */
GS__FN void gs__barrier_missed(gs__barrier *b) {
    int pen = GS__LOAD_RELAXED(&b->spin_penalty);
    GS__STORE_RELAXED(&b->spin_skip, pen);
    GS__STORE_RELAXED(&b->spin_penalty, pen < 256 ? 2 * pen : pen);
}

/* Waits for the round to open. timeout_us: how long to wait before giving up (GS__BARRIER_TIMEOUT), < 0 for
   ever. *waited_us receives the time spent waiting (0 when the round opened while spinning). The clock is not
   read while a balanced round ends within the first spins. */
GS__FN int gs__barrier_wait(gs__barrier *b, int64_t timeout_us, int64_t *waited_us) {
    int gen = GS__LOAD(&b->gen), i, r, skip;
    int64_t t0 = 0, now, deadline, yield_us;
    bool long_waits;
    *waited_us = 0;
    if (GS__ADD(b->count, 1) == b->n) {
        GS__STORE_RELAXED(b->count, 0);
        GS__STORE_SC(&b->gen, gen + 1);
        if (GS__LOAD_SC(&b->sleepers) > 0) {
            gs__mutex_lock(&b->m);
            gs__cond_broadcast(&b->c);
            gs__mutex_unlock(&b->m);
        }
        return GS__LOAD(b->abort) ? GS__BARRIER_ABORT : GS__BARRIER_OK;
    }
    /* the last rounds took long (large shares of work between rounds): sleep at once, leaving the processors
       to the participants that still work */
    long_waits = GS__LOAD_RELAXED(&b->last_wait_us) > 4 * (b->yield_us + b->spin_us);
    skip = GS__LOAD_RELAXED(&b->spin_skip);
    if (skip > 0) GS__STORE_RELAXED(&b->spin_skip, skip - 1);
    if (b->spin_us && !long_waits) {
        /* Spinning only pays while every participant holds a processor. When other work takes processors
           (or a hypervisor deschedules a virtual CPU that spins on pause for long: pause-loop exiting), a
           partner may be off its processor for many microseconds and a long spin makes it worse. A spin that
           ran out, or a round that opened only long after the spin began, shortens the spins of the next
           spin_penalty waits to GS__BARRIER_SHORT_US (enough for a balanced round, too short to be taken for
           a stuck lock); the penalty doubles while full spins keep missing and is reset by one that does not.
           The clock is read every 32 spins, first after 32: a balanced round costs no clock read. */
        int64_t limit = skip > 0 ? GS__BARRIER_SHORT_US : b->spin_us;
        for (i = 1;; i++) {
            if (GS__LOAD(&b->gen) != gen) {
                if (t0 != 0 && gs__now_us() - t0 > 3 * limit) gs__barrier_missed(b);
                else if (skip == 0 && GS__LOAD_RELAXED(&b->spin_penalty) != GS__BARRIER_SKIP)
                    GS__STORE_RELAXED(&b->spin_penalty, GS__BARRIER_SKIP);
                return GS__BARRIER_OK;
            }
            if ((i & 31) == 0) {
                if (GS__LOAD(b->abort)) return GS__BARRIER_ABORT;
                if (t0 == 0) t0 = gs__now_us();
                else if (gs__now_us() - t0 >= limit) break;
            }
            gs__cpu_relax();
        }
        if (skip == 0) gs__barrier_missed(b);
    }
    now = gs__now_us();
    if (t0 == 0) t0 = now;
    deadline = timeout_us >= 0 ? t0 + timeout_us : -1;
    yield_us = long_waits ? 0 : b->yield_us;
    for (i = 0; yield_us > 0; i++) {
        if (GS__LOAD(&b->gen) != gen) {
            r = GS__BARRIER_OK;
            goto out;
        }
        if (GS__LOAD(b->abort)) return GS__BARRIER_ABORT;
        if ((i & 15) == 15) {
            now = gs__now_us();
            if (now - t0 >= yield_us) break;
            if (deadline >= 0 && now >= deadline) return GS__BARRIER_TIMEOUT;
        }
        gs__yield();
    }
    gs__mutex_lock(&b->m);
    GS__ADD_SC(&b->sleepers, 1);
    for (;;) {
        if (GS__LOAD_SC(&b->gen) != gen) {
            r = GS__BARRIER_OK;
            break;
        }
        if (GS__LOAD_SC(b->abort)) {
            r = GS__BARRIER_ABORT;
            break;
        }
        now = gs__now_us();
        if (deadline >= 0 && now >= deadline) {
            r = GS__BARRIER_TIMEOUT;
            break;
        }
        /* sleep in slices of at most 100 ms: the wall clock may jump */
        gs__cond_wait_until(&b->c, &b->m, deadline >= 0 && deadline - now < 100000 ? deadline : now + 100000);
    }
    GS__ADD_SC(&b->sleepers, -1);
    gs__mutex_unlock(&b->m);
out:
    if (r == GS__BARRIER_OK) {
        *waited_us = gs__now_us() - t0;
        GS__STORE_RELAXED(&b->last_wait_us, *waited_us);
    }
    return r;
}
#endif /* !GSHARD_NO_THREADS */
