/* MAP_SHARED file mappings: writable ones of a file open for reading and
 * writing, coherent with read and write (both ways), with other mappings
 * of the file (the same process, a forked child, another process that
 * opened and mapped it itself), kept after munmap and close; ftruncate
 * growing and shrinking it (SIGBUS past the end), read and write between
 * the file and buffers anywhere (the mapping itself, a buffer running
 * into an unreachable page), unlink and rename while
 * mapped, a file of many pages, a private mapping taken after shared
 * stores, mprotect, mremap, msync, and the errors (EACCES, ENODEV,
 * EBADF, EINVAL). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "lxtest.h"

#define PAGE 4096

static sigjmp_buf env;
static volatile int got_sig, got_code, armed;
static void *volatile got_addr;

/* A fault in touch() goes back there; any other ends the program. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (!armed) {
        signal(sig, SIG_DFL);
        return;
    }
    armed = 0;
    got_sig = sig;
    got_code = si->si_code;
    got_addr = si->si_addr;
    siglongjmp(env, 1);
}

/* Read the byte at p (write it with `store`): "ok", or the signal, its
 * code and whether its address is p. */
static void touch(const char *what, volatile char *p, int store)
{
    got_sig = 0;
    if (sigsetjmp(env, 1) == 0) {
        armed = 1;
        if (store)
            *p = 'z';
        else
            (void)*p;
        armed = 0;
        printf("%s: ok\n", what);
        return;
    }
    printf("%s: signal %d code %d at the address %d\n", what, got_sig, got_code, got_addr == (void *)p);
}

static long size_of(int fd)
{
    struct stat st;
    return fstat(fd, &st) ? -1 : (long)st.st_size;
}

