/* mremap: shrinking, growing in place, moving (MREMAP_MAYMOVE) with the
 * contents, MREMAP_FIXED, MREMAP_DONTUNMAP, shared memory moved and still
 * shared, a file mapping, realloc of a large block, and the errors. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "lxtest.h"

#define PAGE 4096

/* Is the page at p mapped? (msync says ENOMEM for a page that is not.) */
static int mapped(void *p)
{
    return msync(p, PAGE, MS_ASYNC) == 0;
}

/* Page i of a pattern holds i + 1 in every byte. */
static void fill(char *p, int pages)
{
    for (int i = 0; i < pages; i++)
        memset(p + (long)i * PAGE, i + 1, PAGE);
}

static int holds(const char *p, int pages)
{
    for (int i = 0; i < pages; i++)
        for (int k = 0; k < PAGE; k++)
            if (p[(long)i * PAGE + k] != i + 1)
                return 0;
    return 1;
}

static int zeros(const char *p, long n)
{
    for (long i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

static long show_addr(const char *what, void *r, void *expect)
{
    if (r == MAP_FAILED)
        printf("%s: %s\n", what, errname(errno));
    else
        printf("%s: %s\n", what, r == expect ? "at the address expected" : expect ? "somewhere else" : "moved");
    return r == MAP_FAILED ? -1 : 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    /* 16 pages to work in (reserved, so that nothing else is placed
     * there), 4 of them mapped at first. */
    char *area = mmap(NULL, 16 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(area + 4 * PAGE, PAGE);
    char *m = mmap(area, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    fill(m, 4);
    show_addr("shrink 4 pages to 2", mremap(m, 4 * PAGE, 2 * PAGE, 0), m);
    printf("  kept %d, the third page gone %d\n", holds(m, 2), !mapped(m + 2 * PAGE));
    show_addr("grow 2 pages to 3 in place", mremap(m, 2 * PAGE, 3 * PAGE, 0), m);
    printf("  kept %d, the new page zeros %d\n", holds(m, 2), zeros(m + 2 * PAGE, PAGE));
    m[2 * PAGE] = 3;
    show_addr("grow to 3 pages and 1 byte (4 pages)", mremap(m, 3 * PAGE, 3 * PAGE + 1, 0), m);
    printf("  the fourth page mapped: %d\n", mapped(m + 3 * PAGE));
    show_addr("shrink by a byte (no change)", mremap(m, 4 * PAGE, 4 * PAGE - 1, 0), m);
    show_addr("the same size", mremap(m, 4 * PAGE, 4 * PAGE, 0), m);
    fill(m, 4);

    /* Something in the way: no growing without MREMAP_MAYMOVE. */
    char *block = mmap(m + 4 * PAGE, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    show_addr("grow into a mapping", mremap(m, 4 * PAGE, 6 * PAGE, 0), m);
    char *moved = mremap(m, 4 * PAGE, 6 * PAGE, MREMAP_MAYMOVE);
    show_addr("grow with MREMAP_MAYMOVE", moved, NULL);
    printf("  contents moved %d, the tail zeros %d, the old place unmapped %d, the mapping in the way kept %d\n",
           holds(moved, 4), zeros(moved + 4 * PAGE, 2 * PAGE), !mapped(m), mapped(block));
    moved[5 * PAGE] = 6;
    printf("  the tail writable: %d\n", moved[5 * PAGE] == 6);

    /* MREMAP_FIXED: to an address of our choosing, replacing what was there. */
    char *target = area + 8 * PAGE;
    char *there = mmap(target, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    memset(there, 0x7e, 4 * PAGE);
    fill(moved, 4);
    show_addr("MREMAP_FIXED of 2 pages", mremap(moved, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, target),
              target);
    printf("  contents %d, what was there after them kept %d, the old place unmapped %d, the rest of the old "
           "mapping kept %d\n", holds(target, 2), there[2 * PAGE] == 0x7e, !mapped(moved),
           moved[2 * PAGE] == 3 && mapped(moved + 5 * PAGE));
    show_addr("MREMAP_FIXED growing 1 page to 3", mremap(moved + 2 * PAGE, PAGE, 3 * PAGE,
                                                         MREMAP_MAYMOVE | MREMAP_FIXED, area + 13 * PAGE),
              area + 13 * PAGE);
    printf("  contents %d, new pages zeros %d\n", area[13 * PAGE] == 3, zeros(area + 14 * PAGE, 2 * PAGE));
    show_addr("MREMAP_FIXED shrinking 2 pages to 1", mremap(target, 2 * PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
                                                            area + 5 * PAGE), area + 5 * PAGE);
    printf("  contents %d, the old second page gone %d\n", area[5 * PAGE] == 1, !mapped(target + PAGE));

    /* MREMAP_DONTUNMAP: the old range stays, as fresh memory. */
    char *d = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    fill(d, 2);
    char *dn = mremap(d, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
    show_addr("MREMAP_DONTUNMAP", dn, NULL);
    printf("  contents moved %d, the old range still mapped %d and zeros %d\n", holds(dn, 2), mapped(d),
           zeros(d, 2 * PAGE));

    /* Errors. */
    show_addr("flag 8", mremap(d, PAGE, PAGE, 8), d);
    show_addr("MREMAP_FIXED without MREMAP_MAYMOVE", mremap(d, PAGE, PAGE, MREMAP_FIXED, target), target);
    show_addr("MREMAP_DONTUNMAP without MREMAP_MAYMOVE", mremap(d, PAGE, PAGE, MREMAP_DONTUNMAP), d);
    show_addr("MREMAP_DONTUNMAP changing the size", mremap(d, PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP), d);
    show_addr("an unaligned address", mremap(d + 1, PAGE, PAGE, 0), d);
    show_addr("a new length of 0", mremap(d, PAGE, 0, 0), d);
    show_addr("MREMAP_FIXED to an unaligned address", mremap(d, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, target + 1),
              target);
    show_addr("MREMAP_FIXED onto itself", mremap(d, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, d + PAGE), d);
    show_addr("growing what is not mapped", mremap((void *)0x3000000000, PAGE, 2 * PAGE, MREMAP_MAYMOVE), NULL);
    show_addr("moving what is not mapped", mremap((void *)0x3000000000, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
                                                  target), target);
    show_addr("shrinking what is not mapped", mremap((void *)0x3000000000, 2 * PAGE, PAGE, 0), (void *)0x3000000000);
    char *two = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(two + PAGE, PAGE, PROT_READ);
    show_addr("growing across two protections", mremap(two, 2 * PAGE, 4 * PAGE, MREMAP_MAYMOVE), two);
    show_addr("growing past the end of a mapping", mremap(two + PAGE, 2 * PAGE, 4 * PAGE, MREMAP_MAYMOVE), two);
    show_addr("an old length of 0 (private memory)", mremap(two, 0, PAGE, MREMAP_MAYMOVE), two);
    /* Huge lengths, by the system call (musl refuses lengths past
     * PTRDIFF_MAX itself with ENOMEM). */
    show_addr("shrinking from a huge old length", (void *)syscall(SYS_mremap, two, 1ul << 62, PAGE, 0, 0), two);
    show_addr("shrinking from an old length past the end of memory",
              (void *)syscall(SYS_mremap, two, -4ul * PAGE, PAGE, 0, 0), two);
    show_addr("growing to 2^62 bytes", (void *)syscall(SYS_mremap, two, PAGE, 1ul << 62, MREMAP_MAYMOVE, 0), two);
    show_addr("growing to a length past the end of memory",
              (void *)syscall(SYS_mremap, two, PAGE, -4ul * PAGE, MREMAP_MAYMOVE, 0), two);
    show_addr("growing to 2^62 bytes in place", (void *)syscall(SYS_mremap, two, PAGE, 1ul << 62, 0, 0), two);
    show_addr("a new length that rounds to 0", (void *)syscall(SYS_mremap, two, PAGE, -1ul, MREMAP_MAYMOVE, 0), two);
    show_addr("growing from a huge old length", (void *)syscall(SYS_mremap, two, 1ul << 62, 1ul << 63,
                                                                MREMAP_MAYMOVE, 0), two);
    show_addr("MREMAP_FIXED to the end of memory", (void *)syscall(SYS_mremap, two, PAGE, PAGE,
                                                                   MREMAP_MAYMOVE | MREMAP_FIXED, -1ul * PAGE), two);
    show_addr("musl's mremap to 2^63 bytes", mremap(two, PAGE, 1ul << 63, MREMAP_MAYMOVE), two);
    printf("the first page still there: %d\n", mapped(two));

    /* Shared memory moved stays shared with a child. */
    char *s = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pid_t pid = fork();
    if (pid == 0) {
        char *c = mremap(s, PAGE, 3 * PAGE, MREMAP_MAYMOVE);
        c[0] = 42;
        _exit(c == MAP_FAILED ? 2 : 1);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("a child moved and wrote the shared page: status %d, the parent sees it %d\n", WEXITSTATUS(st), s[0] == 42);
    char *s2 = mremap(s, PAGE, 2 * PAGE, MREMAP_MAYMOVE);
    if ((pid = fork()) == 0) {
        s2[1] = 43;
        _exit(0);
    }
    waitpid(pid, &st, 0);
    printf("moved in the parent, still shared: %d %d\n", s2[0] == 42, s2[1] == 43);

    /* A private file mapping keeps its bytes. */
    int fd = open("/etc/hello.txt", O_RDONLY);
    char *f = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
    char *fm = mremap(f, PAGE, 2 * PAGE, MREMAP_MAYMOVE);
    printf("a file mapping grown: %s, %.12s\n", fm == MAP_FAILED ? errname(errno) : "ok", fm == MAP_FAILED ? "" : fm);

    /* A large block: musl's realloc moves it with mremap. */
    char *big = malloc(1 << 20);
    for (int i = 0; i < 1 << 20; i += 4096)
        big[i] = (char)(i >> 12);
    big = realloc(big, 4 << 20);
    int same = big != NULL;
    for (int i = 0; same && i < 1 << 20; i += 4096)
        same = big[i] == (char)(i >> 12);
    big[(4 << 20) - 1] = 1;
    printf("realloc of 1 MiB to 4 MiB keeps it: %d\n", same);
    big = realloc(big, 2 << 20);
    printf("and to 2 MiB: %d\n", big && big[4096] == 1);
    free(big);
    return 0;
}
