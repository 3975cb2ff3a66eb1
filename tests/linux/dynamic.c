/*
 * A program built four ways (tests/linux: musl static as every test here;
 * the Makefile adds dynamic-glibc, linked against Debian's arm64 glibc and
 * started by /lib/ld-linux-aarch64.so.1; dynamic-glibc-static; and
 * dynamic-musl, started by /lib/ld-musl-aarch64.so.1). It prints what
 * its C library and the interpreter did for it, the same on Linux and
 * Petrel whichever way it was built.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include "lxtest.h"

static int cmp(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static int exited;
static void at_exit(void)
{
    printf("atexit handler ran: %d\n", !exited);
}

extern char **environ;

int main(int argc, char **argv)
{
    printf("argv[0]: %s, argc %d\n", argv[0], argc);
    printf("an interpreter started it: %d\n", getauxval(AT_BASE) != 0);
    printf("PATH from the environment: %s\n", getenv("PATH") ? getenv("PATH") : "(none)");
    int v[] = { 5, 3, 9, 1, 7 };
    qsort(v, 5, sizeof(v[0]), cmp);
    printf("sorted: %d %d %d %d %d\n", v[0], v[1], v[2], v[3], v[4]);
    char buf[64];
    snprintf(buf, sizeof(buf), "%.3f %s %x", 3.14159, "fmt", 48879);
    printf("formatted: %s\n", buf);
    printf("strerror(ENOENT): %s\n", strerror(ENOENT));
    char *big = malloc(1 << 20);                /* past the heap's threshold: mmap */
    memset(big, 7, 1 << 20);
    printf("a 1 MiB malloc: %d\n", big[12345] == 7);
    free(big);
    char *small = malloc(100);
    strcpy(small, "heap");
    printf("a small malloc: %s\n", small);
    free(small);
    void *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mmap: %d\n", m != MAP_FAILED);
    printf("getpid > 0: %d\n", getpid() > 0);
    atexit(at_exit);
    printf("stdout is buffered and flushed at exit\n");
    return 0;
}
