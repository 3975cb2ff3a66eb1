/*
 * ext2crash: kills the user-placed ext2 file system service in the middle
 * of handing its blocks to blk, again and again, while Linux programs
 * write and fsync files on /data (systems/ext2-restart-user.toml;
 * tests/host/test_data_mount.py). A seeded schedule (`seed=`, `crashes=`):
 * for each crash, a pause of 150 to 450 ms, then `crash` with a count of
 * 1 to 24 writes to blk after which the service faults (a count it does
 * not reach before the next crash is replaced by the next). The root
 * task restarts the service each time; the personality mounts it again.
 * The host then checks that every file whose fsync returned is whole and
 * that e2fsck finds the image clean.
 */
#include "petrel.h"
#include "ext2fs_if.h"

int main(void)
{
    uint64_t rng = start_arg_u64("seed", 1) * 0x9e3779b97f4a7c15ull + 1;
    uint64_t crashes = start_arg_u64("crashes", 8);
    uint32_t fs = start_handle("ext2fs");
    if (!fs) {
        printf("ext2crash: no ext2fs service granted\n");
        return 1;
    }
    sleep_ms(500);                              /* (the script starts writing) */
    for (uint64_t k = 0; k < crashes; k++) {
        uint64_t pause = 150 + xorshift64(&rng) % 300, after = 1 + xorshift64(&rng) % 24;
        sleep_ms(pause);
        int64_t r = ext2fs_crash(fs, (uint32_t)after);
        printf("ext2crash: crash %lu armed: after %lu writes to blk (%ld)\n", (unsigned long)(k + 1),
               (unsigned long)after, (long)r);
    }
    printf("ext2crash: done\n");
    return 0;
}
