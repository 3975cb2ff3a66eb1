/* Hard links and symbolic links in /tmp: link, linkat (AT_SYMLINK_FOLLOW,
 * AT_EMPTY_PATH), symlink, readlink, lstat, opening through links
 * (O_NOFOLLOW, O_CREAT through a dangling link), loops, st_nlink. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lxtest.h"

#define D "/tmp/fslinks"

static void rl(const char *path)
{
    char buf[64] = { 0 };
    long n = readlink(path, buf, sizeof(buf) - 1);
    printf("readlink %s: %ld %s\n", path, n, n >= 0 ? buf : errname(errno));
}

static void lst(const char *path)
{
    struct stat st;
    if (lstat(path, &st)) {
        printf("lstat %s: %s\n", path, errname(errno));
        return;
    }
    printf("lstat %s: type %o perm %o size %ld nlink %ld\n", path, st.st_mode & S_IFMT, st.st_mode & 07777,
           (long)st.st_size, (long)st.st_nlink);
}

int main(void)
{
    struct stat a, b;
    mkdir(D, 0755);
    write_text(D "/f", "the file");

    /* Hard links. */
    SHOW("link f g", link(D "/f", D "/g"));
    stat(D "/f", &a);
    stat(D "/g", &b);
    printf("same inode %d, nlink %ld\n", a.st_ino == b.st_ino, (long)a.st_nlink);
    SHOW("link onto an existing name", link(D "/f", D "/g"));
    SHOW("link a missing file", link(D "/none", D "/h"));
    SHOW("link a directory", link(D, D "/dirlink"));
    SHOW("link into a missing directory", link(D "/f", D "/no/h"));
    SHOW("link to name/", link(D "/f", D "/h/"));
    SHOW("link with a bad flag", linkat(AT_FDCWD, D "/f", AT_FDCWD, D "/h", 0x1));
    write_text(D "/g", "changed through g");
    show_text("f after writing g", D "/f");
    SHOW("unlink f", unlink(D "/f"));
    SHOW("nlink of g", (stat(D "/g", &b), (long)b.st_nlink));
    show_text("g", D "/g");
    int fd = open(D "/g", O_RDONLY);
    SHOW("linkat AT_EMPTY_PATH from a descriptor", linkat(fd, "", AT_FDCWD, D "/f", AT_EMPTY_PATH));
    SHOW("nlink", (fstat(fd, &b), (long)b.st_nlink));
    close(fd);
    fd = open(D "/f", O_RDONLY);
    unlink(D "/f");
    SHOW("linkat of an unlinked file", linkat(fd, "", AT_FDCWD, D "/f2", AT_EMPTY_PATH));
    close(fd);

    /* Symbolic links. */
    SHOW("symlink g s", symlink("g", D "/s"));
    rl(D "/s");
    lst(D "/s");
    show_text("through s", D "/s");
    SHOW("symlink onto an existing name", symlink("x", D "/s"));
    SHOW("symlink with an empty target", symlink("", D "/e"));
    SHOW("symlink to name/", symlink("g", D "/t/"));
    SHOW("readlink of a file", readlink(D "/g", (char[8]){ 0 }, 8));
    SHOW("readlink with size 0", readlink(D "/s", (char[8]){ 0 }, 0));
    char small[3];
    SHOW("readlink cut to 2 bytes", readlink(D "/s", small, 2));
    SHOW("symlink /tmp/fslinks/dir-link -> /tmp/fslinks", symlink(D, D "/dl"));
    show_text("g through a directory link", D "/dl/dl/dl/g");
    SHOW("open with O_NOFOLLOW", open(D "/s", O_RDONLY | O_NOFOLLOW));
    SHOW("open O_CREAT|O_EXCL on a link", open(D "/s", O_WRONLY | O_CREAT | O_EXCL, 0644));
    SHOW("symlink to nothing", symlink("target", D "/dangling"));
    show_text("dangling", D "/dangling");
    fd = open(D "/dangling", O_WRONLY | O_CREAT, 0600);
    SHOW("O_CREAT through a dangling link makes its target", write(fd, "made", 4));
    close(fd);
    show_text("target", D "/target");
    lst(D "/target");
    SHOW("symlink loop a -> b", symlink("loopb", D "/loopa"));
    SHOW("symlink loop b -> a", symlink("loopa", D "/loopb"));
    show_text("open a loop", D "/loopa");
    SHOW("stat a loop", stat(D "/loopa", &a));
    SHOW("lstat a loop", lstat(D "/loopa", &a));
    SHOW("chdir through a link", chdir(D "/dl"));
    char cwd[128];
    printf("getcwd: %s\n", getcwd(cwd, sizeof(cwd)) ? cwd : errname(errno));
    chdir("/");
    SHOW("unlink the link", unlink(D "/s"));
    show_text("g stays", D "/g");
    SHOW("rename over a link replaces the link", (symlink("g", D "/s2"), write_text(D "/n", "new"), rename(D "/n", D "/s2")));
    lst(D "/s2");
    show_text("g untouched", D "/g");
    SHOW("linkat a link without AT_SYMLINK_FOLLOW", (symlink("g", D "/s3"), linkat(AT_FDCWD, D "/s3", AT_FDCWD, D "/s4", 0)));
    lst(D "/s4");
    SHOW("linkat a link with AT_SYMLINK_FOLLOW", linkat(AT_FDCWD, D "/s3", AT_FDCWD, D "/s5", AT_SYMLINK_FOLLOW));
    lst(D "/s5");
    lst(D "/g");
    SHOW("a link's target in a directory fd", symlinkat("g", open(D, O_RDONLY | O_DIRECTORY), "s6"));
    rl(D "/s6");

    const char *names[] = { "g", "f2", "dl", "dangling", "target", "loopa", "loopb", "s2", "s3", "s4", "s5", "s6" };
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(cwd, sizeof(cwd), D "/%s", names[i]);
        unlink(cwd);
    }
    SHOW("rmdir " D, rmdir(D));
    return 0;
}
