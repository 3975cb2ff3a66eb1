/*
 * syncwrite: copy LEN bytes of SRC from byte OFF into DST (made, or cut to
 * nothing), in pieces of 1,000 bytes, and make them durable the way MODE
 * says: osync (opened O_SYNC), dsync (O_DSYNC), fsync or fdatasync (once,
 * after the writes). Exits 0 only once the call that makes them durable
 * has returned; the power-loss test (tests/host/test_data_mount.py) then
 * expects every byte on the disk whatever happens to the machine.
 *
 *   syncwrite SRC OFF LEN DST MODE
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: syncwrite SRC OFF LEN DST osync|dsync|fsync|fdatasync\n");
        return 2;
    }
    long off = atol(argv[2]), len = atol(argv[3]);
    const char *mode = argv[5];
    int flags = O_WRONLY | O_CREAT | O_TRUNC;
    if (!strcmp(mode, "osync"))
        flags |= O_SYNC;
    else if (!strcmp(mode, "dsync"))
        flags |= O_DSYNC;
    else if (strcmp(mode, "fsync") && strcmp(mode, "fdatasync"))
        return 2;
    int in = open(argv[1], O_RDONLY), out = open(argv[4], flags, 0644);
    if (in < 0 || out < 0 || lseek(in, off, SEEK_SET) != off) {
        perror("syncwrite: open");
        return 1;
    }
    char buf[1000];
    while (len > 0) {
        long want = len < (long)sizeof(buf) ? len : (long)sizeof(buf);
        if (read(in, buf, (size_t)want) != want || write(out, buf, (size_t)want) != want) {
            perror("syncwrite: copy");
            return 1;
        }
        len -= want;
    }
    if ((!strcmp(mode, "fsync") && fsync(out)) || (!strcmp(mode, "fdatasync") && fdatasync(out))) {
        perror("syncwrite: sync");
        return 1;
    }
    return close(out) ? 1 : 0;
}
