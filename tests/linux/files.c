/* Files of the root archive: open, read, seek, stat, and their errors. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "lxtest.h"

static void show_stat(const char *what, int r, const struct stat *st)
{
    if (r < 0) {
        printf("%s: -1 %s\n", what, errname(errno));
        return;
    }
    const char *type = S_ISREG(st->st_mode) ? "file" : S_ISDIR(st->st_mode) ? "dir" :
                       S_ISLNK(st->st_mode) ? "link" : S_ISCHR(st->st_mode) ? "chr" : "other";
    printf("%s: %s mode %o size %ld uid %u gid %u\n", what, type, (unsigned)(st->st_mode & 07777),
           S_ISDIR(st->st_mode) ? 0L : (long)st->st_size, st->st_uid, st->st_gid);
}

int main(void)
{
    char buf[128];
    struct stat st;
    int fd = open("/etc/hello.txt", O_RDONLY);
    printf("open: %s\n", fd >= 3 ? "a descriptor >= 3" : "failed");
    SHOW("read 5", read(fd, buf, 5));
    printf("got: %.5s\n", buf);
    SHOW("lseek cur", lseek(fd, 0, SEEK_CUR));
    SHOW("lseek end", lseek(fd, 0, SEEK_END));
    SHOW("read at end", read(fd, buf, sizeof(buf)));
    SHOW("lseek set 6", lseek(fd, 6, SEEK_SET));
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    buf[n > 0 ? n : 0] = 0;
    printf("rest (%ld): %s", (long)n, buf);
    SHOW("lseek negative", lseek(fd, -100, SEEK_CUR));
    SHOW("lseek whence 9", lseek(fd, 0, 9));
    SHOW("pread at 11", pread(fd, buf, 4, 11));
    printf("pread got: %.4s\n", buf);
    SHOW("position unchanged by pread", lseek(fd, 0, SEEK_CUR));
    show_stat("fstat", fstat(fd, &st), &st);
    char a[6] = { 0 }, b[8] = { 0 };
    struct iovec iov[2] = { { a, 5 }, { b, 7 } };
    lseek(fd, 0, SEEK_SET);
    SHOW("readv", readv(fd, iov, 2));
    printf("readv got: [%s] [%s]\n", a, b);
    SHOW("write to a read-only descriptor", write(fd, "x", 1));
    SHOW("close", close(fd));
    SHOW("close again", close(fd));
    SHOW("read closed", read(fd, buf, 1));

    show_stat("stat /etc/hello.txt", stat("/etc/hello.txt", &st), &st);
    show_stat("stat /etc", stat("/etc", &st), &st);
    show_stat("stat /", stat("/", &st), &st);
    show_stat("stat /etc/../etc/./hello.txt", stat("/etc/../etc/./hello.txt", &st), &st);
    show_stat("stat /bin/files", stat("/bin/files", &st), &st);
    show_stat("stat /etc/hello-link", stat("/etc/hello-link", &st), &st);
    show_stat("lstat /etc/hello-link", lstat("/etc/hello-link", &st), &st);
    show_stat("stat /missing", stat("/missing", &st), &st);
    show_stat("stat /etc/hello.txt/x", stat("/etc/hello.txt/x", &st), &st);
    show_stat("stat /etc/hello.txt/", stat("/etc/hello.txt/", &st), &st);
    show_stat("stat empty path", stat("", &st), &st);

    SHOW("open missing", open("/nope", O_RDONLY));
    SHOW("open dir O_DIRECTORY", (fd = open("/data", O_RDONLY | O_DIRECTORY)) >= 3 ? 3 : fd);
    SHOW("read a directory", read(fd, buf, sizeof(buf)));
    int sub = openat(fd, "sub/c.txt", O_RDONLY);
    SHOW("openat relative to a directory", sub >= 3 ? 3 : sub);
    n = read(sub, buf, sizeof(buf) - 1);
    buf[n > 0 ? n : 0] = 0;
    printf("sub/c.txt: %s", buf);
    show_stat("fstatat relative", fstatat(fd, "a.txt", &st, 0), &st);
    show_stat("fstatat AT_EMPTY_PATH", fstatat(sub, "", &st, AT_EMPTY_PATH), &st);
    SHOW("openat relative to a file", openat(sub, "x", O_RDONLY));
    SHOW("openat bad dirfd", openat(77, "x", O_RDONLY));
    close(sub);
    close(fd);
    SHOW("open file O_DIRECTORY", open("/etc/hello.txt", O_RDONLY | O_DIRECTORY));
    SHOW("open link O_NOFOLLOW", open("/etc/hello-link", O_RDONLY | O_NOFOLLOW));
    fd = open("/etc/hello-link", O_RDONLY);
    n = read(fd, buf, 5);
    printf("through the link: %.5s\n", buf);
    close(fd);
    char longname[300];
    memset(longname, 'a', sizeof(longname));
    longname[0] = '/';
    longname[299] = 0;
    SHOW("open a 298-byte name", open(longname, O_RDONLY));
    SHOW("open O_CREAT|O_EXCL existing", open("/etc/hello.txt", O_RDONLY | O_CREAT | O_EXCL, 0644));
    SHOW("lowest descriptor reused", (fd = open("/etc/hello.txt", O_RDONLY)));
    close(fd);
    return 0;
}
