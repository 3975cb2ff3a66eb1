/*
 * fstest: the file service from a client's side, the same in both
 * placements (systems/fs-kernel.toml and fs-user.toml differ only there).
 * Files under /boot and /tmp, every operation, bad input; two clients
 * (clients.c: quotas, ownership, per-client descriptors; fspeer is this
 * program with role=peer); then, where the service can crash (user
 * placement), a crash in the middle of the requests: the request in
 * flight fails, the service comes back, and everything written before
 * reads back. TAP.
 */
#include "fstest.h"

uint32_t fs;

int64_t write_file(const char *path, const void *data, uint64_t len)
{
    uint32_t fd;
    uint64_t n = 0;
    int64_t err = fs_open(fs, P(path), FS_O_WRITE | FS_O_CREATE | FS_O_TRUNC, &fd);
    if (err)
        return err;
    err = fs_write(fs, fd, (void *)data, len, &n);
    fs_close(fs, fd);
    return err ? err : (int64_t)n;
}

int64_t read_file(const char *path, void *buf, uint64_t len)
{
    uint32_t fd;
    uint64_t n = 0;
    int64_t err = fs_open(fs, P(path), FS_O_READ, &fd);
    if (err)
        return err;
    err = fs_read(fs, fd, buf, len, &n);
    fs_close(fs, fd);
    return err ? err : (int64_t)n;
}

uint8_t big[40000], back[40000];

static void basics(void)
{
    uint64_t size;
    uint32_t kind, writable, fd;
    tap_ok(fs_stat(fs, P("/boot/fstest"), &size, &kind, &writable) == 0 && kind == FS_KIND_FILE && size > 1000 &&
           !writable, "fs: a boot image file is listed read-only with its size");
    uint8_t head[4];
    tap_ok(read_file("/boot/fstest", head, 4) == 4 && memcmp(head, "\177ELF", 4) == 0,
           "fs: a boot image file reads (in place)");
    tap_ok(fs_open(fs, P("/boot/fstest"), FS_O_WRITE, &fd) == -E_PERM, "fs: boot image files cannot be written");
    char name[48];
    uint32_t len = 0;
    bool listed = false;
    for (uint32_t i = 0; fs_readdir(fs, P("/boot"), i, name, &len, &kind) == 0; i++)
        listed |= len == 6 && memcmp(name, "fstest", 6) == 0;
    tap_ok(listed, "fs: readdir lists /boot");

    for (unsigned i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)(i * 7 + 3);
    tap_ok(write_file("/tmp/big", big, sizeof(big)) == (int64_t)sizeof(big) &&
           read_file("/tmp/big", back, sizeof(back)) == (int64_t)sizeof(back) && memcmp(big, back, sizeof(big)) == 0,
           "fs: a 40 KB file round-trips through /tmp");
    tap_ok(fs_mkdir(fs, P("/tmp/dir")) == 0 && fs_mkdir(fs, P("/tmp/dir")) == -E_BUSY &&
           write_file("/tmp/dir/a", "alpha", 5) == 5, "fs: mkdir, and files inside it");
    tap_ok(fs_rename(fs, P("/tmp/dir/a"), P("/tmp/dir/b")) == 0 && read_file("/tmp/dir/a", back, 8) == -E_NOENT &&
           read_file("/tmp/dir/b", back, 8) == 5 && memcmp(back, "alpha", 5) == 0, "fs: rename moves a file");
    tap_ok(fs_unlink(fs, P("/tmp/dir")) == -E_BUSY && fs_unlink(fs, P("/tmp/dir/b")) == 0 &&
           fs_unlink(fs, P("/tmp/dir")) == 0 && fs_stat(fs, P("/tmp/dir"), &size, &kind, &writable) == -E_NOENT,
           "fs: unlink removes files and empty directories only");

    uint64_t pos = 0, n = 0;
    tap_ok(fs_open(fs, P("/tmp/seek"), FS_O_READ | FS_O_WRITE | FS_O_CREATE, &fd) == 0 &&
           fs_write(fs, fd, "0123456789", 10, &n) == 0 && fs_seek(fs, fd, 3, 0, &pos) == 0 && pos == 3 &&
           fs_read(fs, fd, back, 4, &n) == 0 && n == 4 && memcmp(back, "3456", 4) == 0 &&
           fs_seek(fs, fd, -2, 2, &pos) == 0 && pos == 8 && fs_seek(fs, fd, -20, 1, &pos) == -E_INVAL,
           "fs: seek from the start, the current position and the end");
    fs_close(fs, fd);
    tap_ok(fs_open(fs, P("/tmp/seek"), FS_O_WRITE | FS_O_APPEND, &fd) == 0 && fs_write(fs, fd, "ab", 2, &n) == 0 &&
           fs_close(fs, fd) == 0 && read_file("/tmp/seek", back, 64) == 12, "fs: append writes at the end");

    tap_ok(fs_open(fs, P("relative"), FS_O_READ, &fd) == -E_INVAL && fs_open(fs, P("/tmp/../x"), FS_O_READ, &fd) == -E_INVAL &&
           fs_open(fs, P("/nowhere/x"), FS_O_READ, &fd) == -E_NOENT && fs_open(fs, P("/tmp/x"), 0, &fd) == -E_INVAL,
           "fs: bad paths and flags are refused");
    tap_ok(fs_read(fs, 77, back, 4, &n) == -E_BADHANDLE && fs_close(fs, 0) == -E_BADHANDLE,
           "fs: unknown descriptors are refused");
    tap_ok(fs_open(fs, P("/tmp/big"), FS_O_READ, &fd) == 0 && fs_read(fs, fd, (void *)0x10, 4, &n) == -E_FAULT &&
           fs_read(fs, fd, (void *)0xffffff8040000000ull, 4, &n) == -E_FAULT,
           "fs: a buffer the client cannot reach is refused");
    fs_close(fs, fd);
    tap_ok(fs_write(fs, 1, big, (uint64_t)1 << 40, &n) == -E_BADHANDLE || fs_write(fs, 1, big, (uint64_t)1 << 40, &n) == -E_RANGE,
           "fs: an impossible length is refused");
}

