/*
 * Priority-inheritance futexes and robust futex lists: FUTEX_LOCK_PI,
 * LOCK_PI2, TRYLOCK_PI and UNLOCK_PI on the word (the errors, a hand-over
 * between threads, a signal to a waiter, timeouts, an owner that ends
 * holding it), set and
 * get_robust_list with a list walked when its thread ends, and pthread's
 * robust and priority-inheritance mutexes across threads and processes.
 * Waits for another thread to block are given time (usleep), as in futex.
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

/* <linux/futex.h>'s values (the musl toolchain has no kernel headers). */
#define FUTEX_LOCK_PI           6
#define FUTEX_UNLOCK_PI         7
#define FUTEX_TRYLOCK_PI        8
#define FUTEX_LOCK_PI2          13
#define FUTEX_PRIVATE_FLAG      128
#define FUTEX_CLOCK_REALTIME    256
#define FUTEX_WAITERS           0x80000000u
#define FUTEX_OWNER_DIED        0x40000000u
#define FUTEX_TID_MASK          0x3fffffffu

static long futex(uint32_t *uaddr, int op, const struct timespec *ts)
{
    return syscall(SYS_futex, uaddr, op, 0, ts, NULL, 0);
}

static long tid_of_me(void)
{
    return syscall(SYS_gettid);
}

/* The word as who owns it and its two flags. */
static void show_word(const char *what, uint32_t w, long me, long other)
{
    long tid = w & FUTEX_TID_MASK;
    printf("%s: owner %s, waiters %d, died %d\n", what,
           tid == 0 ? "none" : tid == me ? "this thread" : tid == other ? "the other thread" : "another",
           !!(w & FUTEX_WAITERS), !!(w & FUTEX_OWNER_DIED));
}

/* A time `ms` from now on clock `clock`. */
static struct timespec in_ms(clockid_t clock, long ms)
{
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_nsec += ms * 1000000;
    t.tv_sec += t.tv_nsec / 1000000000;
    t.tv_nsec %= 1000000000;
    return t;
}

static uint32_t pw, pw2;
static volatile long other_tid;
static volatile int other_started, other_may_end;
static long other_r[4];
static uint32_t other_word[2];

static void errors(void)
{
    long me = tid_of_me();
    int op = FUTEX_PRIVATE_FLAG;
    SHOW("TRYLOCK_PI of a free word", futex(&pw, FUTEX_TRYLOCK_PI | op, NULL));
    show_word("  the word", pw, me, 0);
    SHOW("TRYLOCK_PI again", futex(&pw, FUTEX_TRYLOCK_PI | op, NULL));
    SHOW("LOCK_PI of a word it holds", futex(&pw, FUTEX_LOCK_PI | op, NULL));
    SHOW("UNLOCK_PI", futex(&pw, FUTEX_UNLOCK_PI | op, NULL));
    show_word("  the word", pw, me, 0);
    SHOW("UNLOCK_PI of a free word", futex(&pw, FUTEX_UNLOCK_PI | op, NULL));
    pw = FUTEX_WAITERS | (uint32_t)me;
    SHOW("UNLOCK_PI with the waiters bit and nobody waiting", futex(&pw, FUTEX_UNLOCK_PI | op, NULL));
    show_word("  the word", pw, me, 0);
    pw = 0x3ffffff0;
    SHOW("LOCK_PI of a word naming no thread", futex(&pw, FUTEX_LOCK_PI | op, NULL));
    SHOW("TRYLOCK_PI of it", futex(&pw, FUTEX_TRYLOCK_PI | op, NULL));
    SHOW("UNLOCK_PI of it", futex(&pw, FUTEX_UNLOCK_PI | op, NULL));
    pw = 0;
    SHOW("LOCK_PI of a misaligned word", futex((uint32_t *)((char *)&pw + 1), FUTEX_LOCK_PI | op, NULL));
    SHOW("LOCK_PI of NULL", futex(NULL, FUTEX_LOCK_PI | op, NULL));
    SHOW("UNLOCK_PI of NULL", futex(NULL, FUTEX_UNLOCK_PI | op, NULL));
    SHOW("LOCK_PI of a free word, shared", futex(&pw, FUTEX_LOCK_PI, NULL));
    SHOW("UNLOCK_PI, shared", futex(&pw, FUTEX_UNLOCK_PI, NULL));
    pw = FUTEX_OWNER_DIED;
    SHOW("LOCK_PI of a word whose owner died", futex(&pw, FUTEX_LOCK_PI | op, NULL));
    show_word("  the word", pw, me, 0);
    pw = 0;
}

