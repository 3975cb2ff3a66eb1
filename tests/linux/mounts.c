/*
 * The file systems a Debian system mounts and the devices it has: the
 * mount table (/proc/mounts, /proc/self/mountinfo, sizes masked), each
 * file system's device number and statfs, names that cannot move or link
 * from one to another (EXDEV) and mount points that cannot go (EBUSY);
 * /dev/full, /dev/random and /dev/urandom; POSIX shared memory and named
 * semaphores in /dev/shm, shared with a child.
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <poll.h>
#include <semaphore.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

/* Print a file with the numbers after "size=" and "nr_inodes=" masked (they are the store's). */
static void show_masked(const char *path)
{
    char buf[2048];
    int fd = open(path, O_RDONLY);
    long n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (n < 0) {
        printf("%s: %s\n", path, errname(errno));
        return;
    }
    buf[n] = 0;
    close(fd);
    printf("%s:\n", path);
    for (char *s = buf; *s; s++) {
        putchar(*s);
        if ((s - buf >= 4 && !strncmp(s - 4, "size=", 5)) || (s - buf >= 9 && !strncmp(s - 9, "nr_inodes=", 10))) {
            while (s[1] >= '0' && s[1] <= '9')
                s++;
            putchar('N');
        }
    }
}

static void show_stat(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0) {
        printf("stat %s: %s\n", path, errname(errno));
        return;
    }
    printf("stat %s: dev %u:%u mode %o rdev %u:%u\n", path, major(st.st_dev), minor(st.st_dev), st.st_mode,
           major(st.st_rdev), minor(st.st_rdev));
}

static void show_statfs(const char *path)
{
    struct statfs sf;
    if (statfs(path, &sf) < 0) {
        printf("statfs %s: %s\n", path, errname(errno));
        return;
    }
    printf("statfs %s: type %#lx bsize %ld namelen %ld flags %#lx, blocks %s, free at most blocks %d\n", path,
           (long)sf.f_type, (long)sf.f_bsize, (long)sf.f_namelen, (long)sf.f_flags,
           sf.f_blocks ? "some" : "none", sf.f_bfree <= sf.f_blocks && sf.f_bavail <= sf.f_blocks);
}

/* Blocks used in the file system at path. */
static long used_blocks(const char *path)
{
    struct statfs sf;
    return statfs(path, &sf) < 0 ? -1 : (long)(sf.f_blocks - sf.f_bfree);
}

static void devices(void)
{
    unsigned char buf[4096];
    int full = open("/dev/full", O_RDWR);
    memset(buf, 0xaa, sizeof(buf));
    long n = read(full, buf, 100);
    int zeros = 1;
    for (int i = 0; i < 100; i++)
        zeros &= buf[i] == 0;
    printf("/dev/full: read %ld, all zeros %d\n", n, zeros);
    SHOW("/dev/full: write", write(full, "x", 1));
    SHOW("/dev/full: write of nothing", write(full, "x", 0));
    SHOW("/dev/full: pwrite", pwrite(full, "x", 1, 10));
    SHOW("/dev/full: lseek", lseek(full, 100, SEEK_SET));
    close(full);
    static const char *const rnd[] = { "/dev/random", "/dev/urandom" };
    for (int k = 0; k < 2; k++) {
        int fd = open(rnd[k], O_RDWR);
        memset(buf, 0, sizeof(buf));
        n = read(fd, buf, sizeof(buf));
        int seen[256] = { 0 }, kinds = 0;
        for (long i = 0; i < n; i++)
            kinds += !seen[buf[i]]++;
        printf("%s: read %ld, more than 200 byte values %d\n", rnd[k], n, kinds > 200);
        unsigned char again[16];
        read(fd, again, sizeof(again));
        printf("%s: a second read differs %d\n", rnd[k], memcmp(again, buf, sizeof(again)) != 0);
        SHOW("  read of nothing", read(fd, buf, 0));
        SHOW("  write (entropy, taken)", write(fd, "seed", 4));
        struct pollfd p = { fd, POLLIN | POLLOUT, 0 };
        printf("  poll %d revents %#x\n", poll(&p, 1, 0), p.revents);
        close(fd);
    }
    int z = open("/dev/zero", O_RDONLY);
    SHOW("/dev/zero: lseek", lseek(z, 100, SEEK_SET));
    close(z);
}

