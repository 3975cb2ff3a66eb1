/* Attributes of files in /tmp: chmod, fchmod, fchmodat, chown (root: any
 * owner, kept), utimensat (explicit times, UTIME_NOW, UTIME_OMIT, a
 * descriptor, errors), the times write and rename change, faccessat and
 * faccessat2, statfs and fstatfs. Times themselves differ between the two
 * systems: the test prints comparisons, and exact values only where it set
 * them. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lxtest.h"

#define D "/tmp/fsattr"

static struct stat st_of(const char *path)
{
    struct stat st;
    memset(&st, 0, sizeof(st));
    if (lstat(path, &st))
        printf("lstat %s: %s\n", path, errname(errno));
    return st;
}

static void show_mode(const char *path)
{
    struct stat st = st_of(path);
    printf("%s: mode %o uid %d gid %d\n", path, st.st_mode, st.st_uid, st.st_gid);
}

static long ts_cmp(struct timespec a, struct timespec b)
{
    return a.tv_sec != b.tv_sec ? (a.tv_sec < b.tv_sec ? -1 : 1) : a.tv_nsec < b.tv_nsec ? -1 : a.tv_nsec > b.tv_nsec;
}

int main(void)
{
    mkdir(D, 0755);
    int fd = open(D "/f", O_RDWR | O_CREAT, 0644);
    write(fd, "data", 4);
    show_mode(D "/f");

    SHOW("chmod 0600", chmod(D "/f", 0600));
    show_mode(D "/f");
    SHOW("fchmod 04751", fchmod(fd, 04751));
    show_mode(D "/f");
    SHOW("chmod with type bits (ignored)", chmod(D "/f", 0170644));
    show_mode(D "/f");
    SHOW("chmod a missing file", chmod(D "/none", 0644));
    SHOW("fchmod a bad descriptor", fchmod(99, 0644));
    symlink("f", D "/s");
    SHOW("chmod through a link", chmod(D "/s", 0640));
    show_mode(D "/f");
    SHOW("fchmodat AT_SYMLINK_NOFOLLOW (the syscall has no flags)", syscall(SYS_fchmodat, AT_FDCWD, D "/f", 0644, 0x100));
    show_mode(D "/f");
    SHOW("chmod a directory", chmod(D, 0700));
    show_mode(D);
    chmod(D, 0755);

    SHOW("chown 1000:1000", chown(D "/f", 1000, 1000));
    show_mode(D "/f");
    SHOW("fchown -1:50 (the owner stays)", fchown(fd, -1, 50));
    show_mode(D "/f");
    SHOW("lchown the link", lchown(D "/s", 7, 8));
    show_mode(D "/s");
    show_mode(D "/f");
    SHOW("chown a missing file", chown(D "/none", 0, 0));
    SHOW("fchownat with a bad flag", fchownat(AT_FDCWD, D "/f", 0, 0, 0x2));
    SHOW("fchownat AT_EMPTY_PATH", fchownat(fd, "", 0, 0, AT_EMPTY_PATH));
    show_mode(D "/f");
    SHOW("chmod 04755 then chown clears set-user-ID", (chmod(D "/f", 04755), chown(D "/f", 0, 0)));
    show_mode(D "/f");
    chmod(D "/f", 0644);

    /* utimensat. */
    struct timespec t[2] = { { 1000000000, 123456789 }, { 1500000000, 5 } };
    SHOW("utimensat explicit times", utimensat(AT_FDCWD, D "/f", t, 0));
    struct stat st = st_of(D "/f");
    printf("atime %ld.%09ld mtime %ld.%09ld\n", (long)st.st_atim.tv_sec, st.st_atim.tv_nsec, (long)st.st_mtim.tv_sec,
           st.st_mtim.tv_nsec);
    struct timespec old_ctime = st.st_ctim;
    t[0].tv_nsec = UTIME_OMIT;
    t[1] = (struct timespec){ 1600000000, 0 };
    SHOW("utimensat UTIME_OMIT for atime", utimensat(AT_FDCWD, D "/f", t, 0));
    st = st_of(D "/f");
    printf("atime %ld mtime %ld, ctime not before %d\n", (long)st.st_atim.tv_sec, (long)st.st_mtim.tv_sec,
           ts_cmp(st.st_ctim, old_ctime) >= 0);
    t[0].tv_nsec = UTIME_NOW;
    t[1].tv_nsec = UTIME_OMIT;
    SHOW("utimensat UTIME_NOW for atime", utimensat(AT_FDCWD, D "/f", t, 0));
    st = st_of(D "/f");
    printf("atime moved past 2020: %d, mtime %ld\n", st.st_atim.tv_sec > 1600000000 || st.st_atim.tv_sec < 1000000000,
           (long)st.st_mtim.tv_sec);
    SHOW("utimensat NULL (both now)", utimensat(AT_FDCWD, D "/f", NULL, 0));
    st = st_of(D "/f");
    printf("mtime changed from 1600000000: %d\n", st.st_mtim.tv_sec != 1600000000);
    t[0] = (struct timespec){ 0, 1000000000 };
    SHOW("utimensat with nsec 1e9", utimensat(AT_FDCWD, D "/f", t, 0));
    t[0] = (struct timespec){ 0, -1 };
    SHOW("utimensat with nsec -1", utimensat(AT_FDCWD, D "/f", t, 0));
    SHOW("utimensat with a bad flag", utimensat(AT_FDCWD, D "/f", NULL, 0x2));
    SHOW("utimensat of a missing file", utimensat(AT_FDCWD, D "/none", NULL, 0));
    SHOW("utimensat with a bad times pointer", syscall(SYS_utimensat, AT_FDCWD, D "/f", (void *)8, 0));
    t[0] = (struct timespec){ 42, 0 };
    t[1] = (struct timespec){ 43, 0 };
    SHOW("utimensat of a descriptor (NULL path)", syscall(SYS_utimensat, fd, NULL, t, 0));
    st = st_of(D "/f");
    printf("atime %ld mtime %ld\n", (long)st.st_atim.tv_sec, (long)st.st_mtim.tv_sec);
    SHOW("utimensat NULL path with a flag", syscall(SYS_utimensat, fd, NULL, t, AT_SYMLINK_NOFOLLOW));
    SHOW("utimensat NULL path, AT_FDCWD", syscall(SYS_utimensat, AT_FDCWD, NULL, t, 0));
    SHOW("utimensat of a bad descriptor", syscall(SYS_utimensat, 99, NULL, t, 0));
    t[0] = (struct timespec){ 7, 0 };
    t[1] = (struct timespec){ 8, 0 };
    SHOW("utimensat AT_SYMLINK_NOFOLLOW on the link", utimensat(AT_FDCWD, D "/s", t, AT_SYMLINK_NOFOLLOW));
    printf("link mtime %ld, file mtime %ld\n", (long)st_of(D "/s").st_mtim.tv_sec, (long)st_of(D "/f").st_mtim.tv_sec);

    /* Writes, truncation and new names move the times. */
    t[0] = t[1] = (struct timespec){ 100, 0 };
    utimensat(AT_FDCWD, D "/f", t, 0);
    utimensat(AT_FDCWD, D, t, 0);
    write(fd, "more", 4);
    st = st_of(D "/f");
    printf("after write: mtime moved %d, atime kept %d\n", st.st_mtim.tv_sec != 100, st.st_atim.tv_sec == 100);
    utimensat(AT_FDCWD, D "/f", t, 0);
    ftruncate(fd, 1);
    printf("after ftruncate: mtime moved %d\n", st_of(D "/f").st_mtim.tv_sec != 100);
    printf("directory before a new name: mtime %ld\n", (long)st_of(D).st_mtim.tv_sec);
    close(open(D "/new", O_WRONLY | O_CREAT, 0644));
    printf("directory after a new name: mtime moved %d\n", st_of(D).st_mtim.tv_sec != 100);
    utimensat(AT_FDCWD, D, t, 0);
    unlink(D "/new");
    printf("directory after an unlink: mtime moved %d\n", st_of(D).st_mtim.tv_sec != 100);

    /* faccessat. */
    SHOW("access F_OK", access(D "/f", F_OK));
    SHOW("access R_OK|W_OK", access(D "/f", R_OK | W_OK));
    SHOW("access X_OK of a 0644 file", access(D "/f", X_OK));
    chmod(D "/f", 0700);
    SHOW("access X_OK of a 0700 file", access(D "/f", X_OK));
    SHOW("access X_OK of a directory", access(D, X_OK));
    SHOW("access a missing file", access(D "/none", F_OK));
    SHOW("access with a bad mode", access(D "/f", 8));
    SHOW("faccessat2 with a bad flag", syscall(SYS_faccessat2, AT_FDCWD, D "/f", 0, 0x4));
    SHOW("faccessat2 AT_EACCESS", syscall(SYS_faccessat2, AT_FDCWD, D "/f", R_OK, 0x200));
    SHOW("faccessat2 AT_EMPTY_PATH", syscall(SYS_faccessat2, fd, "", R_OK, 0x1000));
    SHOW("faccessat2 a dangling link, AT_SYMLINK_NOFOLLOW",
         (symlink("none", D "/dang"), syscall(SYS_faccessat2, AT_FDCWD, D "/dang", 0, 0x100)));
    SHOW("faccess a dangling link", access(D "/dang", F_OK));

    /* statfs. */
    struct statfs sf;
    SHOW("statfs /tmp", statfs("/tmp", &sf));
    printf("type %lx bsize %ld namelen %ld frsize %ld blocks>0 %d ~%ld free\n", (long)sf.f_type, (long)sf.f_bsize,
           (long)sf.f_namelen, (long)sf.f_frsize, sf.f_blocks > 0, (long)sf.f_bfree);
    SHOW("fstatfs", fstatfs(fd, &sf));
    printf("type %lx\n", (long)sf.f_type);
    SHOW("statfs a missing path", statfs(D "/none", &sf));
    SHOW("statfs into a bad pointer", syscall(SYS_statfs, "/tmp", (void *)8));
    SHOW("fstatfs a bad descriptor", fstatfs(99, &sf));
    close(fd);

    /* The file mode creation mask. */
    SHOW("umask 077 (the old mask)", umask(077));
    close(open(D "/m", O_WRONLY | O_CREAT, 0666));
    mkdir(D "/md", 0777);
    printf("masked: file %o directory %o\n", st_of(D "/m").st_mode & 07777, st_of(D "/md").st_mode & 07777);
    pid_t pid = fork();
    if (pid == 0) {
        close(open(D "/child", O_WRONLY | O_CREAT, 0666));
        _exit(umask(0));
    }
    int status;
    waitpid(pid, &status, 0);
    printf("a child inherits it: mask %o, file %o\n", WEXITSTATUS(status), st_of(D "/child").st_mode & 07777);
    SHOW("umask with more bits (kept: 0777 of them)", umask(01777));
    SHOW("umask 022", umask(022));
    unlink(D "/m");
    unlink(D "/child");
    rmdir(D "/md");

    unlink(D "/f");
    unlink(D "/s");
    unlink(D "/dang");
    SHOW("rmdir " D, rmdir(D));
    return 0;
}