static int status_of(pid_t pid)
{
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The file's bytes [off, off + n) as read() gives them, printed. */
static void show_read(const char *what, int fd, long off, int n)
{
    char buf[64] = { 0 };
    long r = pread(fd, buf, (size_t)n, off);
    printf("%s: %ld \"%.*s\"\n", what, r, r > 0 ? (int)r : 0, buf);
}

static void errors(void)
{
    write_text("/tmp/shm-e", "some text\n");
    int ro = open("/tmp/shm-e", O_RDONLY), wo = open("/tmp/shm-e", O_WRONLY), rw = open("/tmp/shm-e", O_RDWR);
    int path = open("/tmp/shm-e", O_PATH), dir = open("/tmp", O_RDONLY);
    int pp[2], sv[2];
    pipe(pp);
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    SHOW("shared, writable, of a read-only descriptor", (long)mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0));
    SHOW("shared, read-only, of a write-only descriptor", (long)mmap(NULL, PAGE, PROT_READ, MAP_SHARED, wo, 0));
    SHOW("shared, writable, of a write-only descriptor",
         (long)mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, wo, 0));
    SHOW("private, of a write-only descriptor", (long)mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, wo, 0));
    SHOW("shared, of an O_PATH descriptor", (long)mmap(NULL, PAGE, PROT_READ, MAP_SHARED, path, 0));
    SHOW("shared, of a pipe's read end", (long)mmap(NULL, PAGE, PROT_READ, MAP_SHARED, pp[0], 0));
    SHOW("shared, of a pipe's write end", (long)mmap(NULL, PAGE, PROT_READ, MAP_SHARED, pp[1], 0));
    SHOW("shared, writable, of a pipe's write end",
         (long)mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, pp[1], 0));
    SHOW("shared, of a socket", (long)mmap(NULL, PAGE, PROT_READ, MAP_SHARED, sv[0], 0));
    SHOW("shared, of a directory", (long)mmap(NULL, PAGE, PROT_READ, MAP_SHARED, dir, 0));
    SHOW("shared, of a closed descriptor", (long)mmap(NULL, PAGE, PROT_READ, MAP_SHARED, 60, 0));
    SHOW("shared, length 0", (long)mmap(NULL, 0, PROT_READ, MAP_SHARED, rw, 0));
    SHOW("shared, an offset not page-aligned", (long)mmap(NULL, PAGE, PROT_READ, MAP_SHARED, rw, 100));
    SHOW("shared, an offset past the largest file", (long)mmap(NULL, PAGE, PROT_READ, MAP_SHARED, rw,
                                                                0x7ffffffffffff000));
    SHOW("private, an offset past the largest file", (long)mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, rw,
                                                                 0x7ffffffffffff000));
    char *far = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, rw, 0x7fffffffffffe000);
    printf("shared, the last page a file may have: %d\n", far != MAP_FAILED);
    touch("  touched", far, 0);
    munmap(far, PAGE);
    char *v = mmap(NULL, PAGE, PROT_READ, MAP_SHARED_VALIDATE, rw, 0);
    printf("MAP_SHARED_VALIDATE of a file: %d\n", v != MAP_FAILED);
    munmap(v, PAGE);
    SHOW("MAP_SHARED_VALIDATE with an unknown flag", (long)mmap(NULL, PAGE, PROT_READ, MAP_SHARED_VALIDATE | 0x200000,
                                                                 rw, 0));
    SHOW("MAP_SHARED_VALIDATE with MAP_SYNC", (long)mmap(NULL, PAGE, PROT_READ, MAP_SHARED_VALIDATE | MAP_SYNC, rw, 0));
    SHOW("MAP_SHARED_VALIDATE with MAP_FIXED_NOREPLACE", (long)mmap((void *)0x3000000000, PAGE, PROT_READ,
                                                                     MAP_SHARED_VALIDATE | MAP_FIXED_NOREPLACE, rw, 0));
    SHOW("MAP_SHARED_VALIDATE with an unknown flag, a read-only descriptor, writable",
         (long)mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | 0x200000, ro, 0));
    SHOW("MAP_SHARED with an unknown flag", (long)mmap(NULL, PAGE, PROT_READ, MAP_SHARED | 0x200000, rw, 0) == -1 ?
                                             -1 : 0);
    char *m = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, ro, 0);
    printf("shared, read-only, of a read-only descriptor: %d\n", m != MAP_FAILED);
    SHOW("  mprotect adding PROT_WRITE", mprotect(m, PAGE, PROT_READ | PROT_WRITE));
    SHOW("  mprotect to PROT_NONE and back to PROT_READ",
         mprotect(m, PAGE, PROT_NONE) || mprotect(m, PAGE, PROT_READ) ? -1 : 0);
    printf("  reads: %.9s\n", m);
    touch("  a store into it", m, 1);
    char *p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, ro, 0);
    SHOW("private of a read-only descriptor: mprotect adding PROT_WRITE", mprotect(p, PAGE, PROT_READ | PROT_WRITE));
    p[0] = 'S';
    show_read("  the private store is not the file's", ro, 0, 4);
    char *w = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, rw, 0);
    SHOW("shared, read-only, of a read-write descriptor: mprotect adding PROT_WRITE",
         mprotect(w, PAGE, PROT_READ | PROT_WRITE));
    w[0] = 'S';
    show_read("  the store is the file's", ro, 0, 4);
    printf("  and the read-only mapping's: %.4s\n", m);
    munmap(m, PAGE), munmap(p, PAGE), munmap(w, PAGE);
    close(ro), close(wo), close(rw), close(path), close(dir);
    close(pp[0]), close(pp[1]), close(sv[0]), close(sv[1]);
    unlink("/tmp/shm-e");
}

/* One process and two mappings: stores seen by read and by the other
 * mapping, writes seen by both, past the end of the file. */
