/* madvise: MADV_DONTNEED gives private anonymous memory back as zeros
 * (a private file mapping, and a program's data, its file's bytes again;
 * shared memory keeps its contents), the hints change nothing, MADV_FREE
 * only on anonymous memory, holes (ENOMEM after advising the rest), the
 * heap, the errors, and what a fork's child gets of ranges advised
 * MADV_DONTFORK (nothing) or MADV_WIPEONFORK (zeros), and undone. */
#include <setjmp.h>
#include <signal.h>
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "lxtest.h"

#define PAGE 4096

static char data[2 * PAGE] __attribute__((aligned(PAGE))) = { [0] = 1, [PAGE] = 2 };
static char bss[2 * PAGE] __attribute__((aligned(PAGE)));

static int all(const char *p, long n, char c)
{
    for (long i = 0; i < n; i++)
        if (p[i] != c)
            return 0;
    return 1;
}

static sigjmp_buf back;
static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(back, 1);
}

/* In a child: 0 if the byte at p cannot be read, else 1 + (its value == want). */
static int child_reads(volatile char *p, char want)
{
    signal(SIGSEGV, on_segv);
    if (sigsetjmp(back, 1))
        return 0;
    return 1 + (*p == want);
}

/* Fork and report what the child reads at p: "unmapped", "the same" or "other". */
static const char *after_fork(char *p, char want)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(child_reads(p, want));
    int st = 0;
    waitpid(pid, &st, 0);
    int r = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r == 0 ? "unmapped" : r == 2 ? "the same" : r == 1 ? "other bytes" : "died";
}

