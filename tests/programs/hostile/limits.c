/* A process to be killed as a whole (attack 8), and one that runs into
 * every one of its limits at once (9). */
#include "hostile_int.h"

#define LIMITS_MAX  256     /* objects of one kind, if never refused */

static volatile uint32_t park_word;

static void parked(void *arg)
{
    sys_futex_wait((uint64_t)&park_word, 0, 0);
}

static void spinning(void *arg)
{
    volatile uint64_t *counter = arg;
    for (;;)
        (*counter)++;
}

/* A thread in a space this process makes, spinning at priority 50 on
 * the counter NESTED_COUNTER of "shm": ending the process must end it. */
static int64_t nested_spinner(void)
{
    int64_t s = sys_space_create();
    uint32_t code;
    uint8_t *p = mem_alloc(4096, 0, &code);
    if (s < 0 || !p)
        return s < 0 ? s : -E_NOMEM;
    memcpy(p, spin_code, (size_t)(spin_code_end - spin_code));
    int64_t err = sys_mem_map((uint32_t)s, code, 0x200000, 0, 4096, R_READ | R_EXEC);
    if (!err)
        err = sys_mem_map((uint32_t)s, start_handle("shm"), 0x300000, 0, 4096, R_READ | R_WRITE);
    int64_t t = err ? err : sys_thread_create((uint32_t)s, FOREIGN_UTCB);
    err = t < 0 ? t : sys_thread_set_priority((uint32_t)t, 50);
    return err ? err : sys_thread_start((uint32_t)t, 0x200000, 0, 0x300000 + 8 * NESTED_COUNTER);
}

/*
 * Attack 8: n=N threads spread over cpus=C cores, every fourth one
 * spinning on a counter in "shm" (the test watches them), the others
 * parked on a futex, and with nest=1 a spinning thread in a space of
 * its own making too; then report the number started and wait in the
 * report call for good: the test ends the process with space_kill.
 */
void attack_park(void)
{
    unsigned n = (unsigned)start_arg_u64("n", 16), cpus = (unsigned)start_arg_u64("cpus", 1);
    uint64_t va = va_alloc(4096, 4096);
    int64_t err = sys_mem_map(self_space(), start_handle("shm"), va, 0, 4096, R_READ | R_WRITE);
    volatile uint64_t *counters = (volatile uint64_t *)va;
    unsigned started = 0;
    for (unsigned i = 0; !err && i < n; i++) {
        bool spin = i % 4 == 3;
        int64_t t = thread_spawn(spin ? spinning : parked, spin ? (void *)&counters[i / 4] : NULL, 50,
                                 (int)(i % (cpus ? cpus : 1)));
        started += t > 0;
    }
    if (!err && start_arg_u64("nest", 0))
        err = nested_spinner();
    report(started, (uint64_t)err, 0, 0, 0, 0);
    for (;;)
        sys_futex_wait((uint64_t)&park_word, 0, 0);
}

/* Usage of each kind by this process (and the spaces it made). */
static void usage(uint64_t u[LIMIT_KINDS])
{
    for (unsigned k = 0; k < LIMIT_KINDS; k++)
        u[k] = (uint64_t)sys_space_usage(self_space(), k);
}

/* Eager objects of `size` mapped here until refused (or LIMITS_MAX of
 * them); the refusal. */
static int64_t fill_memory(uint64_t size)
{
    for (int i = 0; i < LIMITS_MAX; i++) {
        int64_t m = sys_mem_create(size, MEM_EAGER);
        if (m < 0)
            return m;
        int64_t err = sys_mem_map(self_space(), (uint32_t)m, va_alloc(size, 4096), 0, size, R_READ);
        sys_handle_close((uint32_t)m);      /* the mapping keeps it */
        if (err)
            return err;
    }
    return 0;
}

