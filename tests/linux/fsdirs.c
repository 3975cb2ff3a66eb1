/* Directories in /tmp: mkdir, rmdir, unlinkat, rename (over files and
 * directories, into itself, RENAME_NOREPLACE and RENAME_EXCHANGE),
 * getdents64 seeing new entries and surviving removals while it reads,
 * st_nlink, the working directory renamed and removed. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lxtest.h"

#define D "/tmp/fsdirs"

struct d64 { unsigned long ino; long off; unsigned short reclen; unsigned char type; char name[]; };

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names in dir, sorted, with their types. */
static void list(const char *dir)
{
    static char names[64][64];
    char *sorted[64];
    int n = 0;
    char buf[1024];
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        printf("list %s: %s\n", dir, errname(errno));
        return;
    }
    long got;
    while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
        for (long at = 0; at < got && n < 64; at += ((struct d64 *)(buf + at))->reclen) {
            struct d64 *e = (struct d64 *)(buf + at);
            snprintf(names[n], sizeof(names[n]), "%s:%c", e->name, e->type == DT_DIR ? 'd' : e->type == DT_REG ? 'f' :
                     e->type == DT_LNK ? 'l' : '?');
            sorted[n] = names[n];
            n++;
        }
    close(fd);
    qsort(sorted, (size_t)n, sizeof(sorted[0]), by_name);
    printf("list %s:", dir);
    for (int i = 0; i < n; i++)
        printf(" %s", sorted[i]);
    printf("\n");
}

static long nlink_of(const char *path)
{
    struct stat st;
    return stat(path, &st) ? -errno : (long)st.st_nlink;
}

