/*
 * ext2hostile: a second client of the ext2 file system service beside the
 * Linux personality, which mounted it (systems/blk-hostile-user.toml and
 * blk-hostile-kernel.toml; tests/host/test_data_mount.py). For about
 * `seconds=` seconds it calls every method but `crash` with random inode
 * numbers, names, offsets and lengths, buffers it does not have, the
 * kernel's, too small and too large: a mount (EBUSY: mounted already),
 * unmounts, read-only and writable switches, syncs with made-up tokens,
 * creates, unlinks, renames and writes. The service serves only the
 * client that mounted it, so each must be refused with E_PERM; the Linux
 * programs writing and syncing files on /data meanwhile must not notice.
 */
#include "petrel.h"
#include "ext2fs_if.h"
#include "ext2.h"

static uint64_t rng = 0x6578743268737431ull;
static uint64_t next(void) { return xorshift64(&rng); }
static uint8_t buf[70000];

/* A buffer: ours, none, the kernel's, or one past what we have. */
static void *some_buffer(uint64_t *len)
{
    static void *const bad[] = { NULL, (void *)0x10, (void *)0xffff000000001000ull, buf + sizeof(buf) - 8 };
    *len = next() % 3 == 0 ? next() : next() % sizeof(buf);
    return next() % 2 ? buf : bad[next() % 4];
}

int main(void)
{
    uint64_t seconds = start_arg_u64("seconds", 4);
    uint32_t fs = start_handle("ext2fs");
    if (!fs) {
        tap_ok(false, "ext2hostile: no ext2fs service granted");
        tap_plan();
        return 1;
    }
    sleep_ms(1500);                             /* (lxrun mounts /data first) */
    uint64_t deadline = (uint64_t)sys_clock_ns() + seconds * 1000000000ull, calls = 0, refused = 0, other = 0;
    uint32_t fserr = 0, w = 0, bs = 0, why_len = 0, u32 = 0;
    uint8_t why[120];
    int64_t m = ext2fs_mount(fs, 1, 0, buf, sizeof(struct ext2_inode), &fserr, &w, &bs, why, &why_len);
    bool busy = m == 0 && fserr == EXT2_EBUSY;
    while ((uint64_t)sys_clock_ns() < deadline) {
        uint64_t l1, l2, l3, a = 0, b = 0, c = 0, d = 0, e = 0, f = 0;
        void *p1 = some_buffer(&l1), *p2 = some_buffer(&l2), *p3 = some_buffer(&l3);
        uint32_t ino = next() % 4 ? (uint32_t)(next() % 64) : (uint32_t)next(), k = (uint32_t)next();
        int64_t r;
        switch (next() % 18) {
        case 0: r = ext2fs_set_writable(fs, next(), &fserr); break;
        case 1: r = ext2fs_set_readonly(fs, next(), &fserr); break;
        case 2: r = ext2fs_unmount(fs); break;
        case 3: r = ext2fs_getattr(fs, ino, k & 1, p1, l1, &fserr); break;
        case 4: r = ext2fs_readdir(fs, ino, next(), p1, l1, &fserr, &u32, &a, &b, &w); break;
        case 5: r = ext2fs_readlink(fs, ino, p1, l1, &fserr, &a); break;
        case 6: r = ext2fs_read(fs, ino, k & 1, next(), p1, l1, &fserr, &a, &u32, &b); break;
        case 7: r = ext2fs_write(fs, ino, k & 1, next(), k & 2, next(), p1, l1, p2, l2, &fserr, &a, &u32); break;
        case 8: r = ext2fs_create(fs, ino, k, (uint32_t)next(), next(), p1, l1, p2, l2, p3, l3, &fserr); break;
        case 9: r = ext2fs_unlink(fs, ino, k & 1, k & 2, next(), p1, l1, p2, l2, &fserr, &u32); break;
        case 10: r = ext2fs_rename(fs, ino, k, (uint32_t)next(), k & 1, next(), p1, l1, p2, l2, p3, l3, &fserr, &u32);
            break;
        case 11: r = ext2fs_link(fs, ino, k, next(), p1, l1, p2, l2, &fserr); break;
        case 12: r = ext2fs_setattr(fs, ino, k, k, k, k, next(), next(), next(), p1, l1, &fserr); break;
        case 13: r = ext2fs_truncate(fs, ino, next(), next(), p1, l1, &fserr); break;
        case 14: r = ext2fs_release(fs, ino); break;
        case 15: r = ext2fs_sync(fs, next(), &fserr, &a); break;
        case 16: r = ext2fs_writeback(fs, &fserr, &a); break;
        default: r = next() % 2 ? ext2fs_statfs(fs, &a, &b, &c, &d, &e, &f) : ext2fs_prefetch(fs, ino, next(), next(), &fserr);
        }
        calls++;
        refused += r == -E_PERM;
        other += r != -E_PERM;
    }
    tap_ok(busy, "ext2hostile: a mount of the mounted file system says EBUSY (%ld, %u)", (long)m, fserr);
    tap_ok(calls > 100 && other == 0,
           "ext2hostile: %lu calls of every method with random and bad arguments from a client that did not mount "
           "it: %lu refused with E_PERM, %lu other answers", (unsigned long)calls, (unsigned long)refused,
           (unsigned long)other);
    printf("ext2hostile: done\n");
    tap_plan();
    return 0;
}
