/* getdents64 and readdir over directories of the root archive. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lxtest.h"

struct d64 { unsigned long ino; long off; unsigned short reclen; unsigned char type; char name[]; };

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* List a directory, sorted (the order entries come in is the file system's). */
static void list(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        printf("%s: cannot open: %s\n", path, errname(errno));
        return;
    }
    char *names[64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64) {
        char line[300];
        snprintf(line, sizeof(line), "%s (%s)", e->d_name, e->d_type == DT_DIR ? "dir" : e->d_type == DT_REG ?
                 "file" : e->d_type == DT_LNK ? "link" : e->d_type == DT_CHR ? "chr" : "?");
        names[n++] = strdup(line);
    }
    closedir(d);
    qsort(names, n, sizeof(names[0]), cmp);
    printf("%s:", path);
    for (int i = 0; i < n; i++)
        printf(" %s", names[i]);
    printf("\n");
}

int main(void)
{
    list("/data");
    list("/data/sub");
    list("/etc");
    list("/");
    list("/data/a.txt");
    int fd = open("/data", O_RDONLY | O_DIRECTORY);
    char buf[512];
    SHOW("getdents64 with 10 bytes", syscall(SYS_getdents64, fd, buf, 10));
    long total = 0, got, entries = 0;
    while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
        for (long at = 0; at < got; at += ((struct d64 *)(buf + at))->reclen)
            entries++;
        total += got;
    }
    printf("entries in /data: %ld, last call: %ld\n", entries, got);
    SHOW("getdents64 at the end", syscall(SYS_getdents64, fd, buf, sizeof(buf)));
    SHOW("rewind", lseek(fd, 0, SEEK_SET));
    got = syscall(SYS_getdents64, fd, buf, 24);
    printf("one small entry after rewind: %ld name %s\n", got, got > 0 ? ((struct d64 *)buf)->name : "-");
    close(fd);
    fd = open("/data/a.txt", O_RDONLY);
    SHOW("getdents64 on a file", syscall(SYS_getdents64, fd, buf, sizeof(buf)));
    SHOW("getdents64 on a bad descriptor", syscall(SYS_getdents64, 55, buf, sizeof(buf)));
    return 0;
}
