/* msync: everything is in memory, so it only checks its flags and the
 * range, as Linux does (ENOMEM for unmapped pages); a store through a
 * shared file mapping is the file's before and after it. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include "lxtest.h"

#define PAGE 4096

int main(void)
{
    char *m = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    m[0] = 1;
    SHOW("MS_SYNC", msync(m, 2 * PAGE, MS_SYNC));
    SHOW("MS_ASYNC", msync(m, 2 * PAGE, MS_ASYNC));
    SHOW("MS_INVALIDATE", msync(m, 2 * PAGE, MS_INVALIDATE));
    SHOW("MS_ASYNC | MS_INVALIDATE", msync(m, 2 * PAGE, MS_ASYNC | MS_INVALIDATE));
    SHOW("MS_SYNC | MS_INVALIDATE", msync(m, 2 * PAGE, MS_SYNC | MS_INVALIDATE));
    SHOW("no flags", msync(m, 2 * PAGE, 0));
    SHOW("MS_ASYNC | MS_SYNC", msync(m, 2 * PAGE, MS_ASYNC | MS_SYNC));
    SHOW("flag 8", msync(m, 2 * PAGE, 8));
    SHOW("flag -1", msync(m, 2 * PAGE, -1));
    SHOW("an unaligned address", msync(m + 1, PAGE, MS_SYNC));
    SHOW("length 0", msync(m, 0, MS_SYNC));
    SHOW("length 100 (a page)", msync(m + PAGE, 100, MS_SYNC));
    SHOW("length -1 (rounds to 0)", msync(m, (size_t)-1, MS_SYNC));
    SHOW("a length past the end of memory", msync(m, (size_t)-2 * PAGE, MS_SYNC));
    SHOW("nothing mapped", msync((void *)0x3000000000, PAGE, MS_SYNC));
    SHOW("nothing mapped, MS_ASYNC", msync((void *)0x3000000000, PAGE, MS_ASYNC));
    SHOW("nothing mapped, length 0", msync((void *)0x3000000000, 0, MS_SYNC));
    munmap(m + PAGE, PAGE);
    SHOW("over a hole at the end", msync(m, 2 * PAGE, MS_SYNC));
    char *h = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(h + PAGE, PAGE);
    SHOW("over a hole in the middle", msync(h, 3 * PAGE, MS_SYNC));
    SHOW("over a hole in the middle, MS_ASYNC", msync(h, 3 * PAGE, MS_ASYNC));
    SHOW("starting in a hole, MS_ASYNC", msync(h + PAGE, 2 * PAGE, MS_ASYNC));
    SHOW("starting in a hole, MS_SYNC", msync(h + PAGE, 2 * PAGE, MS_SYNC));
    char *n = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    SHOW("PROT_NONE memory", msync(n, PAGE, MS_SYNC));
    int fd = open("/etc/hello.txt", O_RDONLY);
    char *f = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
    SHOW("a shared file mapping, MS_SYNC", msync(f, PAGE, MS_SYNC));
    SHOW("a shared file mapping, MS_INVALIDATE", msync(f, PAGE, MS_INVALIDATE));
    printf("still reads: %.12s\n", f);
    int wfd = open("/tmp/msync-file", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(wfd, "abcdef", 6);
    char *wf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, wfd, 0);
    wf[0] = 'X';
    char back[8] = { 0 };
    pread(wfd, back, 6, 0);
    printf("a store through a shared writable file mapping, read before msync: %s\n", back);
    SHOW("that mapping, MS_SYNC", msync(wf, PAGE, MS_SYNC));
    SHOW("that mapping, MS_ASYNC | MS_INVALIDATE", msync(wf, PAGE, MS_ASYNC | MS_INVALIDATE));
    pread(wfd, back, 6, 0);
    printf("read after: %s, the mapping: %.6s\n", back, wf);
    munmap(wf, PAGE);
    close(wfd);
    unlink("/tmp/msync-file");
    char *s = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    s[0] = 5;
    SHOW("shared memory", msync(s, PAGE, MS_SYNC));
    printf("kept: %d\n", s[0]);
    char *stack = (char *)((uintptr_t)&m & ~(uintptr_t)(PAGE - 1));
    SHOW("the stack", msync(stack, PAGE, MS_SYNC));
    return 0;
}
