/*
 * A hostile program's threads: one process makes threads until it is
 * refused (Petrel: the personality's per-process limit, EAGAIN; Linux: far
 * later, so the count is capped and marked varying), and then, while they
 * all still exist, another process can still make threads and fork.
 */
#include "lxtest.h"
#include <pthread.h>
#include <sys/wait.h>

#define CAP 200

static volatile int release;

static void *parked(void *arg)
{
    (void)arg;
    while (!release)
        usleep(2000);
    return NULL;
}

static void *nothing(void *arg)
{
    return arg;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    static pthread_t t[CAP];
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    int made = 0, err = 0;
    while (made < CAP && (err = pthread_create(&t[made], &attr, parked, NULL)) == 0)
        made++;
    printf("threads made until refused or %d: ~%d\n", CAP, made);
    printf("refused with EAGAIN or not refused: %d\n", made == CAP || err == EAGAIN);
    pid_t pid = fork();
    if (pid == 0) {
        int ok = 0;
        for (long i = 0; i < 4; i++) {
            pthread_t x;
            void *r = NULL;
            if (pthread_create(&x, NULL, nothing, (void *)i) == 0 && pthread_join(x, &r) == 0 && (long)r == i)
                ok++;
        }
        _exit(ok);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("another process meanwhile: threads that ran %d\n", WEXITSTATUS(status));
    release = 1;
    for (int i = 0; i < made; i++)
        pthread_join(t[i], NULL);
    pthread_t again;
    printf("after joining them all, a new thread: %d\n", pthread_create(&again, NULL, nothing, NULL) == 0);
    pthread_join(again, NULL);
    return 0;
}