static void one_process(void)
{
    int fd = open("/tmp/shm-a", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(fd, "0123456789", 10);
    char *a = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    char *b = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    printf("two mappings: %d %d, they read %.10s %.10s\n", a != MAP_FAILED, b != MAP_FAILED, a, b);
    memcpy(a + 2, "ab", 2);
    show_read("a store, by read", fd, 0, 10);
    printf("a store, by the other mapping: %.10s\n", b);
    pwrite(fd, "XY", 2, 6);
    printf("a write, by both mappings: %.10s %.10s\n", a, b);
    int fd2 = open("/tmp/shm-a", O_RDONLY);
    char *c = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd2, 0);
    printf("a mapping through another descriptor: %.10s\n", c);
    b[9] = '!';
    printf("  sees a store: %.10s\n", c);
    printf("bytes past the end in the last page are zeros: %d %d\n", a[10], a[PAGE - 1]);
    a[12] = 'q';
    printf("a store past the end: size %ld, read gives %ld bytes\n", size_of(fd),
           pread(fd, (char[32]){ 0 }, 32, 0));
    touch("the page wholly past the end", a + PAGE, 0);
    touch("a store there", a + PAGE + 5, 1);
    SHOW("msync MS_SYNC", msync(a, 2 * PAGE, MS_SYNC));
    SHOW("msync MS_ASYNC", msync(a, PAGE, MS_ASYNC));
    SHOW("msync MS_INVALIDATE", msync(b, PAGE, MS_INVALIDATE));
    printf("after msync: %.10s\n", b);
    /* The file grows: its new bytes show in the page that was past its end. */
    SHOW("ftruncate to 6000", ftruncate(fd, 6000));
    printf("the grown part reads zeros through the mapping: %d %d %d\n", a[PAGE], a[PAGE + 100], a[5999]);
    a[PAGE + 1] = 'g';
    show_read("a store in the grown part, by read", fd, PAGE + 1, 3);
    lseek(fd, 0, SEEK_END);
    write(fd, "tail", 4);
    printf("an appended write, by the mapping: %.4s, size %ld\n", a + 6000, size_of(fd));
    /* The file shrinks: a page past its new end is gone (SIGBUS). */
    a[150] = 'k';
    SHOW("ftruncate to 100", ftruncate(fd, 100));
    touch("the second page after it shrank", a + PAGE + 1, 0);
    printf("the first page's bytes past the new end read zeros: %d %d %d\n", a[100], a[150], a[2000]);
    SHOW("ftruncate to 5000 again", ftruncate(fd, 5000));
    printf("the second page again, zeros: %d %d\n", a[PAGE + 1], a[PAGE]);
    /* write() from the mapping into the file, read() into the mapping. */
    SHOW("write from the mapping to the file", pwrite(fd, a, 4, 20));
    show_read("  the file then", fd, 20, 4);
    int src = open("/etc/hello.txt", O_RDONLY);
    SHOW("read from another file into the mapping", read(src, a + 30, 5));
    show_read("  the file then", fd, 30, 5);
    close(src);
    munmap(a, 2 * PAGE), munmap(b, PAGE), munmap(c, PAGE);
    close(fd2);
    /* Kept after munmap and close. */
    close(fd);
    fd = open("/tmp/shm-a", O_RDONLY);
    show_read("reopened", fd, 0, 12);
    close(fd);
}

/* Processes: a forked child's stores through the inherited mapping, a
 * child mapping it itself, a process that opened the file on its own. */
static void processes(void)
{
    int fd = open("/tmp/shm-b", O_RDWR | O_CREAT | O_TRUNC, 0644);
    ftruncate(fd, 3 * PAGE);
    char *m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    strcpy(m, "parent");
    pid_t pid = fork();
    if (pid == 0) {
        printf("child sees the parent's store: %s\n", m);
        strcpy(m + PAGE, "child");
        char *own = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 2 * PAGE);
        strcpy(own, "child's own");
        _exit(0);
    }
    printf("child status %d\n", status_of(pid));
    printf("parent sees the child's stores: %s, %s\n", m + PAGE, m + 2 * PAGE);
    show_read("and read does", fd, PAGE, 5);
    pid = fork();
    if (pid == 0) {
        int f2 = open("/tmp/shm-b", O_RDWR);
        char *o = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, f2, PAGE);
        char buf[8] = { 0 };
        o[0] = 'C';
        pread(f2, buf, 5, 0);
        printf("another process's own mapping: %.5s; read there: %s\n", o, buf);
        _exit(0);
    }
    printf("its status %d; the parent sees %.5s\n", status_of(pid), m + PAGE);
    /* A write by the parent while the child waits, seen by the child. */
    int go[2], back[2];
    pipe(go), pipe(back);
    pid = fork();
    if (pid == 0) {
        char b;
        read(go[0], &b, 1);
        printf("child sees the parent's write after the fork: %.6s\n", m);
        _exit(0);
    }
    pwrite(fd, "PARENT", 6, 0);
    write(go[1], "x", 1);
    printf("status %d\n", status_of(pid));
    munmap(m, 3 * PAGE);
    close(fd);
    close(go[0]), close(go[1]), close(back[0]), close(back[1]);
}

/* unlink and rename while mapped; a private mapping after shared stores. */
static void names(void)
{
    int fd = open("/tmp/shm-c", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(fd, "hello", 5);
    char *m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    SHOW("rename while mapped", rename("/tmp/shm-c", "/tmp/shm-d"));
    m[0] = 'J';
    int fd2 = open("/tmp/shm-d", O_RDONLY);
    show_read("the new name reads the store", fd2, 0, 5);
    char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd2, 0);
    printf("a private mapping taken after a shared store: %.5s\n", p);
    p[1] = 'E';
    printf("its own store is not the file's: %.5s %.5s\n", p, m);
    close(fd2);
    SHOW("unlink while mapped", unlink("/tmp/shm-d"));
    close(fd);
    m[1] = 'U';
    pid_t pid = fork();
    if (pid == 0) {
        printf("a child sees the unlinked file's store: %.5s\n", m);
        m[2] = 'C';
        _exit(0);
    }
    printf("status %d, then %.5s\n", status_of(pid), m);
    SHOW("the name is gone", access("/tmp/shm-d", F_OK));
    munmap(m, PAGE);
    munmap(p, PAGE);
}