/* Another thread waits for the word this one holds, then takes it over. */
static void *taker(void *arg)
{
    (void)arg;
    other_tid = tid_of_me();
    other_started = 1;
    other_r[0] = futex(&pw, FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
    other_word[0] = pw;
    other_r[1] = futex(&pw, FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
    other_word[1] = pw;
    return NULL;
}

static void hand_over(void)
{
    long me = tid_of_me();
    pthread_t th;
    other_started = 0;
    futex(&pw, FUTEX_TRYLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
    pthread_create(&th, NULL, taker, NULL);
    while (!other_started)
        usleep(1000);
    usleep(100000);
    show_word("held, another thread waiting", pw, me, other_tid);
    SHOW("UNLOCK_PI", futex(&pw, FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, NULL));
    pthread_join(th, NULL);
    printf("the other thread's LOCK_PI: %ld\n", other_r[0]);
    show_word("  the word it saw", other_word[0], me, other_tid);
    printf("its UNLOCK_PI: %ld\n", other_r[1]);
    show_word("  the word then", other_word[1], me, other_tid);
}

/* A signal to a thread waiting in LOCK_PI: its handler runs, then the
 * lock goes on (never EINTR, with or without SA_RESTART). */
static volatile int handled;
static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

static void signalled(void)
{
    long me = tid_of_me();
    pthread_t th;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;                    /* (no SA_RESTART) */
    sigaction(SIGUSR1, &sa, NULL);
    other_started = 0;
    handled = 0;
    futex(&pw, FUTEX_TRYLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
    pthread_create(&th, NULL, taker, NULL);
    while (!other_started)
        usleep(1000);
    usleep(50000);
    pthread_kill(th, SIGUSR1);
    usleep(50000);
    printf("a signal to the waiting thread: its handler ran %d\n", handled);
    SHOW("UNLOCK_PI", futex(&pw, FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, NULL));
    pthread_join(th, NULL);
    printf("its LOCK_PI: %ld\n", other_r[0]);
    show_word("  the word it saw", other_word[0], me, other_tid);
    signal(SIGUSR1, SIG_DFL);
}

/* Another thread's LOCK_PI with timeouts on each clock, the word held here. */
static void *timer(void *arg)
{
    (void)arg;
    int op = FUTEX_PRIVATE_FLAG;
    struct timespec rt = in_ms(CLOCK_REALTIME, 50), mono = in_ms(CLOCK_MONOTONIC, 50), past = { 1, 0 };
    errno = 0;
    other_r[0] = futex(&pw, FUTEX_LOCK_PI | op, &rt) == -1 ? errno : 0;
    other_r[1] = futex(&pw, FUTEX_LOCK_PI2 | op, &mono) == -1 ? errno : 0;
    rt = in_ms(CLOCK_REALTIME, 30);
    other_r[2] = futex(&pw, FUTEX_LOCK_PI2 | FUTEX_CLOCK_REALTIME | op, &rt) == -1 ? errno : 0;
    other_r[3] = futex(&pw, FUTEX_LOCK_PI | op, &past) == -1 ? errno : 0;
    return NULL;
}

static void timeouts(void)
{
    long me = tid_of_me();
    pthread_t th;
    futex(&pw, FUTEX_TRYLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
    pthread_create(&th, NULL, timer, NULL);
    pthread_join(th, NULL);
    printf("LOCK_PI until a CLOCK_REALTIME time: %s\n", errname((int)other_r[0]));
    printf("LOCK_PI2 until a CLOCK_MONOTONIC time: %s\n", errname((int)other_r[1]));
    printf("LOCK_PI2 with FUTEX_CLOCK_REALTIME: %s\n", errname((int)other_r[2]));
    printf("LOCK_PI until a time long past: %s\n", errname((int)other_r[3]));
    SHOW("UNLOCK_PI", futex(&pw, FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, NULL));
    show_word("  the word", pw, me, 0);
}

/* A thread that takes pw2 and ends holding it, when told. */
static void *holder(void *arg)
{
    (void)arg;
    other_tid = tid_of_me();
    futex(&pw2, FUTEX_TRYLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
    other_started = 1;
    while (!other_may_end)
        usleep(1000);
    return NULL;
}

static void *end_later(void *arg)
{
    (void)arg;
    usleep(100000);
    other_may_end = 1;
    return NULL;
}

static void owner_ends(void)
{
    long me = tid_of_me();
    pthread_t th, later;
    /* Nobody waits when it ends: the word still names it. */
    other_started = other_may_end = 0;
    pthread_create(&th, NULL, holder, NULL);
    while (!other_started)
        usleep(1000);
    other_may_end = 1;
    pthread_join(th, NULL);
    usleep(10000);
    SHOW("LOCK_PI of a word whose owner ended without waiters", futex(&pw2, FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, NULL));
    /* This thread waits when it ends: the lock comes here. */
    pw2 = 0;
    other_started = other_may_end = 0;
    pthread_create(&th, NULL, holder, NULL);
    while (!other_started)
        usleep(1000);
    pthread_create(&later, NULL, end_later, NULL);
    SHOW("LOCK_PI, the owner ending meanwhile", futex(&pw2, FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, NULL));
    show_word("  the word", pw2, me, other_tid);
    pthread_join(th, NULL);
    pthread_join(later, NULL);
    SHOW("UNLOCK_PI", futex(&pw2, FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, NULL));
}

/* A robust list by hand: a word this thread owns in it, one pending. */
struct entry {
    struct entry *next;
    uint32_t word;
};
static struct {
    struct entry *next;
    long offset;
    struct entry *pending;
} head;
static struct entry owned, owned_pi, other_owner;
static long got_len;
static void *got_head;

static void *listed(void *arg)
{
    (void)arg;
    uint32_t me = (uint32_t)tid_of_me();
    head.next = &owned;
    owned.next = (struct entry *)((uintptr_t)&owned_pi | 1);     /* the low bit: a PI word */
    owned_pi.next = &other_owner;
    other_owner.next = (struct entry *)&head;
    head.offset = (long)offsetof(struct entry, word);
    head.pending = NULL;
    owned.word = me;
    owned_pi.word = me | FUTEX_WAITERS;
    other_owner.word = 12345;
    other_r[0] = syscall(SYS_set_robust_list, &head, 23) == -1 ? errno : 0;
    other_r[1] = syscall(SYS_set_robust_list, &head, sizeof(head));
    other_r[2] = syscall(SYS_get_robust_list, 0, &got_head, &got_len);
    return NULL;
}

static void robust_lists(void)
{
    pthread_t th;
    pthread_create(&th, NULL, listed, NULL);
    pthread_join(th, NULL);
    printf("set_robust_list with a length of 23: %s\n", errname((int)other_r[0]));
    printf("set_robust_list: %ld, get_robust_list: %ld, its head: %d, length %ld\n", other_r[1], other_r[2],
           got_head == (void *)&head, got_len);
    show_word("after the thread ended: a word it owned", owned.word, 0, 0);
    show_word("  a PI word it owned", owned_pi.word, 0, 0);
    printf("  a word another thread owns: %u\n", other_owner.word);
    void *h = NULL;
    long len = 0;
    SHOW("get_robust_list of this thread", syscall(SYS_get_robust_list, 0, &h, &len));
    printf("  length %ld\n", len);
    SHOW("get_robust_list of no thread", syscall(SYS_get_robust_list, 0x3ffffff0, &h, &len));
    SHOW("get_robust_list into NULL", syscall(SYS_get_robust_list, 0, NULL, &len));
}

/* pthread's robust mutexes: an owner ending holding one. */
static pthread_mutex_t rm;
static void *lock_and_end(void *arg)
{
    pthread_mutex_lock((pthread_mutex_t *)arg);
    other_started = 1;
    while (!other_may_end)
        usleep(1000);
    return NULL;
}

static void robust_mutex(int protocol, const char *what)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    int e = pthread_mutexattr_setprotocol(&a, protocol);
    pthread_mutex_init(&rm, &a);
    pthread_t th, later;
    /* Taken after the owner ended. */
    other_started = other_may_end = 0;
    pthread_create(&th, NULL, lock_and_end, &rm);
    while (!other_started)
        usleep(1000);
    other_may_end = 1;
    pthread_join(th, NULL);
    int r = pthread_mutex_lock(&rm);
    printf("%s (%d): locked after its owner ended: %s\n", what, e, r ? errname(r) : "0");
    printf("  consistent %d, unlock %d", pthread_mutex_consistent(&rm), pthread_mutex_unlock(&rm));
    printf(", lock again %d, unlock %d\n", pthread_mutex_lock(&rm), pthread_mutex_unlock(&rm));
    /* Waited for while the owner ends. */
    other_started = other_may_end = 0;
    pthread_create(&th, NULL, lock_and_end, &rm);
    while (!other_started)
        usleep(1000);
    pthread_create(&later, NULL, end_later, NULL);
    r = pthread_mutex_lock(&rm);
    printf("  waited for while its owner ended: %s", r ? errname(r) : "0");
    printf(", consistent %d, unlock %d\n", pthread_mutex_consistent(&rm), pthread_mutex_unlock(&rm));
    pthread_join(th, NULL);
    pthread_join(later, NULL);
    pthread_mutex_destroy(&rm);
}

/* A process-shared robust mutex in shared memory, its owner a child that exits. */
static void shared_robust(void)
{
    pthread_mutex_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(m, &a);
    pid_t pid = fork();
    if (pid == 0) {
        pthread_mutex_lock(m);
        _exit(7);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    int r = pthread_mutex_lock(m);
    printf("a shared robust mutex, its owner a child that exited (%d): %s", WEXITSTATUS(st), r ? errname(r) : "0");
    printf(", consistent %d, unlock %d\n", pthread_mutex_consistent(m), pthread_mutex_unlock(m));
    munmap(m, 4096);
}

/* Two threads count under a priority-inheritance mutex. */
static pthread_mutex_t pim;
static long counted;
static void *count(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20000; i++) {
        pthread_mutex_lock(&pim);
        long c = counted;
        if ((i & 255) == 0)
            sched_yield();                      /* (let the other contend) */
        counted = c + 1;
        pthread_mutex_unlock(&pim);
    }
    return NULL;
}

static void pi_mutex(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    int e = pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
    pthread_mutex_init(&pim, &a);
    pthread_t t1, t2;
    pthread_create(&t1, NULL, count, NULL);
    pthread_create(&t2, NULL, count, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("a priority-inheritance mutex (%d): two threads counted to %ld\n", e, counted);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    errors();
    hand_over();
    signalled();
    timeouts();
    owner_ends();
    robust_lists();
    robust_mutex(PTHREAD_PRIO_NONE, "a robust mutex");
    robust_mutex(PTHREAD_PRIO_INHERIT, "a robust priority-inheritance mutex");
    shared_robust();
    pi_mutex();
    return 0;
}
