/*
 * Many sleeping threads and one that calls: N threads (default 100) each
 * in a loop of 2 ms sleeps (usleep), while the first thread, after 2 s,
 * reads the monotonic clock in a loop for 1 s. It prints how long making
 * the threads took, how many sleeps they all ended (ideally N * 500 a
 * second, over the 3 s: N * 1,500) and how many clock reads the first
 * thread made in its second. A measuring tool for development, not an
 * oracle program: its counts depend on the machine. On several cores it
 * shows whether a system serves a calling thread while it wakes many
 * sleepers (docs/design/personality.md, "Several cores"):
 *     ./petrel run --smp 2 --system linux-kernel --exec 'sleepers 100'
 *     ./petrel run --smp 2 --linux --exec 'sleepers 100'
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 1024

static volatile int stop;
static long counts[MAX_THREADS];

static void *sleeper(void *arg)
{
    long i = (long)arg;
    while (!stop) {
        usleep(2000);
        counts[i]++;
    }
    return NULL;
}

static long ns_between(const struct timespec *a, const struct timespec *b)
{
    return (b->tv_sec - a->tv_sec) * 1000000000L + (b->tv_nsec - a->tv_nsec);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    if (n < 0 || n > MAX_THREADS) {
        fprintf(stderr, "usage: sleepers [THREADS, 0..%d]\n", MAX_THREADS);
        return 2;
    }
    static pthread_t t[MAX_THREADS];
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int made = 0;
    while (made < n && pthread_create(&t[made], &attr, sleeper, (void *)(long)made) == 0)
        made++;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double make_s = ns_between(&t0, &t1) / 1e9;
    sleep(2);
    long reads = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        reads++;
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while (ns_between(&t0, &t1) < 1000000000L);
    stop = 1;
    long total = 0;
    for (int i = 0; i < made; i++) {
        pthread_join(t[i], NULL);
        total += counts[i];
    }
    printf("sleepers: %d threads made in %.3f s; sleeps ended %ld (ideal %ld); the first thread's clock reads in 1 s: %ld\n",
           made, make_s, total, (long)made * 1500, reads);
    return made == n ? 0 : 1;
}