static void shared_memory(void)
{
    shm_unlink("/petrel-test");
    int fd = shm_open("/petrel-test", O_CREAT | O_EXCL | O_RDWR, 0600);
    SHOW("shm_open", fd >= 0 ? 0 : -1);
    show_stat("/dev/shm/petrel-test");
    long before = used_blocks("/dev/shm");
    SHOW("ftruncate", ftruncate(fd, 8192));
    int *shared = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    shared[0] = 41;
    shared[1024] = 7;
    printf("/dev/shm blocks used grew by %ld\n", used_blocks("/dev/shm") - before);
    sem_unlink("petrel-sem");
    sem_t *sem = sem_open("petrel-sem", O_CREAT | O_EXCL, 0600, 0);
    printf("sem_open: %s\n", sem == SEM_FAILED ? errname(errno) : "ok");
    show_stat("/dev/shm/sem.petrel-sem");
    pid_t pid = fork();
    if (pid == 0) {
        int cfd = shm_open("/petrel-test", O_RDWR, 0);
        int *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 0);
        sem_t *s = sem_open("petrel-sem", 0);
        m[0] += m[1024];
        sem_post(s);
        _exit(0);
    }
    sem_wait(sem);
    printf("the child's sum through shared memory: %d\n", shared[0]);
    int st;
    waitpid(pid, &st, 0);
    SHOW("sem_close", sem_close(sem));
    SHOW("sem_unlink", sem_unlink("petrel-sem"));
    SHOW("shm_unlink", shm_unlink("/petrel-test"));
    SHOW("shm_unlink again", shm_unlink("/petrel-test"));
    SHOW("shm_open of a missing one", shm_open("/petrel-none", O_RDWR, 0));
    munmap(shared, 8192);
    close(fd);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    show_masked("/proc/mounts");
    show_masked("/proc/self/mountinfo");
    show_masked("/proc/self/mounts");
    char target[64] = { 0 };
    SHOW("readlink /proc/mounts", readlink("/proc/mounts", target, sizeof(target) - 1));
    printf("  %s\n", target);
    static const char *const paths[] = { "/", "/tmp", "/dev", "/dev/pts", "/dev/shm", "/proc", "/proc/self",
                                         "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
                                         "/dev/tty" };
    for (unsigned i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        show_stat(paths[i]);
    static const char *const roots[] = { "/", "/dev", "/dev/pts", "/dev/shm", "/proc" };
    for (unsigned i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
        show_statfs(roots[i]);

    /* Across file systems: EXDEV; mount points: EBUSY. */
    write_text("/tmp/mounts.txt", "one\n");
    mkdir("/tmp/mounts.d", 0755);
    SHOW("rename a file into /dev/shm", rename("/tmp/mounts.txt", "/dev/shm/moved"));
    SHOW("rename a directory into /dev", rename("/tmp/mounts.d", "/dev/mounts.d"));
    SHOW("rename a file into /proc", rename("/tmp/mounts.txt", "/proc/x"));
    SHOW("link a file into /dev/shm", link("/tmp/mounts.txt", "/dev/shm/linked"));
    SHOW("link /dev/null into /tmp", link("/dev/null", "/tmp/null"));
    SHOW("rmdir /dev/shm", rmdir("/dev/shm"));
    SHOW("rmdir /dev/pts", rmdir("/dev/pts"));
    SHOW("rmdir /proc", rmdir("/proc"));
    SHOW("rename /dev/shm", rename("/dev/shm", "/dev/shm2"));
    SHOW("rename a directory onto /dev/shm", rename("/dev/mounts.e", "/dev/shm"));
    mkdir("/dev/mounts.e", 0755);
    SHOW("rename a directory of /dev onto /dev/shm", rename("/dev/mounts.e", "/dev/shm"));
    SHOW("rename within /dev", rename("/dev/mounts.e", "/dev/mounts.f"));
    SHOW("rmdir it", rmdir("/dev/mounts.f"));
    write_text("/dev/shm/a", "a\n");
    SHOW("rename within /dev/shm", rename("/dev/shm/a", "/dev/shm/b"));
    show_stat("/dev/shm/b");
    SHOW("symlink across (names only)", symlink("/dev/shm/b", "/tmp/to-b"));
    show_text("read through it", "/tmp/to-b");
    unlink("/tmp/to-b");
    unlink("/dev/shm/b");
    unlink("/tmp/mounts.txt");
    rmdir("/tmp/mounts.d");

    devices();
    shared_memory();
    return 0;
}
