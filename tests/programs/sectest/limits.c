/* Attacks 8 and 9: ending a process as a whole, and a process at every
 * one of its limits failing only its own calls. */
#include "sectest.h"

#define PARKED 16

static uint64_t sum(volatile const uint64_t *v, unsigned n)
{
    uint64_t s = 0;
    for (unsigned i = 0; i < n; i++)
        s += v[i];
    return s;
}

/* Attack 8: a child with threads parked on a futex and spinning on every
 * core, its main thread waiting in a call, is ended by space_kill. */
void test_space_kill(void)
{
    uint32_t shm;
    volatile uint64_t *counters = mem_alloc(4096, 0, &shm);
    struct usage before;
    usage_now(&before);
    char args[48];
    snprintf(args, sizeof(args), "mode=park n=%u cpus=%u", PARKED, ncpus);
    struct spawn_grant g = { "shm", shm, R_READ | R_WRITE };
    struct child c;
    uint64_t mr[6];
    child_spawn(&c, args, MiB(1), &g, 1);
    int64_t r = child_report(&c, mr, 10000);   /* never answered */
    uint64_t started = mr[0];
    uint64_t s0 = sum(counters, PARKED / 4);
    bool spinning = false;
    for (int i = 0; i < 100 && !spinning; i++) {    /* a loaded machine may be slow to run them */
        sleep_ms(10);
        spinning = sum(counters, PARKED / 4) != s0;
    }

    int64_t read_only = r ? r : sys_handle_dup(c.r.space, R_READ | R_DUP, 0);
    int64_t perm = read_only > 0 ? sys_space_kill((uint32_t)read_only) : read_only;
    int64_t root = sys_space_kill(self_space());
    tap_ok(perm == -E_PERM && root == -E_STATE, "kill: space_kill needs R_MANAGE (%s) and spares the root task (%s)",
           error_str(perm), error_str(root));

    int64_t killed = r ? r : sys_space_kill(c.r.space);
    int64_t left = sys_space_usage(c.r.space, LIMIT_THREADS);
    bool main_dead = thread_state(c.r.thread) == THREAD_DEAD;
    tap_ok(r == 0 && spinning && started == PARKED && killed == PARKED + 1 && left == 0 && main_dead,
           "kill: space_kill ends all %ld threads of a process on %u cores at once (%lu started, %ld left)",
           (long)killed, ncpus, (unsigned long)started, (long)left);
    uint64_t s1 = sum(counters, PARKED / 4);
    sleep_ms(50);
    uint64_t s2 = sum(counters, PARKED / 4);
    int64_t again = sys_space_kill(c.r.space);
    tap_ok(r == 0 && s1 == s2 && again == 0, "kill: none of its threads runs afterwards (%lu more spins; "
           "a second kill finds %ld)", (unsigned long)(s2 - s1), (long)again);
    if (read_only > 0)
        sys_handle_close((uint32_t)read_only);
    child_end(&c, 1000);
    check_usage_back("kill", &before);
    sys_mem_unmap(self_space(), (uint64_t)counters);
    sys_handle_close(shm);
    check_alive("kill");
}

/* Attack 8, nested: a process with a spinning thread in a space it made;
 * space_kill of the process must end that one too (its usage counts it,
 * and nobody else holds that space to end it later). */
void test_space_kill_nested(void)
{
    uint32_t shm;
    volatile uint64_t *counters = mem_alloc(4096, 0, &shm);
    struct usage before;
    usage_now(&before);
    struct spawn_grant g = { "shm", shm, R_READ | R_WRITE };
    struct child c;
    uint64_t mr[6];
    child_spawn(&c, "mode=park n=4 nest=1", MiB(1), &g, 1);
    int64_t r = child_report(&c, mr, 10000);   /* never answered */
    int64_t err = r ? r : (int64_t)mr[1];
    volatile uint64_t *nested = &counters[NESTED_COUNTER];
    uint64_t n0 = *nested;
    bool spinning = false;
    for (int i = 0; i < 100 && !spinning; i++) {    /* a loaded machine may be slow to run it */
        sleep_ms(10);
        spinning = *nested != n0;
    }
    int64_t killed = r ? r : sys_space_kill(c.r.space);
    int64_t left = sys_space_usage(c.r.space, LIMIT_THREADS);
    uint64_t n1 = *nested;
    sleep_ms(50);
    uint64_t n2 = *nested;
    tap_ok(err == 0 && spinning && killed > 0 && left == 0 && n1 == n2,
           "kill/nested: a process cannot outlive space_kill in a space it made (%ld killed, %ld left; "
           "its thread there counted %lu more)", (long)killed, (long)left, (unsigned long)(n2 - n1));
    child_end(&c, 1000);
    check_usage_back("kill/nested", &before);
    sys_mem_unmap(self_space(), (uint64_t)counters);
    sys_handle_close(shm);
    check_alive("kill/nested");
}

