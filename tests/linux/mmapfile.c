/* mmap of files (private): contents, offsets, a private copy that
 * writes do not leak from, past the end of the file, fork sharing the
 * copy-on-write pages; mprotect splitting mappings and munmap of pieces. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lxtest.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int fd = open("/etc/hello.txt", O_RDONLY);
    char *m = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
    printf("mapped: %d, first line: %.10s\n", m != MAP_FAILED, m);
    printf("bytes past the end of the file read 0: %d\n", m[100] == 0 && m[4095] == 0);
    char *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    w[0] = 'J';
    char again[8] = { 0 };
    pread(fd, again, 5, 0);
    printf("a private write: mapping %.5s, file %.5s, other mapping %.5s\n", w, again, m);
    SHOW("a shared writable mapping of a read-only file", (long)mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                                                      MAP_SHARED, fd, 0));
    int wo = open("/tmp/mmapfile-wo", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    SHOW("a private mapping of a write-only descriptor", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, wo, 0));
    close(wo);
    unlink("/tmp/mmapfile-wo");
    SHOW("an offset that is not page aligned", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 100));
    int dir = open("/data", O_RDONLY);
    SHOW("mmap of a directory", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, dir, 0));
    SHOW("mmap of a bad descriptor", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 77, 0));
    int bin = open("/bin/hello", O_RDONLY);
    char *e = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, bin, 4096);
    char head[4];
    pread(bin, head, 4, 4096);
    printf("an offset of one page: %d\n", e != MAP_FAILED && !memcmp(e, head, 4));

    /* fork: the child sees the parent's private copy, writes its own. */
    pid_t pid = fork();
    if (pid == 0) {
        printf("child sees %.5s\n", w);
        w[1] = 'X';
        _exit(w[1] == 'X' ? 0 : 1);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("child status %d, parent still %.5s\n", WEXITSTATUS(st), w);

    /* mprotect splits a mapping into pieces with their own rights. */
    uint8_t *a = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < 8; i++)
        a[i * 4096] = (uint8_t)i;
    SHOW("mprotect pages 2-3 read-only", mprotect(a + 2 * 4096, 2 * 4096, PROT_READ));
    SHOW("mprotect page 5 none", mprotect(a + 5 * 4096, 4096, PROT_NONE));
    SHOW("mprotect not aligned", mprotect(a + 1, 4096, PROT_READ));
    SHOW("mprotect with bad bits", mprotect(a, 4096, 0x100));
    SHOW("mprotect of unmapped memory", mprotect((void *)0x100000000000ul, 4096, PROT_READ));
    SHOW("mprotect of zero bytes", mprotect(a, 0, PROT_READ));
    pid = fork();
    if (pid == 0) {
        a[0] = 9;                               /* still writable */
        a[2 * 4096] = 9;                        /* read-only: the child dies of SIGSEGV */
        _exit(0);
    }
    waitpid(pid, &st, 0);
    printf("writing a read-only piece: signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    pid = fork();
    if (pid == 0) {
        volatile uint8_t x = a[5 * 4096];       /* PROT_NONE */
        (void)x;
        _exit(0);
    }
    waitpid(pid, &st, 0);
    printf("reading a PROT_NONE piece: signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    printf("the pieces kept their contents: %d %d %d %d\n", a[0], a[2 * 4096], a[3 * 4096], a[7 * 4096]);
    SHOW("page 5 back to read-write", mprotect(a + 5 * 4096, 4096, PROT_READ | PROT_WRITE));
    printf("page 5 kept its contents: %d\n", a[5 * 4096]);
    SHOW("munmap the middle page 3", munmap(a + 3 * 4096, 4096));
    pid = fork();
    if (pid == 0) {
        volatile uint8_t x = a[3 * 4096];
        (void)x;
        _exit(0);
    }
    waitpid(pid, &st, 0);
    printf("reading an unmapped page: signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    SHOW("mprotect across the hole", mprotect(a, 8 * 4096, PROT_READ));
    SHOW("munmap all of it", munmap(a, 8 * 4096));
    char *n = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    SHOW("a PROT_NONE mapping made writable", mprotect(n, 4096, PROT_READ | PROT_WRITE));
    n[10] = 1;
    printf("and it is zeroed memory: %d %d\n", n[0], n[10]);
    /* A big reservation costs nothing until a piece of it is opened. */
    char *big = mmap(NULL, 1ul << 34, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    printf("16 GiB reserved: %d\n", big != MAP_FAILED);
    SHOW("a page in its middle opened", mprotect(big + (1ul << 33), 4096, PROT_READ | PROT_WRITE));
    big[(1ul << 33) + 5] = 7;
    printf("it holds %d\n", big[(1ul << 33) + 5]);
    SHOW("the reservation unmapped", munmap(big, 1ul << 34));
    return 0;
}
