/*
 * Threads made and ended in quick succession: rounds of a few threads
 * that end as soon as they start, the next made while the last is still
 * ending (so an ended thread's resources must be free for the next one
 * at once), then detached threads that end by themselves while more are
 * made. Every create must succeed, as on Linux.
 */
#include "lxtest.h"
#include <pthread.h>
#include <stdlib.h>

#define ROUNDS   500
#define PER      4
#define DETACHED 1000

static int ran;

static void *quick(void *arg)
{
    __atomic_add_fetch(&ran, 1, __ATOMIC_RELAXED);
    return arg;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int failed = 0, first_error = 0;
    long sum = 0;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_t t[PER];
        int made[PER];
        for (long i = 0; i < PER; i++) {
            int e = pthread_create(&t[i], NULL, quick, (void *)(i + 1));
            made[i] = e == 0;
            if (e) {
                failed++;
                first_error = first_error ? first_error : e;
            }
        }
        for (int i = 0; i < PER; i++) {
            void *v;
            if (made[i] && pthread_join(t[i], &v) == 0)
                sum += (long)v;
        }
    }
    printf("joinable: %d made, %d failed (%s), join values sum %ld\n", ROUNDS * PER - failed, failed,
           first_error ? strerror(first_error) : "none", sum);

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    failed = first_error = 0;
    __atomic_store_n(&ran, 0, __ATOMIC_SEQ_CST);
    for (int i = 0; i < DETACHED; i++) {
        pthread_t d;
        int e = pthread_create(&d, &attr, quick, NULL);
        if (e) {
            failed++;
            first_error = first_error ? first_error : e;
        }
    }
    /* Each detached thread has run once its count is in (waiting at most
     * ten seconds). */
    for (int i = 0; i < 10000 && __atomic_load_n(&ran, __ATOMIC_SEQ_CST) < DETACHED - failed; i++)
        usleep(1000);
    printf("detached: %d made, %d failed (%s), %s ran\n", DETACHED - failed, failed,
           first_error ? strerror(first_error) : "none",
           __atomic_load_n(&ran, __ATOMIC_SEQ_CST) == DETACHED - failed ? "all" : "not all");
    return 0;
}