/* Threads, a handle, a space and memory, made and let go by the root
 * task while a child sits at its limits. */
static volatile int helper_ran;

static void helper(void *arg)
{
    helper_ran = 1;
}

static bool root_still_creates(void)
{
    helper_ran = 0;
    int64_t t = thread_spawn(helper, NULL, 120, -1);
    bool thread = t > 0 && wait_state((uint32_t)t, THREAD_DEAD, 2000) && helper_ran;
    int64_t ep = sys_endpoint_create();
    int64_t sp = sys_space_create();
    uint32_t m;
    volatile uint64_t *p = mem_alloc(KiB(256), MEM_EAGER, &m);
    bool mem = p && (p[0] = 7) == 7 && (p[KiB(256) / 8 - 1] = 8) == 8;
    if (t > 0)
        sys_handle_close((uint32_t)t);
    if (ep > 0)
        sys_handle_close((uint32_t)ep);
    if (sp > 0)
        sys_handle_close((uint32_t)sp);
    if (p) {
        sys_mem_unmap(self_space(), (uint64_t)p);
        sys_handle_close(m);
    }
    return thread && ep > 0 && sp > 0 && mem;
}

/* Attack 9: a child with small limits of every kind reaches them all. */
void test_limits(void)
{
    struct usage before;
    usage_now(&before);
    struct child c;
    uint64_t mr[6];
    child_spawn(&c, "mode=limits", 0, NULL, 0);
    int64_t r = child_report(&c, mr, 5000);
    uint64_t lim[LIMIT_KINDS] = { mr[0] + KiB(256), mr[1] + 3, mr[2] + 8, 2 };
    bool set = r == 0;
    for (unsigned k = 0; set && k < LIMIT_KINDS; k++)
        set = sys_space_set_limit(c.r.space, k, lim[k]) >= 0 &&
              sys_space_usage(c.r.space, k | LIMIT_QUERY_MAX) == (int64_t)lim[k];
    child_answer(&c, set ? 0 : 1);              /* 1: give up */

    r = set ? child_result(&c, mr, 10000) : -E_INVAL;
    int64_t space_err = (int64_t)mr[0], thread_err = (int64_t)mr[1], handle_err = (int64_t)mr[2];
    int64_t give_err = (int64_t)mr[3], mem_err = (int64_t)mr[4];
    unsigned refused = mr[5] & 0xff, perm = (mr[5] >> 8) & 0xff, dup = (mr[5] >> 16) & 1;
    tap_ok(r == 0 && space_err == -E_LIMIT && thread_err == -E_LIMIT && handle_err == -E_LIMIT && mem_err == -E_LIMIT,
           "limits: a process reaches its space, thread, handle and memory limits with E_LIMIT (%s, %s, %s, %s)",
           error_str(r ? r : space_err), error_str(thread_err), error_str(handle_err), error_str(mem_err));
    tap_ok(r == 0 && refused == 0x1f && dup, "limits: at all of them at once, each kind of call of its own is refused "
           "(refused: 0x%x of 0x1f)", refused);
    tap_ok(r == 0 && perm == 0xff, "limits: it can neither raise nor remove a limit of its own (E_PERM: 0x%x of 0xff)",
           perm);

    r = r ? r : child_report(&c, mr, 5000);    /* it waits at its limits while we work */
    struct usage during;
    usage_now(&during);
    bool works = r == 0 && root_still_creates();
    child_answer(&c, 0);
    uint64_t mem = mr[0], mem_lim = mr[1];
    tap_ok(r == 0 && mr[2] == lim[LIMIT_THREADS] && mr[3] == lim[LIMIT_HANDLES] && mr[4] == 2 &&
           mem <= mem_lim && mem + KiB(16) > mem_lim,
           "limits: its usage is at its limits (threads %lu/%lu, handles %lu/%lu, spaces %lu/2, memory %lu/%lu KiB)",
           (unsigned long)mr[2], (unsigned long)lim[LIMIT_THREADS], (unsigned long)mr[3],
           (unsigned long)lim[LIMIT_HANDLES], (unsigned long)mr[4], (unsigned long)(mem >> 10),
           (unsigned long)(mem_lim >> 10));
    tap_ok(r == 0 && mr[5] == 1 && give_err == -E_LIMIT &&
           during.of[LIMIT_SPACES] - before.of[LIMIT_SPACES] == 3,
           "limits: usage is hierarchical: a thread (%lu) and a handle (%s) in a space it made count as its own, "
           "and ours counts its spaces (%ld of 3)", (unsigned long)mr[5], error_str(give_err),
           (long)(during.of[LIMIT_SPACES] - before.of[LIMIT_SPACES]));
    tap_ok(works, "limits: meanwhile the root task creates threads, handles, spaces and memory");
    child_end(&c, 2000);
    check_usage_back("limits", &before);
    check_alive("limits");
}
