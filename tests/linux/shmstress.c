/* Random operations on files mapped MAP_SHARED (and MAP_PRIVATE), for
 * survival: mmap of 8 open files and of 100 more opened for the call
 * (some unlinked at once), with random lengths, offsets and protections;
 * ftruncate up to past the file system's size, pwrite and pread, loads
 * and stores anywhere in the mappings (SIGBUS and SIGSEGV caught),
 * mprotect, mremap, MADV_DONTNEED, write() from a mapping, forked
 * children storing into every mapping, unlink while mapped. Only
 * survival is compared (the counts are masked), and that all the space
 * comes back once everything is unmapped and unlinked. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include "lxtest.h"

#define PAGE    4096l
#define FILES   8
#define NAMES   100
#define MAPS    100

static sigjmp_buf env;
static volatile int armed;
static long faults;
static struct { char *a; size_t len; } maps[MAPS];

/* A fault in touch() goes back there; any other ends the program. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    if (!armed) {
        signal(sig, SIG_DFL);
        return;
    }
    armed = 0;
    faults++;
    siglongjmp(env, 1);
}

/* Load (or store) the byte at p, a fault counted. */
static void touch(volatile char *p, int store)
{
    if (sigsetjmp(env, 1) == 0) {
        armed = 1;
        if (store)
            *p = 'w';
        else
            (void)*p;
        armed = 0;
    }
}

static long rnd(long n)
{
    return n > 0 ? rand() % n : 0;
}

/* Map a random window of fd, or of a named file opened for the call,
 * into slot s; 0, or -1 if mmap failed. */
static int map_one(int s, int fd)
{
    char name[32];
    if (maps[s].a)
        munmap(maps[s].a, maps[s].len);
    maps[s].a = NULL;
    size_t len = (size_t)(rnd(64) + 1) * PAGE * (rnd(20) ? 1 : 1024);
    off_t off = rnd(16) * PAGE * (rnd(10) ? 1 : 4096);
    int prot = rnd(4) ? PROT_READ | PROT_WRITE : rnd(2) ? PROT_READ : PROT_NONE;
    snprintf(name, sizeof(name), "/tmp/shms-n%ld", rnd(NAMES));
    int own = rnd(2), f = own ? open(name, O_RDWR | O_CREAT, 0644) : fd;
    if (own && rnd(3) == 0)
        ftruncate(f, rnd(30000));
    char *a = mmap(NULL, len, prot, rnd(5) ? MAP_SHARED : MAP_PRIVATE, f, off);
    if (own) {
        close(f);
        if (rnd(4) == 0)
            unlink(name);
    }
    if (a == MAP_FAILED)
        return -1;
    maps[s].a = a;
    maps[s].len = len;
    return 0;
}

int main(int argc, char **argv)
{
    int ops = argc > 1 ? atoi(argv[1]) : 30000;
    struct sigaction sa = { 0 };
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGSEGV, &sa, NULL);
    struct statfs before, after;
    statfs("/tmp", &before);
    srand(7);
    char name[32], buf[8192];
    int fds[FILES];
    for (int i = 0; i < FILES; i++) {
        snprintf(name, sizeof(name), "/tmp/shms-%d", i);
        fds[i] = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
    }
    memset(buf, 'q', sizeof(buf));
    long failed = 0;
    for (int k = 0; k < ops; k++) {
        int i = (int)rnd(FILES), s = (int)rnd(MAPS);
        char *a = maps[s].a;
        long len = (long)maps[s].len;
        switch (rnd(12)) {
        case 0:
        case 1:
            failed += map_one(s, fds[i]) != 0;
            break;
        case 2:
            ftruncate(fds[i], rnd(3) ? rnd(80000) : rnd(48l << 20));
            break;
        case 3:
            pwrite(fds[i], buf, (size_t)rnd(sizeof(buf)), rnd(200000));
            break;
        case 4:
            pread(fds[i], buf, (size_t)rnd(sizeof(buf)), rnd(200000));
            break;
        case 5:
        case 6:
        case 7:
            if (a)
                touch(a + rnd(len), (int)rnd(2));
            break;
        case 8:
            if (a)
                mprotect(a, (size_t)(rnd(len / PAGE + 1) * PAGE), rnd(2) ? PROT_READ : PROT_READ | PROT_WRITE);
            break;
        case 9:
            if (a) {
                size_t to = (size_t)(rnd(64) + 1) * PAGE;
                char *b = mremap(a, (size_t)len, to, MREMAP_MAYMOVE);
                if (b != MAP_FAILED)
                    maps[s].a = b, maps[s].len = to;
            }
            break;
        case 10:
            if (rnd(20) == 0) {
                pid_t pid = fork();
                if (pid == 0) {
                    for (int j = 0; j < MAPS; j++)
                        if (maps[j].a)
                            touch(maps[j].a, 1);
                    _exit(0);
                }
                waitpid(pid, NULL, 0);
            } else if (a) {
                write(fds[i], a, (size_t)rnd(len));
            }
            break;
        default:
            if (rnd(2)) {
                snprintf(name, sizeof(name), "/tmp/shms-%d", i);
                close(fds[i]);
                unlink(name);
                fds[i] = open(name, O_RDWR | O_CREAT, 0644);
            } else if (a) {
                madvise(a, PAGE, MADV_DONTNEED);
            }
            break;
        }
    }
    for (int j = 0; j < MAPS; j++)
        if (maps[j].a)
            munmap(maps[j].a, maps[j].len);
    for (int i = 0; i < FILES; i++) {
        close(fds[i]);
        snprintf(name, sizeof(name), "/tmp/shms-%d", i);
        unlink(name);
    }
    for (int i = 0; i < NAMES; i++) {
        snprintf(name, sizeof(name), "/tmp/shms-n%d", i);
        unlink(name);
    }
    statfs("/tmp", &after);
    printf("%d random operations ~%ld faults, %ld mmap calls failed\n", ops, faults, failed);
    printf("all the space is back: %d\n", after.f_bfree == before.f_bfree);
    printf("shmstress: survived\n");
    return 0;
}
