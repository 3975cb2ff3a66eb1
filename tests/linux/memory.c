/* The heap and anonymous mappings. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lxtest.h"
#include <sys/wait.h>

/* Three pages of read-only data: one of them is wholly in it, no code there. */
static const uint8_t ro_table[3 * 4096] = { [0 ... 3 * 4096 - 1] = 7 };

int main(void)
{
    /* musl's sbrk only reports the break: move it with the system call. */
    char *cur = (char *)syscall(SYS_brk, 0);
    printf("brk is page aligned: %d\n", ((uintptr_t)cur & 4095) == 0);
    char *grown = (char *)syscall(SYS_brk, cur + 100000);
    printf("brk grows: %d\n", grown == cur + 100000);
    memset(cur, 0x5a, 100000);
    printf("new heap writable: %d\n", cur[99999] == 0x5a);
    printf("brk below the start is refused: %d\n", (char *)syscall(SYS_brk, cur - 4096) == grown);
    printf("brk back down: %d\n", (char *)syscall(SYS_brk, cur) == cur);
    printf("brk up again: %d\n", (char *)syscall(SYS_brk, cur + 8192) == cur + 8192);
    printf("heap memory comes back zeroed: %d\n", cur[100] == 0 && cur[8000] == 0);
    printf("brk to an odd address: %d\n", (char *)syscall(SYS_brk, cur + 8193) == cur + 8193);
    char *small = malloc(100), *big = malloc(4 << 20);
    printf("malloc: %d %d\n", small != NULL, big != NULL);
    memset(big, 1, 4 << 20);
    free(big);
    free(small);
    uint8_t *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mmap 1 MiB: %d page aligned %d\n", m != MAP_FAILED, ((uintptr_t)m & 4095) == 0);
    int zero = 1;
    for (int i = 0; i < 1 << 20; i += 4096)
        zero &= m[i] == 0;
    printf("mmap memory is zero: %d\n", zero);
    m[12345] = 7;
    SHOW("munmap the middle", munmap(m + 4096, 8192));
    printf("the rest stays: %d %d\n", m[0] == 0, m[12345] == 7);
    SHOW("munmap the rest", munmap(m, 1 << 20));
    uint8_t *f = mmap(m, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    printf("MAP_FIXED at the same place: %d zero %d\n", f == m, f[0] == 0 && f[5000] == 0);
    void *again = mmap(m, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    printf("MAP_FIXED_NOREPLACE over it: %s\n", again == MAP_FAILED ? errname(errno) : "mapped");
    munmap(f, 8192);
    SHOW("mmap length 0", (long)mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    SHOW("mmap without a type", (long)mmap(NULL, 4096, PROT_READ, MAP_ANONYMOUS, -1, 0));
    SHOW("mmap unaligned offset", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 0, 5));
    SHOW("mmap 2^60 bytes", (long)mmap(NULL, 1ull << 60, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    SHOW("mmap a bad descriptor", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 99, 0));
    /* Linux's overcommit heuristic: memory that may be written, reserved
     * in one call, cannot be more than all there is (here 1 GiB, more than
     * either system has; xz -9 asks for 674 MiB); read-only, MAP_NORESERVE
     * or in parts, it can. */
    size_t gib = 1ul << 30;
    SHOW("mmap 1 GiB writable", (long)mmap(NULL, gib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    SHOW("mmap 1 GiB shared", (long)mmap(NULL, gib, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    void *ro = mmap(NULL, gib, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *nr = mmap(NULL, gib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    printf("mmap 1 GiB read-only: %d, with MAP_NORESERVE: %d\n", ro != MAP_FAILED, nr != MAP_FAILED);
    munmap(ro, gib);
    void *half = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    SHOW("mremap 64 MiB to 1 GiB", (long)mremap(half, 64 << 20, gib, MREMAP_MAYMOVE));
    char *heap = (char *)syscall(SYS_brk, 0);
    printf("brk 1 GiB further: %s\n", (char *)syscall(SYS_brk, heap + gib) == heap ? "refused" : "moved");
    memset(nr, 3, 4096);
    printf("a MAP_NORESERVE page written: %d\n", ((char *)nr)[4095]);
    munmap(nr, gib);
    munmap(half, 64 << 20);
    SHOW("munmap unaligned", munmap((void *)0x10001, 4096));
    SHOW("munmap length 0", munmap((void *)0x10000, 0));
    SHOW("munmap nothing mapped", munmap((void *)0x3000000000, 4096));
    int fd = open("/etc/hello.txt", 0);
    char *file = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    printf("file mapping: %.12s\n", file == MAP_FAILED ? "failed" : file);
    /* A read into a buffer whose second page is gone stops at the page end. */
    char *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(two + 4096, 4096);
    lseek(fd, 0, SEEK_SET);
    SHOW("read across into an unmapped page", read(fd, two + 4096 - 10, 40));
    SHOW("read starting in an unmapped page", read(fd, two + 4096, 10));

    /* The program's own read-only pages made writable (a private file
     * mapping: the process gets its own copy), then read-only again. */
    uint8_t *page = (uint8_t *)(((uintptr_t)ro_table + 4095) & ~(uintptr_t)4095);
    printf("a read-only page of the program: %d\n", page[0] == 7 && page[4095] == 7);
    SHOW("mprotect it read-write", mprotect(page, 4096, PROT_READ | PROT_WRITE));
    page[0] = 42;
    page[4095] = 43;
    printf("written: %d %d, the next page still %d\n", page[0], page[4095], page[4096]);
    pid_t pid = fork();
    if (pid == 0) {
        printf("a child sees %d and writes its own\n", page[0]);
        page[0] = 99;
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("the parent keeps %d\n", page[0]);
    SHOW("mprotect it read-only again", mprotect(page, 4096, PROT_READ));
    printf("still %d\n", page[0]);
    return 0;
}
