/*
 * blkhostile: a second client of the block device service, sharing it
 * with the Linux personality that has the disk's file system mounted at
 * /data (systems/blk-hostile-user.toml, blk-hostile-kernel.toml;
 * tests/host/test_data_mount.py). For about `seconds=` seconds it does
 * what a client should not: reads into memory it does not have and into
 * the kernel's, sectors past the end, lengths that make no sense, a watch
 * with a handle it does not hold, prefetches of 2 MiB all over the disk
 * (pushing everyone's blocks out of the cache), a sync from each of 24
 * threads at once (more than the service keeps for all its clients),
 * thousands of sync tickets it never asks after, waits, and transactions
 * of the most blocks one may hold, filled with garbage over the file
 * system's blocks and then dropped, replaced or left idle, never
 * committed. It writes nothing. Each kind must fail or succeed as idl/blk.toml says, and the
 * Linux programs writing and syncing files on /data meanwhile must not
 * notice: their files are whole and the image e2fsck-clean (checked by
 * the host).
 */
#include "petrel.h"
#include "blk_if.h"

#define SECTOR      512u
#define THREADS     24

static uint32_t dev;
static uint64_t sectors, deadline;
static uint8_t buf[64 * 1024];
static volatile uint64_t syncs_ok, syncs_busy, syncs_other, threads_done;

static uint64_t rng = 0x626c6b686f7374ull;
static uint64_t next(void) { return xorshift64(&rng); }

static void syncer(void *arg)
{
    (void)arg;
    while ((uint64_t)sys_clock_ns() < deadline) {
        int64_t r = blk_sync(dev);
        __atomic_fetch_add(r == 0 ? &syncs_ok : r == -E_BUSY ? &syncs_busy : &syncs_other, 1, __ATOMIC_RELAXED);
    }
    __atomic_fetch_add(&threads_done, 1, __ATOMIC_RELEASE);
}

/* A request of sector 0 with buffer `p`, asked again after a wait while it answers E_AGAIN. */
typedef int64_t (*blk_io)(uint32_t h, uint64_t sector, void *buf, uint64_t len, uint64_t *count);
static int64_t again(blk_io op, void *p)
{
    uint64_t n = 0;
    int64_t r = op(dev, 0, p, SECTOR, &n);
    for (int tries = 0; r == -E_AGAIN && tries < 1000; tries++) {
        blk_wait(dev);
        r = op(dev, 0, p, SECTOR, &n);
    }
    return r;
}

