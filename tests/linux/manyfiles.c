/*
 * Many files in one directory: `manyfiles DIR N` makes DIR, N empty files
 * and N/10 directories in it, lists it (getdents64, a small buffer at a
 * time: every name once), stats some, renames some, removes everything,
 * and prints what Linux would: counts and errors, not names (an order of
 * listing differs between file systems). More files than a table sized at
 * start would hold (the personality's grow as they fill).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lxtest.h"

struct linux_dirent64 { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; };

/* Entries of dir (not . and ..), by type. */
static void list(const char *dir, long *files, long *dirs, long *sum)
{
    char buf[1024];
    *files = *dirs = *sum = 0;
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
        if (n <= 0)
            break;
        for (long at = 0; at < n;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + at);
            at += d->reclen;
            if (!strcmp(d->name, ".") || !strcmp(d->name, ".."))
                continue;
            *(d->type == DT_DIR ? dirs : files) += 1;
            *sum += atol(d->name + 1);
        }
    }
    close(fd);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp/many";
    long n = argc > 2 ? atol(argv[2]) : 10000;
    char path[256];
    SHOW("mkdir", mkdir(dir, 0755));
    long made = 0, dirs_made = 0;
    for (long i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/f%ld", dir, i);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        made += fd >= 0;
        if (fd >= 0)
            close(fd);
        if (i % 10 == 0) {
            snprintf(path, sizeof(path), "%s/d%ld", dir, i);
            dirs_made += mkdir(path, 0755) == 0;
        }
    }
    printf("made %ld files and %ld directories of %ld\n", made, dirs_made, n);
    long files, dirs, sum;
    list(dir, &files, &dirs, &sum);
    printf("listed %ld files and %ld directories, numbers summing to %ld\n", files, dirs, sum);
    struct stat st;
    snprintf(path, sizeof(path), "%s/f%ld", dir, n - 1);
    SHOW("stat the last file", stat(path, &st));
    printf("its size %ld, mode %o\n", (long)st.st_size, (unsigned)st.st_mode);
    SHOW("stat the directory", stat(dir, &st));
    printf("its links %ld\n", (long)st.st_nlink);
    snprintf(path, sizeof(path), "%s/f%ld", dir, n);
    SHOW("stat a file never made", stat(path, &st));
    long renamed = 0;
    for (long i = 0; i < n; i += 7) {
        char to[256];
        snprintf(path, sizeof(path), "%s/f%ld", dir, i);
        snprintf(to, sizeof(to), "%s/g%ld", dir, i);
        renamed += rename(path, to) == 0;
    }
    printf("renamed %ld\n", renamed);
    list(dir, &files, &dirs, &sum);
    printf("listed %ld files and %ld directories, numbers summing to %ld\n", files, dirs, sum);
    long gone = 0;
    for (long i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%c%ld", dir, i % 7 ? 'f' : 'g', i);
        gone += unlink(path) == 0;
        if (i % 10 == 0) {
            snprintf(path, sizeof(path), "%s/d%ld", dir, i);
            gone += rmdir(path) == 0;
        }
    }
    printf("removed %ld\n", gone);
    SHOW("rmdir", rmdir(dir));
    return 0;
}