/*
 * Attack 9. The first report gives the usage of each kind; the test sets
 * the limits before it answers. Then: spaces to the limit, a thread in
 * one of them and threads here to the thread limit (threads in its
 * spaces count as its own), endpoints to the handle limit (a handle
 * given into its space counts too), eager memory to the memory limit,
 * a duplicate handle (no memory) to the handle limit again. At every
 * limit at once it reports what stopped each step, which calls are
 * refused now and whether it can raise or remove a limit of its own,
 * then its usage against its limits; the test works meanwhile.
 */
void attack_limits(void)
{
    uint32_t me = self_space();
    uint64_t u[LIMIT_KINDS], lim[LIMIT_KINDS];
    usage(u);
    if (report(u[LIMIT_MEMORY], u[LIMIT_THREADS], u[LIMIT_HANDLES], u[LIMIT_SPACES], 0, 0) != 0)
        return;                                 /* the test could not set the limits */
    for (unsigned k = 0; k < LIMIT_KINDS; k++)
        lim[k] = (uint64_t)sys_space_usage(me, k | LIMIT_QUERY_MAX);

    int64_t s1 = sys_space_create(), s2 = sys_space_create();
    int64_t space_err = s1 < 0 ? s1 : s2 < 0 ? s2 : sys_space_create();
    int64_t t1 = s1 > 0 ? sys_thread_create((uint32_t)s1, FOREIGN_UTCB) : s1;
    int64_t thread_err = t1 < 0 ? t1 : 0;
    for (int i = 0; !thread_err && i < LIMITS_MAX; i++) {
        int64_t t = sys_thread_create(me, va_alloc(4096, 4096));
        thread_err = t < 0 ? t : 0;
    }
    int64_t ep = 0, handle_err = 0;
    for (int i = 0; !handle_err && i < LIMITS_MAX; i++) {
        int64_t e = sys_endpoint_create();
        handle_err = e < 0 ? e : 0;
        ep = e > 0 ? e : ep;
    }
    int64_t give_err = ep > 0 ? sys_handle_give((uint32_t)s1, (uint32_t)ep, R_READ) : -E_BADHANDLE;
    sys_handle_close((uint32_t)ep);         /* one handle free: for each memory object a moment */
    int64_t mem_err = fill_memory(0x10000);
    if (mem_err == -E_LIMIT)
        mem_err = fill_memory(0x1000);
    int64_t dup = sys_handle_dup(me, R_READ, 0);    /* no memory needed: the table is full again */

    /* Now: each kind of call refused, and no way to lift a limit. */
    unsigned refused = 0, perm = 0;
    refused |= (sys_space_create() == -E_LIMIT) << 0;
    refused |= (sys_thread_create(me, va_alloc(4096, 4096)) == -E_LIMIT) << 1;
    refused |= (sys_handle_dup(me, R_READ, 0) == -E_LIMIT) << 2;
    refused |= (sys_endpoint_create() == -E_LIMIT) << 3;
    refused |= (sys_mem_create(0x1000, MEM_EAGER) == -E_LIMIT) << 4;
    for (unsigned k = 0; k < LIMIT_KINDS; k++) {
        perm |= (sys_space_set_limit(me, k, lim[k] + 1) == -E_PERM) << k;
        perm |= (sys_space_set_limit(me, k, 0) == -E_PERM) << (k + 4);
    }
    report((uint64_t)space_err, (uint64_t)thread_err, (uint64_t)handle_err, (uint64_t)give_err,
           (uint64_t)mem_err, refused | perm << 8 | (uint64_t)(dup > 0) << 16);
    usage(u);
    report(u[LIMIT_MEMORY], lim[LIMIT_MEMORY], u[LIMIT_THREADS], u[LIMIT_HANDLES], u[LIMIT_SPACES],
           (uint64_t)sys_space_usage((uint32_t)s1, LIMIT_THREADS));

    /* The threads never started here go with the process (the test ends
     * it); the one in s1 would keep s1 alive. */
    sys_thread_kill((uint32_t)t1);
}
