/* MAP_SHARED anonymous memory: one copy for a process and the children
 * it forks (both ways, after the fork too, grandchildren, PROT_NONE at
 * first), unlike MAP_PRIVATE; and MAP_FIXED_NOREPLACE. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "lxtest.h"

#define PAGE 4096

static int status_of(pid_t pid)
{
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    char *s = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mapped: %d %d\n", s != MAP_FAILED, p != MAP_FAILED);
    s[0] = 1, p[0] = 1;
    int go[2], back[2];
    pipe(go);
    pipe(back);
    pid_t pid = fork();
    if (pid == 0) {
        char b;
        printf("child sees the shared byte written before the fork: %d\n", s[0]);
        s[1] = 2, s[PAGE] = 3, p[1] = 2;
        write(back[1], "x", 1);
        read(go[0], &b, 1);                     /* the parent writes meanwhile */
        printf("child sees the parent's write after the fork: %d, not the private one: %d\n", s[2], p[2]);
        _exit(0);
    }
    char b;
    read(back[0], &b, 1);
    printf("parent sees the child's writes: %d %d, not the private one: %d\n", s[1], s[PAGE], p[1]);
    s[2] = 4, p[2] = 4;
    write(go[1], "x", 1);
    printf("child's status: %d\n", status_of(pid));

    /* A grandchild writes; all three see it. */
    if ((pid = fork()) == 0) {
        pid_t g = fork();
        if (g == 0) {
            s[3] = 5;
            _exit(0);
        }
        int gs = status_of(g);
        _exit(gs == 0 && s[3] == 5 ? 1 : 2);
    }
    printf("grandchild's write: the child saw it %d, the parent sees it %d\n", status_of(pid) == 1, s[3] == 5);

    /* PROT_NONE at first, opened in each process after the fork. */
    char *n = mmap(NULL, PAGE, PROT_NONE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if ((pid = fork()) == 0) {
        mprotect(n, PAGE, PROT_READ | PROT_WRITE);
        n[0] = 7;
        _exit(0);
    }
    status_of(pid);
    mprotect(n, PAGE, PROT_READ | PROT_WRITE);
    printf("PROT_NONE shared memory opened later: %d\n", n[0]);

    /* MAP_SHARED_VALIDATE is for files (anonymous memory: EINVAL in Linux
     * 6.1); a piece of shared memory unmapped leaves the rest shared. */
    char *v = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_ANONYMOUS, -1, 0);
    printf("MAP_SHARED_VALIDATE of anonymous memory: %s\n", v == MAP_FAILED ? errname(errno) : "mapped");
    v = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    munmap(v, PAGE);
    if ((pid = fork()) == 0) {
        v[PAGE] = 8;
        _exit(0);
    }
    status_of(pid);
    printf("the second page of shared memory, the first unmapped: %d\n", v[PAGE]);
    mprotect(s, PAGE, PROT_READ);
    if ((pid = fork()) == 0) {
        s[PAGE + 1] = 9;                        /* the second page is still writable */
        _exit(s[0] == 1 ? 0 : 1);
    }
    printf("read-only first page, written second page: %d %d\n", status_of(pid), s[PAGE + 1]);

    /* MAP_FIXED_NOREPLACE: only where nothing is mapped. */
    char *a = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(a, 0x33, 3 * PAGE);
    munmap(a + PAGE, PAGE);
    char *r = mmap(a + PAGE, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    printf("MAP_FIXED_NOREPLACE into the hole: %s, zeros %d\n", r == a + PAGE ? "there" : errname(errno),
           r == a + PAGE && r[0] == 0);
    r = mmap(a, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    printf("over a mapping: %s\n", r == MAP_FAILED ? errname(errno) : "mapped");
    r = mmap(a + 2 * PAGE, 2 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    printf("partly over a mapping: %s\n", r == MAP_FAILED ? errname(errno) : "mapped");
    r = mmap(a, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_FIXED_NOREPLACE, -1, 0);
    printf("with MAP_FIXED too: %s\n", r == MAP_FAILED ? errname(errno) : "mapped");
    r = mmap(a + 1, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    printf("unaligned: %s\n", r == MAP_FAILED ? errname(errno) : "mapped");
    printf("the mapping is untouched: %d %d\n", a[0] == 0x33, a[2 * PAGE] == 0x33);
    char *free_at = mmap(NULL, 2 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(free_at, 2 * PAGE);
    r = mmap(free_at, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    printf("shared, where nothing is: %s\n", r == free_at ? "there" : errname(errno));
    if ((pid = fork()) == 0) {
        r[0] = 10;
        _exit(0);
    }
    status_of(pid);
    printf("and shared: %d\n", r[0]);
    return 0;
}
