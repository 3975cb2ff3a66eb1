/* Many mappings in one process: 20,000 separate one-page anonymous
 * mappings (read-only and read-write in turn, so that no two neighbours
 * merge into one range), each written or read, a sample checked again,
 * some three-page mappings cut in the middle by mprotect and munmap, a
 * child that checks its copies of all of them and writes its own, then
 * every mapping unmapped. With the argument "limit", then the limit of
 * mapped ranges (Linux's vm.max_map_count, 65530): one-page PROT_NONE
 * mappings with holes between them until mmap says ENOMEM; at the limit a
 * cut in the middle of a mapping fails too, and works again once they
 * are unmapped. (That part takes Linux about 10 s in QEMU, and the
 * oracle boots Linux once, within 120 s, for all its programs: it is left
 * out of that run.) */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lxtest.h"

#define N       20000
#define SPLITS  200
#define PAGE    4096
#define LIMIT_TRIES 70000

static char *maps[N];
static char *triple[SPLITS];

/* What page i of the many holds at byte `at` (read-write pages only). */
static char byte_of(int i, int at)
{
    return (char)(i * 7 + at + 1);
}

static int writable(int i)
{
    return (i & 1) == 0;
}

/* Map the N pages; how many were made. */
static int map_all(void)
{
    int made = 0;
    for (int i = 0; i < N; i++) {
        int prot = writable(i) ? PROT_READ | PROT_WRITE : PROT_READ;
        maps[i] = mmap(NULL, PAGE, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (maps[i] == MAP_FAILED)
            maps[i] = NULL;
        else
            made++;
    }
    return made;
}

/* Does page i read as it should (its bytes, or zeros for a read-only one)? */
static int page_good(int i)
{
    if (!maps[i])
        return 0;
    if (!writable(i))
        return maps[i][0] == 0 && maps[i][PAGE - 1] == 0 && maps[i][i % PAGE] == 0;
    return maps[i][0] == byte_of(i, 0) && maps[i][PAGE - 1] == byte_of(i, PAGE - 1) &&
           maps[i][i % PAGE] == byte_of(i, i % PAGE);
}

static void fill(int i)
{
    maps[i][0] = byte_of(i, 0);
    maps[i][PAGE - 1] = byte_of(i, PAGE - 1);
    maps[i][i % PAGE] = byte_of(i, i % PAGE);
}

/* Every page checked (the read-only ones every fourth: each read of a
 * fresh page costs a page); how many were right. */
static int check_all(void)
{
    int good = 0;
    for (int i = 0; i < N; i++)
        good += writable(i) || i % 8 == 1 ? page_good(i) : 1;
    return good;
}

/* 200 random pages checked again; how many were right. */
static int check_random(void)
{
    unsigned seed = 12345, good = 0;
    for (int k = 0; k < 200; k++) {
        seed = seed * 1103515245u + 12345u;
        int i = (int)((seed >> 8) % N) & ~1;    /* (a written page) */
        good += page_good(i);
    }
    return (int)good;
}

/* Three-page mappings, each page written, the middle one made read-only
 * (every other one) or unmapped (the rest): 0 or the failing step. */
static int split_triples(void)
{
    for (int k = 0; k < SPLITS; k++) {
        triple[k] = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (triple[k] == MAP_FAILED)
            return 1;
        for (int j = 0; j < 3; j++)
            triple[k][j * PAGE + 5] = (char)(k + j);
        int err = k & 1 ? munmap(triple[k] + PAGE, PAGE) : mprotect(triple[k] + PAGE, PAGE, PROT_READ);
        if (err)
            return 2;
    }
    return 0;
}

/* The triples still hold their bytes (the middle one where it stayed). */
static int triples_good(void)
{
    int good = 0;
    for (int k = 0; k < SPLITS; k++) {
        int ok = triple[k][5] == (char)k && triple[k][2 * PAGE + 5] == (char)(k + 2);
        if (!(k & 1))
            ok &= triple[k][PAGE + 5] == (char)(k + 1);
        good += ok;
    }
    return good;
}

/* A child checks its copies of everything and writes over some of its
 * own; its exit status is 0 if all was right. */
static int forked_check(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        int bad = check_all() != N || triples_good() != SPLITS;
        for (int i = 0; i < N; i += 200)
            maps[i][0] = 'c';
        for (int k = 0; k < SPLITS; k++)
            triple[k][5] = 'c';
        for (int i = 0; i < N; i += 200)
            bad |= maps[i][0] != 'c';
        _exit(bad);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static int unmap_all(void)
{
    int gone = 0;
    for (int i = 0; i < N; i++)
        gone += maps[i] && munmap(maps[i], PAGE) == 0;
    for (int k = 0; k < SPLITS; k++)
        munmap(triple[k], 3 * PAGE);
    return gone;
}

/* Map one-page PROT_NONE mappings a page apart (none may merge) until
 * mmap fails; how many, and the error in *err. */
static long fill_to_limit(char *base, int *err)
{
    long n = 0;
    *err = 0;
    for (; n < LIMIT_TRIES; n++) {
        char *want = base + 2 * n * PAGE;
        char *got = mmap(want, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (got == MAP_FAILED) {
            *err = errno;
            break;
        }
    }
    return n;
}

static void at_the_limit(void)
{
    char *base = (char *)0x2000000000ull;
    char *held = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int err;
    long n = fill_to_limit(base, &err);
    printf("PROT_NONE mappings made ~%ld, then %s\n", n, n == LIMIT_TRIES ? "none refused" : errname(err));
    printf("stopped within 100 of vm.max_map_count: %d\n", n > 65530 - 100 && n <= 65530);
    SHOW("mprotect in the middle at the limit", mprotect(held + PAGE, PAGE, PROT_READ));
    SHOW("munmap in the middle at the limit", munmap(held + PAGE, PAGE));
    long gone = 0;
    for (long i = 0; i < n; i++)
        gone += munmap(base + 2 * i * PAGE, PAGE) == 0;
    printf("all unmapped again: %d\n", gone == n);
    SHOW("mprotect in the middle afterwards", mprotect(held + PAGE, PAGE, PROT_READ));
    SHOW("munmap in the middle afterwards", munmap(held + PAGE, PAGE));
    munmap(held, 3 * PAGE);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("mapped %d separate pages\n", map_all());
    for (int i = 0; i < N; i += 2)
        if (maps[i])
            fill(i);
    printf("pages right: %d of %d\n", check_all(), N);
    printf("random pages right: %d of 200\n", check_random());
    printf("three-page mappings cut in the middle: %d\n", split_triples());
    printf("their pages right: %d of %d\n", triples_good(), SPLITS);
    printf("a child's check of its copies: %d\n", forked_check());
    printf("the parent's pages unchanged by the child: %d, %d\n", check_all() == N, triples_good() == SPLITS);
    printf("unmapped %d pages\n", unmap_all());
    char *again = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("a new mapping afterwards: %d\n", again != MAP_FAILED && again[0] == 0);
    if (argc > 1 && !strcmp(argv[1], "limit"))
        at_the_limit();
    return 0;
}
