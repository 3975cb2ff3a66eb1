/* open's flags and errors: O_CREAT (the mode less the umask), O_EXCL,
 * O_TRUNC (with O_RDONLY too), O_APPEND, O_DIRECTORY, O_NOFOLLOW (with
 * O_PATH, and O_DIRECTORY), O_CLOEXEC, what F_GETFL keeps, trailing
 * slashes, long names, and the order Linux checks them in. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/stat.h>
#include "lxtest.h"

static void show_mode(const char *what, const char *path)
{
    struct stat st;
    if (lstat(path, &st))
        printf("%s: %s\n", what, errname(errno));
    else
        printf("%s: mode %o size %ld\n", what, st.st_mode, (long)st.st_size);
}

/* Open, print the result (the flags F_GETFL reports), close. */
static void try_open(const char *what, const char *path, int flags, int mode)
{
    int fd = open(path, flags, mode);
    if (fd < 0) {
        printf("%s: %s\n", what, errname(errno));
        return;
    }
    printf("%s: ok, F_GETFL %o F_GETFD %d\n", what, fcntl(fd, F_GETFL), fcntl(fd, F_GETFD));
    close(fd);
}

int main(void)
{
    umask(022);
    mkdir("/tmp/of", 0755);
    mkdir("/tmp/of/dir", 0755);
    symlink("/tmp/of/file", "/tmp/of/link");
    symlink("/tmp/of/dir", "/tmp/of/dirlink");
    symlink("/tmp/of/none", "/tmp/of/dangling");
    try_open("O_CREAT a new file, mode 0666", "/tmp/of/file", O_WRONLY | O_CREAT, 0666);
    show_mode("  made", "/tmp/of/file");
    try_open("O_CREAT | O_EXCL of it", "/tmp/of/file", O_WRONLY | O_CREAT | O_EXCL, 0600);
    try_open("O_EXCL without O_CREAT", "/tmp/of/file", O_RDONLY | O_EXCL, 0);
    try_open("O_CREAT | O_EXCL through a link", "/tmp/of/link", O_WRONLY | O_CREAT | O_EXCL, 0600);
    try_open("O_CREAT | O_EXCL of a dangling link", "/tmp/of/dangling", O_WRONLY | O_CREAT | O_EXCL, 0600);
    try_open("O_CREAT of a dangling link", "/tmp/of/dangling", O_WRONLY | O_CREAT, 0600);
    show_mode("  made what it names", "/tmp/of/none");
    try_open("O_CREAT, mode 07777", "/tmp/of/all", O_WRONLY | O_CREAT, 07777);
    show_mode("  made", "/tmp/of/all");
    try_open("O_CREAT of an existing file keeps its mode", "/tmp/of/all", O_WRONLY | O_CREAT, 0600);
    show_mode("  kept", "/tmp/of/all");

    /* O_TRUNC, O_APPEND. */
    write_text("/tmp/of/file", "0123456789");
    try_open("O_TRUNC with O_RDONLY", "/tmp/of/file", O_RDONLY | O_TRUNC, 0);
    show_mode("  truncated", "/tmp/of/file");
    write_text("/tmp/of/file", "abc");
    int fd = open("/tmp/of/file", O_RDWR | O_APPEND);
    lseek(fd, 0, SEEK_SET);
    write(fd, "d", 1);
    printf("O_APPEND writes at the end: position %ld\n", (long)lseek(fd, 0, SEEK_CUR));
    char buf[16] = { 0 };
    pread(fd, buf, sizeof(buf) - 1, 0);
    printf("  the file: %s\n", buf);
    close(fd);
    try_open("O_TRUNC of a directory", "/tmp/of/dir", O_RDONLY | O_TRUNC, 0);
    try_open("O_TRUNC of /dev/null", "/dev/null", O_WRONLY | O_TRUNC, 0);

    /* O_DIRECTORY, O_NOFOLLOW, O_PATH. */
    try_open("O_DIRECTORY of a directory", "/tmp/of/dir", O_RDONLY | O_DIRECTORY, 0);
    try_open("O_DIRECTORY of a file", "/tmp/of/file", O_RDONLY | O_DIRECTORY, 0);
    try_open("O_DIRECTORY through a link to a directory", "/tmp/of/dirlink", O_RDONLY | O_DIRECTORY, 0);
    try_open("O_DIRECTORY | O_NOFOLLOW of a link to a directory", "/tmp/of/dirlink", O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
    try_open("O_NOFOLLOW of a link", "/tmp/of/link", O_RDONLY | O_NOFOLLOW, 0);
    try_open("O_NOFOLLOW of a file", "/tmp/of/file", O_RDONLY | O_NOFOLLOW, 0);
    try_open("O_NOFOLLOW with a link before the last name", "/tmp/of/dirlink/../file", O_RDONLY | O_NOFOLLOW, 0);
    try_open("O_NOFOLLOW | O_PATH of a link", "/tmp/of/link", O_PATH | O_NOFOLLOW, 0);
    fd = open("/tmp/of/link", O_PATH | O_NOFOLLOW);
    struct stat st;
    fstat(fd, &st);
    printf("  it is the link: %d\n", S_ISLNK(st.st_mode));
    SHOW("  read from it", read(fd, buf, 1));
    close(fd);
    try_open("O_CREAT | O_NOFOLLOW of a link", "/tmp/of/link", O_WRONLY | O_CREAT | O_NOFOLLOW, 0600);
    try_open("O_PATH of a directory, O_WRONLY ignored", "/tmp/of/dir", O_PATH | O_WRONLY, 0);
    try_open("O_CREAT | O_DIRECTORY of an existing directory", "/tmp/of/dir", O_RDONLY | O_CREAT | O_DIRECTORY, 0600);

    /* Directories refuse writing. */
    try_open("O_WRONLY of a directory", "/tmp/of/dir", O_WRONLY, 0);
    try_open("O_RDWR of a directory", "/tmp/of/dir", O_RDWR, 0);
    try_open("O_CREAT of a directory", "/tmp/of/dir", O_RDONLY | O_CREAT, 0600);
    try_open("O_CREAT | O_EXCL of a directory", "/tmp/of/dir", O_RDONLY | O_CREAT | O_EXCL, 0600);

    /* O_CLOEXEC, and what F_GETFL reports. */
    try_open("O_CLOEXEC", "/tmp/of/file", O_RDONLY | O_CLOEXEC, 0);
    try_open("O_RDWR | O_APPEND | O_NONBLOCK", "/tmp/of/file", O_RDWR | O_APPEND | O_NONBLOCK, 0);
    try_open("O_WRONLY | O_CREAT | O_TRUNC | O_EXCL (a new one)", "/tmp/of/new", O_WRONLY | O_CREAT | O_TRUNC | O_EXCL, 0644);
    try_open("O_RDONLY | O_NOCTTY | O_LARGEFILE", "/tmp/of/file", O_RDONLY | O_NOCTTY | O_LARGEFILE, 0);
    try_open("O_RDONLY | O_DIRECTORY | O_NOFOLLOW of a directory", "/tmp/of/dir", O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
    try_open("O_SYNC | O_DSYNC", "/tmp/of/file", O_WRONLY | O_SYNC, 0);
    fd = open("/tmp/of/file", O_WRONLY);
    SHOW("read from O_WRONLY", read(fd, buf, 1));
    close(fd);
    fd = open("/tmp/of/file", O_RDONLY);
    SHOW("write to O_RDONLY", write(fd, "x", 1));
    close(fd);

    /* Names. */
    try_open("a file with a trailing slash", "/tmp/of/file/", O_RDONLY, 0);
    try_open("O_CREAT with a trailing slash", "/tmp/of/newer/", O_WRONLY | O_CREAT, 0644);
    try_open("a directory with a trailing slash", "/tmp/of/dir/", O_RDONLY, 0);
    try_open("a missing directory on the way", "/tmp/of/nodir/x", O_RDONLY, 0);
    try_open("O_CREAT in a missing directory", "/tmp/of/nodir/x", O_WRONLY | O_CREAT, 0644);
    try_open("a file on the way", "/tmp/of/file/x", O_RDONLY, 0);
    try_open("O_CREAT under a file", "/tmp/of/file/x", O_WRONLY | O_CREAT, 0644);
    char name[300] = "/tmp/of/";
    memset(name + 8, 'n', 256);
    try_open("a name of 256 bytes", name, O_RDONLY, 0);
    try_open("O_CREAT with a name of 256 bytes", name, O_WRONLY | O_CREAT, 0644);
    name[8 + 255] = 0;
    try_open("O_CREAT with a name of 255 bytes", name, O_WRONLY | O_CREAT, 0644);
    unlink(name);
    try_open("an empty path", "", O_RDONLY, 0);
    try_open("O_CREAT of an empty path", "", O_WRONLY | O_CREAT, 0644);
    try_open("O_CREAT | O_EXCL in /proc", "/proc/x", O_WRONLY | O_CREAT | O_EXCL, 0644);

    const char *names[] = { "file", "all", "none", "new", "link", "dirlink", "dangling" };
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[64];
        snprintf(path, sizeof(path), "/tmp/of/%s", names[i]);
        unlink(path);
    }
    rmdir("/tmp/of/dir");
    SHOW("cleaned up", rmdir("/tmp/of"));
    return 0;
}