int main(void)
{
    char arg[16] = "4";
    start_arg("seconds", arg, sizeof(arg));
    uint64_t seconds = 0;
    for (const char *c = arg; *c >= '0' && *c <= '9'; c++)
        seconds = seconds * 10 + (uint64_t)(*c - '0');
    dev = start_handle("blk");
    uint32_t block_size = 0, flags = 0, geometry = 0;
    int64_t err = blk_info(dev, &sectors, &block_size, &flags, &geometry);
    if (err) {
        tap_ok(false, "blkhostile: no disk to attack (%ld)", (long)err);
        tap_plan();
        return 1;
    }
    deadline = (uint64_t)sys_clock_ns() + seconds * 1000000000ull;

    /* Bad arguments, each the error the interface names. A bad buffer
     * faults only once its block is in (before that: E_AGAIN, as for
     * any read), so each is asked again after a wait until it is. */
    uint64_t n = 0;
    int64_t unmapped = again(blk_read, (void *)0x10);
    int64_t kernel = again(blk_read, (void *)0xffff000000001000ull);
    int64_t past = blk_read(dev, sectors, buf, SECTOR, &n);
    int64_t wrap = blk_read(dev, ~0ull - 3, buf, 8 * SECTOR, &n);
    int64_t odd = blk_read(dev, 0, buf, 777, &n);
    int64_t huge = blk_read(dev, 0, buf, sizeof(buf) + SECTOR, &n);
    int64_t wbad = again(blk_write, (void *)0xffff000000001000ull);
    int64_t pf0 = blk_prefetch(dev, 0, 0), pfbig = blk_prefetch(dev, 0, ~0ull), pfpast = blk_prefetch(dev, sectors, 1);
    int64_t watch = blk_watch(dev, 0x7fff, 1);
    int64_t poll = blk_sync_poll(dev, 12345);
    tap_ok(unmapped == -E_FAULT && kernel == -E_FAULT && past == -E_RANGE && wrap == -E_RANGE && odd == -E_INVAL &&
               huge == -E_INVAL && wbad == -E_FAULT && pf0 == -E_INVAL && pfbig == -E_INVAL && pfpast == -E_RANGE &&
               watch < 0 && poll == -E_NOENT,
           "blkhostile: bad buffers E_FAULT (%ld %ld, a write %ld), past the end E_RANGE (%ld %ld), bad lengths "
           "E_INVAL (%ld %ld), bad prefetches (%ld %ld %ld), a watch with no handle (%ld), a ticket never had (%ld)",
           (long)unmapped, (long)kernel, (long)wbad, (long)past, (long)wrap, (long)odd, (long)huge, (long)pf0,
           (long)pfbig, (long)pfpast, (long)watch, (long)poll);

    /* Syncs from many threads at once: one waits, the rest are told E_BUSY. */
    int spawned = 0;
    for (int i = 0; i < THREADS; i++)
        spawned += thread_spawn(syncer, NULL, 90, THREAD_ANY_CORE) > 0;

    /* Meanwhile: prefetches all over the disk, reads, tickets, waits. */
    uint64_t prefetches = 0, reads = 0, tickets = 0, waits = 0, bad = 0, txns = 0, txn_writes = 0;
    for (unsigned i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)next();
    while ((uint64_t)sys_clock_ns() < deadline) {
        /* A transaction of a quarter of the cache (1,024 blocks at
         * least), filled with garbage at random places of the disk, then
         * dropped one way or another: the file system's blocks must not
         * change, and its own transactions must still fit. */
        int64_t r = blk_txn_begin(dev, 256);
        txns++;
        bad += r != 0 && r != -E_AGAIN && r != -E_BUSY && r != -E_NOMEM;
        for (int k = 0; k < 20 && r == 0; k++) {
            uint64_t at = (next() % (sectors / 8)) * 8;
            int64_t w = blk_txn_write(dev, at, buf, at + 128 <= sectors ? 128 * SECTOR : 8 * SECTOR, &n);
            txn_writes++;
            bad += w != 0 && w != -E_LIMIT && w != -E_RANGE && w != -E_INVAL;
            w = blk_txn_write(dev, at + 1 + next() % 7, buf, 8 * SECTOR, &n);
            bad += w != -E_INVAL && w != -E_RANGE;
        }
        int way = (int)(next() % 3);
        r = way == 0 ? blk_txn_abort(dev) : way == 1 ? blk_txn_begin(dev, 1 + next() % 256) : 0;
        bad += r != 0 && r != -E_AGAIN && r != -E_BUSY && r != -E_NOMEM;

        uint64_t at = next() % sectors, count = 4096;
        if (count > sectors - at)
            count = sectors - at;
        r = blk_prefetch(dev, at, count);
        prefetches++;
        bad += r != 0;
        r = blk_read(dev, next() % (sectors - 128), buf, 128 * SECTOR, &n);
        reads++;
        bad += r != 0 && r != -E_AGAIN && r != -E_NOMEM;
        r = blk_read(dev, next() % sectors, (void *)(0x1000 + (next() & 0xffff0)), SECTOR, &n);
        bad += r != -E_FAULT && r != -E_AGAIN && r != -E_NOMEM;
        for (int k = 0; k < 16; k++) {
            uint64_t ticket = 0;
            r = blk_sync_start(dev, &ticket);
            tickets++;
            bad += r != 0 && r != -E_BUSY;
        }
        r = blk_wait(dev);
        waits++;
        bad += r != 0 && r != -E_BUSY;
    }
    while (__atomic_load_n(&threads_done, __ATOMIC_ACQUIRE) < (uint64_t)spawned)
        sleep_ms(10);
    tap_ok(spawned == THREADS && syncs_ok > 0 && syncs_busy > 0 && syncs_other == 0,
           "blkhostile: %d threads syncing at once: %lu syncs answered, %lu told E_BUSY (one kept sync a client), "
           "%lu other answers", spawned, (unsigned long)syncs_ok, (unsigned long)syncs_busy,
           (unsigned long)syncs_other);
    tap_ok(bad == 0 && prefetches > 10 && txn_writes > 10,
           "blkhostile: %lu prefetches of 2 MiB, %lu reads, %lu sync tickets never asked after, %lu waits, %lu "
           "transactions of garbage never committed (%lu writes): %lu answers the interface does not name",
           (unsigned long)prefetches, (unsigned long)reads, (unsigned long)tickets, (unsigned long)waits,
           (unsigned long)txns, (unsigned long)txn_writes, (unsigned long)bad);
    printf("blkhostile: done\n");
    tap_plan();
    return 0;
}