static void crash(void)
{
    const char *text = "written before the crash";
    write_file("/tmp/keep", text, strlen(text));
    int64_t r = fs_crash(fs);
    if (r == -E_PERM) {
        tap_ok(true, "fs: (kernel placement) crash refused with E_PERM");
        return;
    }
    tap_ok(r == -E_CLOSED, "fs: the request in flight when the service crashed fails (%s)", error_str(r));
    int64_t n = read_file("/tmp/keep", back, 64);
    tap_ok(n == (int64_t)strlen(text) && memcmp(back, text, (size_t)n) == 0,
           "fs: the service is back and files written before the crash read back intact");
    tap_ok(read_file("/tmp/big", back, sizeof(back)) == (int64_t)sizeof(big) && memcmp(big, back, sizeof(big)) == 0,
           "fs: a 40 KB file survived the restart");
}

/* role=hold n=K (systems/fsreap-*.toml, the case services/fs-reap):
 * client K, 40 ms after client K - 1, opens a boot file 16 times (a
 * client's quota) and ends without closing any. role=reap, after five of
 * them: the service's 64 open files are all ended clients'; its 16 opens
 * succeed only if the service let theirs go. */
static int hold(uint64_t k, int reap)
{
    sleep_ms(reap ? 40 * 5 + 600 : 40 * k);
    unsigned opened = 0;
    int64_t err = 0;
    for (unsigned i = 0; i < 16 && !err; i++) {
        uint32_t fd;
        err = fs_open(fs, P("/boot/reap"), FS_O_READ, &fd);  /* (the boot file of that program) */
        opened += !err;
    }
    if (reap) {
        printf("fstest: after five clients ended holding 16 open files each, 16 more: %s (%u, error %ld)\n",
               opened == 16 ? "yes" : "no", opened, (long)err);
        return opened == 16 ? 0 : 1;
    }
    printf("fstest: client %lu holds %u open files (error %ld)\n", (unsigned long)k, opened, (long)err);
    exit_process(opened == 16 ? 0 : 1);         /* (its files left open) */
    return 1;
}

int main(void *info)
{
    fs = start_handle("fs");
    if (!fs) {
        puts("fstest: no fs endpoint");
        return 1;
    }
    char role[8];
    if (start_arg("role", role, sizeof(role)) && !strcmp(role, "peer")) {
        peer();
        return 0;
    }
    if (start_arg("role", role, sizeof(role)) && (!strcmp(role, "hold") || !strcmp(role, "reap")))
        return hold(start_arg_u64("n", 1), !strcmp(role, "reap"));
    sys_thread_set_priority(self_thread(), 100);    /* its ceiling stays 200 (long.c) */
    basics();
    clients();
    long_requests();
    crash();
    tap_plan();
    return 0;
}