/* A file of many pages: stores in each, read back; mremap moves a
 * mapping, madvise(MADV_DONTNEED) keeps its contents; sendfile. */
static void many_pages(void)
{
    const long size = 17 * PAGE + 123;
    int fd = open("/tmp/shm-f", O_RDWR | O_CREAT | O_TRUNC, 0644);
    char *buf = malloc((size_t)size);
    for (long i = 0; i < size; i++)
        buf[i] = (char)(i * 7 + 3);
    write(fd, buf, (size_t)size);
    char *m = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    printf("17 pages and 123 bytes: the mapping reads the file: %d\n", memcmp(m, buf, (size_t)size) == 0);
    for (long pg = 0; pg < 18; pg++)
        m[pg * PAGE + 5] = (char)pg, buf[pg * PAGE + 5] = (char)pg;
    char *back = malloc((size_t)size);
    long got = 0, r;
    lseek(fd, 0, SEEK_SET);
    while ((r = read(fd, back + got, 1000)) > 0)
        got += r;
    printf("read in pieces of 1000: %ld bytes, the stores there: %d\n", got, memcmp(back, buf, (size_t)size) == 0);
    int out = open("/tmp/shm-g", O_RDWR | O_CREAT | O_TRUNC, 0644);
    off_t off = 0;
    SHOW("sendfile of all of it", sendfile(out, fd, &off, (size_t)size));
    memset(back, 0, (size_t)size);
    pread(out, back, (size_t)size, 0);
    printf("the copy holds the stores: %d\n", memcmp(back, buf, (size_t)size) == 0);
    close(out);
    unlink("/tmp/shm-g");
    SHOW("madvise MADV_DONTNEED", madvise(m, 2 * PAGE, MADV_DONTNEED));
    printf("the stores are still there: %d %d\n", m[5], m[PAGE + 5]);
    char *moved = mremap(m, (size_t)size, 20 * PAGE, MREMAP_MAYMOVE);
    printf("mremap to 20 pages: %d, still reads the file: %d\n", moved != MAP_FAILED,
           moved != MAP_FAILED && memcmp(moved, buf, (size_t)size) == 0);
    moved[3 * PAGE] = 'M';
    show_read("a store after the move, by read", fd, 3 * PAGE, 1);
    touch("a page past the end after the move", moved + 19 * PAGE, 0);
    munmap(moved, 20 * PAGE);
    close(fd);
    unlink("/tmp/shm-f");
    free(buf);
    free(back);
}

/* read() and write() of a mapped file go straight between its pages and
 * the buffer: across pages on both sides, from and into the mapping
 * itself, and up to a buffer page that cannot be reached (what went
 * before it counts; none of it: EFAULT). */
static void buffers(void)
{
    const long size = 3 * PAGE;
    int fd = open("/tmp/shm-h", O_RDWR | O_CREAT | O_TRUNC, 0644);
    char *buf = malloc(4 * PAGE), *back = malloc(4 * PAGE);
    for (long i = 0; i < size; i++)
        buf[i] = (char)(i * 13 + 1);
    write(fd, buf, (size_t)size);
    char *m = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    for (long i = 0; i < 2 * PAGE; i++)
        buf[PAGE + i] = (char)(i * 5 + 2);
    SHOW("pwrite of 2 pages from an unaligned buffer at an unaligned offset", pwrite(fd, buf + PAGE + 50, 5000, 1000));
    printf("  the mapping holds it: %d\n", memcmp(m + 1000, buf + PAGE + 50, 5000) == 0);
    m[7000] = 'W';
    SHOW("pread of 2 pages into an unaligned buffer", pread(fd, back + 77, 6000, 1500));
    printf("  it is what the mapping holds: %d\n", memcmp(back + 77, m + 1500, 6000) == 0);
    SHOW("pwrite from the mapping itself, another page", pwrite(fd, m + 2 * PAGE, 100, 10));
    printf("  the mapping then: %d\n", memcmp(m + 10, m + 2 * PAGE, 100) == 0);
    SHOW("pread into the mapping itself", pread(fd, m + 2 * PAGE + 500, 300, 3000));
    printf("  the mapping then: %d\n", memcmp(m + 2 * PAGE + 500, m + 3000, 300) == 0);
    /* A buffer whose second page is PROT_NONE. */
    char *two = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(two, 'b', PAGE);
    mprotect(two + PAGE, PAGE, PROT_NONE);
    SHOW("pwrite of 300 bytes, 100 before an unreachable page", pwrite(fd, two + PAGE - 100, 300, 200));
    show_read("  the file then", fd, 195, 10);
    SHOW("pwrite from the unreachable page", pwrite(fd, two + PAGE, 10, 0));
    SHOW("pread of 300 bytes, 100 before an unreachable page", pread(fd, two + PAGE - 100, 300, 0));
    printf("  the 100 bytes read: %d\n", memcmp(two + PAGE - 100, m, 100) == 0);
    SHOW("pread into the unreachable page", pread(fd, two + PAGE, 10, 0));
    mprotect(two, PAGE, PROT_READ);
    SHOW("pread into a read-only page", pread(fd, two, 10, 0));
    printf("size after all: %ld\n", size_of(fd));
    munmap(two, 2 * PAGE);
    munmap(m, (size_t)size);
    close(fd);
    unlink("/tmp/shm-h");
    free(buf);
    free(back);
}

