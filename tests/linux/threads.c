/*
 * Threads (pthreads over clone with CLONE_THREAD): shared memory and
 * descriptors, a mutex and a condition variable, join values, gettid,
 * thread-local storage, a signal to one thread (pthread_kill), per-thread
 * signal masks, fork and exec from a thread, and exit_group from a thread.
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define WORKERS 4
#define ROUNDS  20000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long counter;
static __thread int tls_value = 7;
static int tids_differ, pids_same, tls_ok;

/* pthread_create, or the reason it failed and the end of the test (on
 * Linux it never fails here; a join of a thread never made would hang). */
static void spawn(pthread_t *t, void *(*fn)(void *), void *arg)
{
    int e = pthread_create(t, NULL, fn, arg);
    if (e) {
        printf("pthread_create failed: %s\n", strerror(e));
        exit(1);
    }
}


static void *worker(void *arg)
{
    long id = (long)arg;
    if (gettid_() != getpid())
        __atomic_add_fetch(&tids_differ, 1, __ATOMIC_SEQ_CST);
    if (syscall(SYS_getpid) == getpid())
        __atomic_add_fetch(&pids_same, 1, __ATOMIC_SEQ_CST);
    tls_value = (int)id * 100;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
    }
    if (tls_value == (int)id * 100)
        __atomic_add_fetch(&tls_ok, 1, __ATOMIC_SEQ_CST);
    return (void *)(id * 11);
}

/* Producer and consumer over a condition variable. */
static int queue[8], head, count, produced_sum, consumed_sum;

static void *producer(void *arg)
{
    (void)arg;
    for (int i = 1; i <= 100; i++) {
        pthread_mutex_lock(&lock);
        while (count == 8)
            pthread_cond_wait(&cond, &lock);
        queue[(head + count++) % 8] = i;
        produced_sum += i;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++) {
        pthread_mutex_lock(&lock);
        while (count == 0)
            pthread_cond_wait(&cond, &lock);
        consumed_sum += queue[head];
        head = (head + 1) % 8;
        count--;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

/* pthread_kill: the handler runs in the thread it was sent to. */
static volatile long handler_tid;
static volatile int target_ready, target_go;
static long target_tid;

static void on_usr1(int sig) { (void)sig; handler_tid = gettid_(); }

static void *target(void *arg)
{
    (void)arg;
    target_tid = gettid_();
    target_ready = 1;
    while (!handler_tid)
        usleep(1000);
    return NULL;
}

/* A thread that takes SIGUSR2 with sigwait while every other blocks it. */
static void *waiter(void *arg)
{
    (void)arg;
    sigset_t set;
    int sig = 0;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigwait(&set, &sig);
    return (void *)(long)sig;
}

static void *slow_exit_group(void *arg)
{
    (void)arg;
    usleep(20000);
    exit(7);                                    /* every thread of the process ends */
}

static void *exec_hello(void *arg)
{
    (void)arg;
    char *argv[] = { "/bin/hello", NULL };
    execv(argv[0], argv);
    return NULL;
}

static void *forker(void *arg)
{
    (void)arg;
    pid_t pid = fork();
    if (pid == 0)
        _exit(counter == WORKERS * ROUNDS ? 21 : 22);  /* the child: a copy of the memory */
    int status = 0;
    waitpid(pid, &status, 0);
    return (void *)(long)WEXITSTATUS(status);
}

static int threads_in_status(void)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY);
    long n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *t = strstr(buf, "Threads:");
    return t ? atoi(t + 8) : -1;
}

/* The thread count once it is `want` (or after 2 s, what it is then). */
static int settled_threads(int want)
{
    int n = threads_in_status();
    for (int i = 0; i < 200 && n != want; i++) {
        usleep(10000);
        n = threads_in_status();
    }
    return n;
}

static void *sleeper(void *arg)
{
    while (!*(volatile int *)arg)
        usleep(1000);
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    pthread_t t[WORKERS];
    for (long i = 0; i < WORKERS; i++)
        spawn(&t[i], worker, (void *)i);
    long sum = 0;
    for (int i = 0; i < WORKERS; i++) {
        void *r;
        pthread_join(t[i], &r);
        sum += (long)r;
    }
    printf("counter %ld (expected %d)\n", counter, WORKERS * ROUNDS);
    printf("join values sum %ld\n", sum);
    printf("tids differ from the pid in %d, getpid same in %d, tls kept in %d\n", tids_differ, pids_same, tls_ok);
    printf("main tls %d, main tid is pid: %d\n", tls_value, gettid_() == getpid());

    pthread_t p, c1, c2;
    spawn(&p, producer, NULL);
    spawn(&c1, consumer, NULL);
    spawn(&c2, consumer, NULL);
    pthread_join(p, NULL);
    pthread_join(c1, NULL);
    pthread_join(c2, NULL);
    printf("produced %d consumed %d\n", produced_sum, consumed_sum);

    signal(SIGUSR1, on_usr1);
    pthread_t tg;
    spawn(&tg, target, NULL);
    while (!target_ready)
        usleep(1000);
    SHOW("pthread_kill", pthread_kill(tg, SIGUSR1));
    pthread_join(tg, NULL);
    printf("handler ran in the target thread: %d\n", handler_tid == target_tid);
    SHOW("tgkill with a wrong tgid", syscall(SYS_tgkill, getpid() + 100000, target_tid, 0));
    /* (Not the ended thread's tid: Linux frees it a little after waking the joiner.) */

    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    pthread_t w;
    spawn(&w, waiter, NULL);     /* inherits the mask: SIGUSR2 blocked */
    usleep(20000);
    kill(getpid(), SIGUSR2);                    /* to the process: the waiter takes it */
    void *wr;
    pthread_join(w, &wr);
    printf("sigwait in a thread took signal %ld\n", (long)wr);
    sigpending(&set);
    printf("SIGUSR2 still pending in main: %d\n", sigismember(&set, SIGUSR2));

    /* A joined thread may linger a moment on Linux (its tid word is cleared
     * before it is gone): wait for the count to settle first. */
    volatile int stop = 0;
    pthread_t s1, s2;
    printf("alone before: %d\n", settled_threads(1));
    spawn(&s1, sleeper, (void *)&stop);
    spawn(&s2, sleeper, (void *)&stop);
    printf("threads in /proc/self/status: %d\n", threads_in_status());
    stop = 1;
    pthread_join(s1, NULL);
    pthread_join(s2, NULL);
    printf("after joining: %d\n", settled_threads(1));

    pthread_t f;
    void *fr;
    spawn(&f, forker, NULL);
    pthread_join(f, &fr);
    printf("fork from a thread: child exit %ld\n", (long)fr);

    pid_t pid = fork();
    if (pid == 0) {
        pthread_t e;
        spawn(&e, slow_exit_group, NULL);
        pause();
        _exit(1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("exit from a thread ends the process: exited %d status %d\n", WIFEXITED(status), WEXITSTATUS(status));

    pid = fork();
    if (pid == 0) {
        pthread_t e;
        spawn(&e, exec_hello, NULL);
        pause();
        _exit(1);
    }
    waitpid(pid, &status, 0);
    printf("exec from a thread: exited %d status %d\n", WIFEXITED(status), WEXITSTATUS(status));

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int made = 0;
    for (int i = 0; i < 20; i++) {
        pthread_t d;
        stop = 1;
        if (pthread_create(&d, &attr, sleeper, (void *)&stop) == 0)
            made++;
    }
    printf("detached threads made %d\n", made);
    usleep(50000);
    printf("main thread exits with pthread_exit\n");
    pthread_exit(NULL);                         /* the process ends with its last thread: status 0 */
}