static void on_fork(void)
{
    char *m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(m, 'k', 3 * PAGE);
    SHOW("MADV_DONTFORK of the middle page", madvise(m + PAGE, PAGE, MADV_DONTFORK));
    printf("  a child reads it: %s; the pages beside it: %s, %s\n", after_fork(m + PAGE, 'k'),
           after_fork(m, 'k'), after_fork(m + 2 * PAGE, 'k'));
    SHOW("MADV_DOFORK", madvise(m + PAGE, PAGE, MADV_DOFORK));
    printf("  a child reads it: %s\n", after_fork(m + PAGE, 'k'));
    SHOW("MADV_WIPEONFORK of the last page", madvise(m + 2 * PAGE, PAGE, MADV_WIPEONFORK));
    printf("  a child reads zeros: %s; this process still 'k': %d\n", after_fork(m + 2 * PAGE, 0), m[2 * PAGE] == 'k');
    SHOW("MADV_KEEPONFORK", madvise(m + 2 * PAGE, PAGE, MADV_KEEPONFORK));
    printf("  a child reads it: %s\n", after_fork(m + 2 * PAGE, 'k'));
    char *s = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    SHOW("MADV_WIPEONFORK of shared memory", madvise(s, PAGE, MADV_WIPEONFORK));
    SHOW("MADV_DONTFORK of shared memory", madvise(s, PAGE, MADV_DONTFORK));
    int fd = open("/etc/hello.txt", O_RDONLY);
    char *f = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
    SHOW("MADV_WIPEONFORK of a file mapping", madvise(f, PAGE, MADV_WIPEONFORK));
    close(fd);
    munmap(f, PAGE);
    munmap(s, PAGE);
    munmap(m, 3 * PAGE);

    /* The heap grown after MADV_DONTFORK of its top page: the new page is
     * not part of the advised range (a child gets it). */
    char *b = (char *)syscall(SYS_brk, 0);
    b = (char *)(((uintptr_t)b + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
    if ((char *)syscall(SYS_brk, b + PAGE) == b + PAGE) {
        memset(b, 'h', PAGE);
        SHOW("MADV_DONTFORK of the heap's top page", madvise(b, PAGE, MADV_DONTFORK));
        syscall(SYS_brk, b + 2 * PAGE);
        memset(b + PAGE, 'g', PAGE);
        printf("  a child reads the page the heap grew by: %s; the advised one: %s\n", after_fork(b + PAGE, 'g'),
               after_fork(b, 'h'));
        syscall(SYS_brk, b);
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    char *m = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(m, 0x55, 4 * PAGE);
    SHOW("MADV_DONTNEED of 4 pages", madvise(m, 4 * PAGE, MADV_DONTNEED));
    printf("  they read as zeros: %d\n", all(m, 4 * PAGE, 0));
    memset(m, 0x55, 4 * PAGE);
    SHOW("MADV_DONTNEED of the second page", madvise(m + PAGE, PAGE, MADV_DONTNEED));
    printf("  first kept %d, second zeros %d, third and fourth kept %d\n", all(m, PAGE, 0x55), all(m + PAGE, PAGE, 0),
           all(m + 2 * PAGE, 2 * PAGE, 0x55));
    m[PAGE + 5] = 9;
    printf("  and writable again: %d\n", m[PAGE + 5] == 9);
    SHOW("MADV_DONTNEED of 100 bytes (a page)", madvise(m + 2 * PAGE, 100, MADV_DONTNEED));
    printf("  the whole page is zeros: %d, the next kept: %d\n", all(m + 2 * PAGE, PAGE, 0), all(m + 3 * PAGE, PAGE, 0x55));
    static const struct { int advice; const char *name; } hints[] = {
        { MADV_NORMAL, "MADV_NORMAL" }, { MADV_RANDOM, "MADV_RANDOM" }, { MADV_SEQUENTIAL, "MADV_SEQUENTIAL" },
        { MADV_WILLNEED, "MADV_WILLNEED" }, { MADV_DONTDUMP, "MADV_DONTDUMP" }, { MADV_DODUMP, "MADV_DODUMP" },
        { MADV_COLD, "MADV_COLD" }, { MADV_PAGEOUT, "MADV_PAGEOUT" }, { MADV_FREE, "MADV_FREE" },
    };
    memset(m, 0x66, 4 * PAGE);
    for (unsigned i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
        SHOW(hints[i].name, madvise(m, 4 * PAGE, hints[i].advice));
    printf("  the hints kept the contents: %d\n", all(m, 4 * PAGE, 0x66));

    /* Errors. */
    SHOW("an unaligned address", madvise(m + 1, PAGE, MADV_DONTNEED));
    SHOW("advice 999", madvise(m, PAGE, 999));
    SHOW("advice -1", madvise(m, PAGE, -1));
    SHOW("advice 5 (none)", madvise(m, PAGE, 5));
    SHOW("length 0", madvise(m, 0, MADV_DONTNEED));
    SHOW("length 0 of nothing mapped", madvise((void *)0x3000000000, 0, MADV_DONTNEED));
    SHOW("length -1", madvise(m, (size_t)-1, MADV_DONTNEED));
    SHOW("a length past the end of memory", madvise(m, (size_t)-2 * PAGE, MADV_DONTNEED));
    SHOW("nothing mapped", madvise((void *)0x3000000000, PAGE, MADV_DONTNEED));
    SHOW("nothing mapped, a hint", madvise((void *)0x3000000000, PAGE, MADV_NORMAL));

    /* A hole: the mapped parts are advised, then ENOMEM. */
    char *h = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(h + PAGE, PAGE);
    h[0] = 1, h[2 * PAGE] = 1;
    SHOW("MADV_DONTNEED over a hole", madvise(h, 3 * PAGE, MADV_DONTNEED));
    printf("  both sides zeroed anyway: %d %d\n", h[0] == 0, h[2 * PAGE] == 0);
    SHOW("MADV_NORMAL over a hole", madvise(h, 3 * PAGE, MADV_NORMAL));
    SHOW("a range that ends in a hole", madvise(h, 2 * PAGE, MADV_WILLNEED));
    SHOW("a range that starts in a hole", madvise(h + PAGE, 2 * PAGE, MADV_WILLNEED));

    /* PROT_NONE and read-only memory. */
    char *n = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    SHOW("MADV_DONTNEED of PROT_NONE memory", madvise(n, PAGE, MADV_DONTNEED));
    char *ro = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ro[0] = 3;
    mprotect(ro, PAGE, PROT_READ);
    SHOW("MADV_DONTNEED of read-only memory", madvise(ro, PAGE, MADV_DONTNEED));
    printf("  reads zero: %d\n", ro[0] == 0);

    /* A private file mapping: its bytes come back from the file. */
    int fd = open("/etc/hello.txt", O_RDONLY);
    char *f = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    memcpy(f, "changed", 7);
    printf("changed privately: %.12s\n", f);
    SHOW("MADV_DONTNEED of the file mapping", madvise(f, PAGE, MADV_DONTNEED));
    printf("  the file's bytes again: %.12s\n", f);
    SHOW("MADV_WILLNEED of it", madvise(f, PAGE, MADV_WILLNEED));
    SHOW("MADV_FREE of it", madvise(f, PAGE, MADV_FREE));

    /* Shared memory keeps its contents; MADV_FREE is refused. */
    char *s = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    s[0] = 7;
    SHOW("MADV_DONTNEED of shared memory", madvise(s, PAGE, MADV_DONTNEED));
    printf("  kept: %d\n", s[0] == 7);
    SHOW("MADV_FREE of shared memory", madvise(s, PAGE, MADV_FREE));

    /* The program's data from its file again; its .bss as zeros. */
    data[0] = 9, data[PAGE] = 9;
    SHOW("MADV_DONTNEED of the program's data", madvise(data + PAGE, PAGE, MADV_DONTNEED));
    printf("  the first page keeps 9: %d, the second has its file's 2: %d\n", data[0], data[PAGE]);
    bss[0] = 5, bss[PAGE] = 5;
    SHOW("MADV_DONTNEED of the program's .bss", madvise(bss, 2 * PAGE, MADV_DONTNEED));
    printf("  zeros: %d %d\n", bss[0], bss[PAGE]);

    /* The heap: a piece given back reads as zeros; the rest and later growth are fine. */
    char *brk0 = (char *)syscall(SYS_brk, 0);
    char *heap = (char *)(((uintptr_t)brk0 + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
    syscall(SYS_brk, heap + 3 * PAGE);
    memset(heap, 0x77, 3 * PAGE);
    SHOW("MADV_DONTNEED of a heap page", madvise(heap + PAGE, PAGE, MADV_DONTNEED));
    printf("  zeros %d, its neighbours kept %d %d\n", all(heap + PAGE, PAGE, 0), all(heap, PAGE, 0x77),
           all(heap + 2 * PAGE, PAGE, 0x77));
    SHOW("MADV_DONTNEED of the whole heap", madvise(heap, 3 * PAGE, MADV_DONTNEED));
    printf("brk grows on: %d\n", (char *)syscall(SYS_brk, heap + 6 * PAGE) == heap + 6 * PAGE);
    memset(heap + 3 * PAGE, 0x44, 3 * PAGE);
    printf("  the old part zeros %d, the new part written %d\n", all(heap, 3 * PAGE, 0), all(heap + 3 * PAGE, 3 * PAGE, 0x44));
    printf("brk back down and up: %d\n", (char *)syscall(SYS_brk, heap + PAGE) == heap + PAGE &&
           (char *)syscall(SYS_brk, heap + 4 * PAGE) == heap + 4 * PAGE);
    printf("  the regrown part is zeros: %d\n", all(heap + PAGE, 3 * PAGE, 0));

    /* A fork after MADV_DONTNEED: the child has the same view. */
    memset(m, 0x11, PAGE);
    madvise(m, PAGE, MADV_DONTNEED);
    pid_t pid = fork();
    if (pid == 0)
        _exit(all(m, PAGE, 0) && all(m + 3 * PAGE, PAGE, 0x66) ? 1 : 2);
    int st;
    waitpid(pid, &st, 0);
    printf("the child sees the same: %d\n", WEXITSTATUS(st));
    on_fork();
    return 0;
}