/* A program written through a shared mapping, then run. */
static void exec_it(void)
{
    int bin = open("/bin/hello", O_RDONLY);
    long size = size_of(bin);
    int fd = open("/tmp/shm-x", O_RDWR | O_CREAT | O_TRUNC, 0755);
    ftruncate(fd, size);
    char *m = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    long got = 0, r;
    while (got < size && (r = read(bin, m + got, (size_t)(size - got))) > 0)
        got += r;
    printf("a program read into a shared mapping: %d\n", got == size);
    munmap(m, (size_t)size);
    close(fd);
    close(bin);
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = { "shm-x", NULL };
        execv("/tmp/shm-x", argv);
        _exit(99);
    }
    printf("it ran: status %d\n", status_of(pid));
    unlink("/tmp/shm-x");
}

/* Many files mapped shared: in turn (100 stay, unmapped), then all at
 * once (Petrel maps at most 64 files' objects at a time: ENOMEM after,
 * so the count is masked), and a huge window on a small file. */
static void limits(void)
{
    char name[32];
    char *maps[100];
    int back = 0, ok = 0, right = 0;
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "/tmp/shm-n%d", i);
        int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
        ftruncate(fd, PAGE);
        char *m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED) {
            m[0] = (char)i, m[100] = (char)(i + 1);
            munmap(m, PAGE);
        }
        close(fd);
    }
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "/tmp/shm-n%d", i);
        int fd = open(name, O_RDONLY);
        char c[2] = { 0 };
        back += pread(fd, c, 1, 0) == 1 && pread(fd, c + 1, 1, 100) == 1 && c[0] == (char)i && c[1] == (char)(i + 1);
        close(fd);
    }
    printf("100 files mapped in turn, stored to, unmapped: %d read back\n", back);
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "/tmp/shm-n%d", i);
        int fd = open(name, O_RDWR);
        maps[i] = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (maps[i] != MAP_FAILED) {
            maps[i][1] = (char)(i + 2);
            ok++;
        }
    }
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "/tmp/shm-n%d", i);
        int fd = open(name, O_RDONLY);
        char c = 0;
        right += maps[i] != MAP_FAILED && pread(fd, &c, 1, 1) == 1 && c == (char)(i + 2);
        close(fd);
        if (maps[i] != MAP_FAILED)
            munmap(maps[i], PAGE);
        unlink(name);
    }
    printf("100 files mapped at once: every mapped one reads back %d ~%d mapped\n", ok == right, ok);
    int fd = open("/tmp/shm-h", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(fd, "x", 1);
    char *huge = mmap(NULL, 1ul << 32, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    printf("a 4 GiB window on a 1-byte file: %d\n", huge != MAP_FAILED);
    if (huge != MAP_FAILED) {
        huge[1] = 'y';
        touch("its last page", huge + (1ul << 32) - 1, 0);
        munmap(huge, 1ul << 32);
    }
    close(fd);
    unlink("/tmp/shm-h");
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = { 0 };
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGSEGV, &sa, NULL);
    errors();
    one_process();
    processes();
    names();
    many_pages();
    buffers();
    exec_it();
    limits();
    return 0;
}