int main(void)
{
    SHOW("mkdir", mkdir(D, 0755));
    SHOW("mkdir again", mkdir(D, 0755));
    SHOW("mkdir in a missing directory", mkdir(D "/no/x", 0755));
    SHOW("mkdir with a trailing slash", mkdir(D "/s/", 0755));
    SHOW("mkdir /tmp/.", mkdir("/tmp/.", 0755));
    SHOW("mkdir /", mkdir("/", 0755));
    SHOW("nlink of a new directory", nlink_of(D));
    long tmp_links = nlink_of("/tmp");
    SHOW("mkdir a, b, b/c", mkdir(D "/a", 0700) | mkdir(D "/b", 0755) | mkdir(D "/b/c", 0755));
    printf("nlink: D %ld a %ld b %ld /tmp grew by %ld\n", nlink_of(D), nlink_of(D "/a"), nlink_of(D "/b"),
           nlink_of("/tmp") - tmp_links);
    struct stat st;
    SHOW("mode of a", (stat(D "/a", &st), (long)(st.st_mode & 07777)));
    write_text(D "/f", "file f");
    write_text(D "/b/c/g", "file g");
    SHOW("mkdir under a file", mkdir(D "/f/x", 0755));
    SHOW("mkdir over a file", mkdir(D "/f", 0755));
    list(D);

    /* Removal. */
    SHOW("rmdir a non-empty directory", rmdir(D "/b"));
    SHOW("rmdir a file", rmdir(D "/f"));
    SHOW("unlink a directory", unlink(D "/a"));
    SHOW("unlink a file with a trailing slash", unlink(D "/f/"));
    SHOW("rmdir a missing one", rmdir(D "/zz"));
    SHOW("rmdir .", rmdir(D "/."));
    SHOW("rmdir ..", rmdir(D "/b/.."));
    SHOW("rmdir /", rmdir("/"));
    SHOW("unlinkat with a bad flag", unlinkat(AT_FDCWD, D "/f", 0x4));
    int dfd = open(D, O_RDONLY | O_DIRECTORY);
    SHOW("unlinkat relative with AT_REMOVEDIR", unlinkat(dfd, "a", AT_REMOVEDIR));
    SHOW("unlinkat from a file descriptor that is not a directory",
         unlinkat(open(D "/f", O_RDONLY), "x", 0));
    list(D);

    /* Rename. */
    write_text(D "/x", "file x");
    SHOW("rename x to y", rename(D "/x", D "/y"));
    show_text("y", D "/y");
    SHOW("stat x", stat(D "/x", &st));
    SHOW("rename f over y", rename(D "/f", D "/y"));
    show_text("y now", D "/y");
    SHOW("rename a missing file", rename(D "/f", D "/z"));
    SHOW("rename into a missing directory", rename(D "/y", D "/no/y"));
    SHOW("rename a file over a directory", rename(D "/y", D "/b"));
    mkdir(D "/e", 0755);
    SHOW("rename a directory over a file", rename(D "/e", D "/y"));
    SHOW("rename a directory over a non-empty one", rename(D "/e", D "/b"));
    SHOW("rename a directory into itself", rename(D "/b", D "/b/c/inside"));
    SHOW("rename a directory onto its own child", rename(D "/b/c", D "/b/c/g"));
    SHOW("rename onto its own parent", rename(D "/b/c", D "/b"));
    SHOW("rename a file with a trailing slash", rename(D "/y/", D "/w"));
    SHOW("rename .", rename(D "/.", D "/w"));
    mkdir(D "/empty", 0755);
    SHOW("rename a directory over an empty one", rename(D "/e", D "/empty"));
    SHOW("e is gone", stat(D "/e", &st));
    SHOW("rename b/c to c (up a level)", rename(D "/b/c", D "/c"));
    printf("nlink after moving: D %ld b %ld\n", nlink_of(D), nlink_of(D "/b"));
    show_text("c/g", D "/c/g");
    SHOW("rename to itself", rename(D "/y", D "/y"));
    link(D "/y", D "/y2");
    SHOW("rename onto another link of the same file", rename(D "/y", D "/y2"));
    SHOW("both names stay", (stat(D "/y", &st) == 0) + (stat(D "/y2", &st) == 0));
    unlink(D "/y2");
    write_text(D "/p", "file p");
    SHOW("RENAME_NOREPLACE onto an existing file", syscall(SYS_renameat2, AT_FDCWD, D "/p", AT_FDCWD, D "/y", 1));
    SHOW("RENAME_NOREPLACE to a new name", syscall(SYS_renameat2, AT_FDCWD, D "/p", AT_FDCWD, D "/q", 1));
    SHOW("RENAME_EXCHANGE q and y", syscall(SYS_renameat2, AT_FDCWD, D "/q", AT_FDCWD, D "/y", 2));
    show_text("q", D "/q");
    show_text("y", D "/y");
    SHOW("RENAME_EXCHANGE a file and a directory", syscall(SYS_renameat2, AT_FDCWD, D "/q", AT_FDCWD, D "/c", 2));
    show_text("c (was q)", D "/c");
    show_text("q/g (was c/g)", D "/q/g");
    SHOW("RENAME_EXCHANGE with a missing one", syscall(SYS_renameat2, AT_FDCWD, D "/q", AT_FDCWD, D "/none", 2));
    SHOW("RENAME_EXCHANGE|RENAME_NOREPLACE", syscall(SYS_renameat2, AT_FDCWD, D "/q", AT_FDCWD, D "/y", 3));
    SHOW("renameat2 with a bad flag", syscall(SYS_renameat2, AT_FDCWD, D "/q", AT_FDCWD, D "/y", 8));
    list(D);

    /* getdents sees new entries and survives removals while it reads. */
    mkdir(D "/many", 0755);
    char name[64];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), D "/many/file-with-a-long-name-%02d", i);
        write_text(name, "x");
    }
    int fd = open(D "/many", O_RDONLY | O_DIRECTORY);
    char buf[200];
    long got, removed = 0;
    while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
        for (long at = 0; at < got; at += ((struct d64 *)(buf + at))->reclen) {
            struct d64 *e = (struct d64 *)(buf + at);
            if (e->name[0] == '.')
                continue;
            removed += unlinkat(fd, e->name, 0) == 0;
        }
    printf("removed while reading: %ld, last getdents %ld\n", removed, got);
    SHOW("rmdir many", rmdir(D "/many"));
    SHOW("getdents of the removed directory", syscall(SYS_getdents64, fd, buf, sizeof(buf)));
    SHOW("create in the removed directory", openat(fd, "new", O_WRONLY | O_CREAT, 0644));
    close(fd);

    /* The working directory renamed, then removed. */
    mkdir(D "/w1", 0755);
    SHOW("chdir w1", chdir(D "/w1"));
    SHOW("rename w1 to w2", rename(D "/w1", D "/w2"));
    char cwd[256];
    printf("getcwd: %s\n", getcwd(cwd, sizeof(cwd)) ? cwd : errname(errno));
    write_text("rel", "relative");
    show_text("w2/rel", D "/w2/rel");
    unlink("rel");
    SHOW("rmdir the working directory", rmdir(D "/w2"));
    SHOW("getcwd of a removed directory", syscall(SYS_getcwd, cwd, sizeof(cwd)));
    SHOW("create in it", open("x", O_WRONLY | O_CREAT, 0644));
    SHOW("mkdir in it", mkdir("x", 0755));
    SHOW("stat . in it", stat(".", &st));
    SHOW("chdir ..", chdir(".."));
    printf("getcwd: %s\n", getcwd(cwd, sizeof(cwd)) ? cwd : errname(errno));

    /* Clean up. */
    unlink(D "/c");
    unlink(D "/q/g");
    rmdir(D "/q");
    unlink(D "/y");
    rmdir(D "/empty");
    rmdir(D "/b");
    rmdir(D "/s");
    list(D);
    SHOW("rmdir " D, rmdir(D));
    SHOW("nlink of /tmp back", nlink_of("/tmp") - tmp_links);
    return 0;
}
