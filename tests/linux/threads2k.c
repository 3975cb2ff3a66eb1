/*
 * Two thousand threads in one process, alive at once: each counts itself
 * in, then waits on a condition variable until all are in; the main
 * thread then lets them all go and joins each, which returns its own
 * number; their tids were all different. Twice. On Petrel the
 * personality's usage (/proc/petrel) comes back after each round (see
 * procs1k.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include "lxtest.h"

#define N 2000
#define SLACK (128 * 1024)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER, all_in = PTHREAD_COND_INITIALIZER;
static int in, released;
static int tids[N];

static void *worker(void *arg)
{
    long i = (long)arg;
    tids[i] = (int)syscall(SYS_gettid);
    pthread_mutex_lock(&lock);
    if (++in == N)
        pthread_cond_signal(&all_in);
    while (!released)
        pthread_cond_wait(&go, &lock);
    pthread_mutex_unlock(&lock);
    return (void *)(i * 3);
}

static int cmp(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static int round_of(int r)
{
    static pthread_t t[N];
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    in = released = 0;
    int made = 0, err = 0;
    for (; made < N; made++)
        if ((err = pthread_create(&t[made], &attr, worker, (void *)(long)made)) != 0)
            break;
    printf("round %d: made %d threads%s%s\n", r, made, made < N ? ", then " : "", made < N ? errname(err) : "");
    pthread_mutex_lock(&lock);
    while (in < made)
        pthread_cond_wait(&all_in, &lock);
    int waiting = in;
    released = 1;
    pthread_cond_broadcast(&go);
    pthread_mutex_unlock(&lock);
    printf("round %d: all in and waiting at once: %d\n", r, waiting);
    int joined = 0, right = 0;
    for (int i = 0; i < made; i++) {
        void *ret;
        if (pthread_join(t[i], &ret) == 0) {
            joined++;
            right += (long)ret == (long)i * 3;
        }
    }
    qsort(tids, (size_t)made, sizeof(tids[0]), cmp);
    int distinct = made > 0;
    for (int i = 1; i < made; i++)
        distinct += tids[i] != tids[i - 1];
    printf("round %d: joined %d, each with its own result %d, distinct tids %d\n", r, joined, right, distinct);
    return made == N && joined == N && right == N && distinct == N;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct petrel_usage before, after1, after2;
    petrel_usage_read(&before);
    int ok = round_of(1);
    int back1 = petrel_usage_back(&before, &after1, SLACK);
    ok &= round_of(2);
    int back2 = petrel_usage_back(&after1, &after2, SLACK);
    printf("the personality's usage back after each round: %d %d\n", back1, back2);
    return ok && back1 && back2 ? 0 : 1;
}
