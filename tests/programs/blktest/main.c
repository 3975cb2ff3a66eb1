/*
 * blktest: the block device service (idl/blk.toml, services/blk) through
 * its generated proxies, on a disk the host made (tests/host/test_blk.py):
 * sector s holds its number in its first 8 bytes and pattern(s, j) after.
 *
 * It reads what the host wrote (one sector, an unaligned 64 KiB run across
 * 17 cache blocks, the last sector of a disk whose size is not a whole
 * number of blocks, 17 blocks prefetched in one request), is refused bad
 * requests, writes the inverse pattern
 * over a sector inside a block (read first), an unaligned run and the last
 * sector, then 6 MiB, more than the cache holds (so blocks go out to make
 * room and come back from the disk), reads it all back, and syncs. The
 * host then compares the image with what this program says it wrote. A
 * read-only disk refuses the writes; a machine without a disk answers
 * every request E_NOENT.
 */
#include "petrel.h"
#include "blk_if.h"

#define SECTOR      512u
#define RUN         (64u * 1024)
#define BIG_FROM    4096u               /* the 6 MiB written past the cache's size */
#define BIG_BYTES   (6u << 20)

static uint32_t dev;
static uint8_t buf[RUN], want[RUN];
static uint64_t sectors;

static uint8_t pattern(uint64_t s, uint32_t j) { return (uint8_t)(s * 131 + j * 7 + (s >> 8)); }

/* What the host wrote in sectors [s, s + n / 512) (inverse: what we write). */
static void expect(uint8_t *p, uint64_t s, uint32_t n, bool inverse)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t sec = s + i / SECTOR;
        uint32_t j = i % SECTOR;
        uint8_t v = j < 8 ? (uint8_t)(sec >> (8 * j)) : pattern(sec, j);
        p[i] = inverse ? (uint8_t)~v : v;
    }
}

/* blk_read or blk_write, asked again after `wait` while it answers
 * E_AGAIN: the bytes it moved, or its error. */
typedef int64_t (*blk_io)(uint32_t h, uint64_t sector, void *buf, uint64_t len, uint64_t *count);
static int64_t io_at(blk_io op, uint64_t s, void *p, uint32_t n, int *agains)
{
    for (;;) {
        uint64_t count = 0;
        int64_t err = op(dev, s, p, n, &count);
        if (err != -E_AGAIN)
            return err ? err : (int64_t)count;
        ++*agains;
        if ((err = blk_wait(dev)) != 0)
            return err;
    }
}

static int64_t read_at(uint64_t s, void *p, uint32_t n, int *agains) { return io_at(blk_read, s, p, n, agains); }
static int64_t write_at(uint64_t s, void *p, uint32_t n, int *agains) { return io_at(blk_write, s, p, n, agains); }

/* Read n bytes at s and compare them with the host's pattern (or ours). */
static bool check(uint64_t s, uint32_t n, bool inverse, int *agains)
{
    memset(buf, 0x5a, n);
    int64_t got = read_at(s, buf, n, agains);
    expect(want, s, n, inverse);
    return got == (int64_t)n && memcmp(buf, want, n) == 0;
}

static void no_disk(void)
{
    uint64_t a = 0, b, c, d, e, f, g, h;
    uint32_t x = 0, y, z;
    int64_t i = blk_info(dev, &a, &x, &y, &z), r = blk_read(dev, 0, buf, SECTOR, &a);
    int64_t w = blk_write(dev, 0, buf, SECTOR, &a), s = blk_sync(dev), wt = blk_wait(dev);
    int64_t st = blk_stats(dev, &a, &b, &c, &d, &e, &f, &g, &h);
    tap_ok(i == -E_NOENT && r == -E_NOENT && w == -E_NOENT && s == -E_NOENT && wt == -E_NOENT && st == -E_NOENT,
           "blk: no disk: every request is E_NOENT (info %ld, read %ld, write %ld, sync %ld, wait %ld, stats %ld)",
           (long)i, (long)r, (long)w, (long)s, (long)wt, (long)st);
    tap_plan();
}

/* A client that cannot wait in the service (the Linux personality's
 * shape): `watch` signals its notification when the disk finishes a
 * request, and `sync_start` / `sync_poll` sync without waiting. */
static void watched(void)
{
    int64_t note = sys_notify_create();
    int64_t w = note > 0 ? blk_watch(dev, (uint32_t)sys_handle_dup((uint32_t)note, R_WRITE | R_GRANT, 0), 0x4) : note;
    /* A block not cached (2 MiB in: nothing above touched it): E_AGAIN,
     * the signal, then the bytes. */
    uint64_t n = 0;
    int64_t r1 = blk_read(dev, BIG_FROM + BIG_BYTES / SECTOR + 64, buf, SECTOR, &n);
    uint64_t bits = 0;
    int spins = 0;
    int64_t r2 = r1;
    while (r2 == -E_AGAIN && spins++ < 100) {
        int64_t b = sys_notify_wait((uint32_t)note);
        bits |= b > 0 ? (uint64_t)b : 0;
        r2 = blk_read(dev, BIG_FROM + BIG_BYTES / SECTOR + 64, buf, SECTOR, &n);
    }
    expect(want, BIG_FROM + BIG_BYTES / SECTOR + 64, SECTOR, false);
    tap_ok(w == 0 && r1 == -E_AGAIN && r2 == 0 && (bits & 0x4) && !memcmp(buf, want, SECTOR),
           "blk: a watcher told E_AGAIN for a read is signalled (bits 0x%lx) when the fetch ends, then reads it "
           "(watch %ld, reads %ld %ld)", (unsigned long)bits, (long)w, (long)r1, (long)r2);

    /* A sync by ticket: the block written, the ticket polled until over. */
    int wagain = 0;
    expect(want, 7, SECTOR, true);
    int64_t wr = write_at(7, want, SECTOR, &wagain);
    uint64_t f0 = 0, d0 = 0, dummy;
    blk_stats(dev, &dummy, &dummy, &f0, &dummy, &dummy, &d0, &dummy, &dummy);
    uint64_t ticket = 0;
    int64_t st = blk_sync_start(dev, &ticket);
    int64_t bad = blk_sync_poll(dev, ticket + 1);
    int64_t p = blk_sync_poll(dev, ticket);
    int polls = 1;
    while (p == -E_AGAIN && polls++ < 100) {
        sys_notify_wait((uint32_t)note);
        p = blk_sync_poll(dev, ticket);
    }
    int64_t spent = blk_sync_poll(dev, ticket);
    uint64_t f1 = 0, d1 = 1;
    blk_stats(dev, &dummy, &dummy, &f1, &dummy, &dummy, &d1, &dummy, &dummy);
    tap_ok(wr == SECTOR && st == 0 && bad == -E_NOENT && p == 0 && spent == -E_NOENT && d0 >= 1 && d1 == 0 &&
               f1 - f0 == 1,
           "blk: sync_start's ticket is over after %d polls (%ld): the %lu dirty blocks written, the disk flushed "
           "once; another ticket (%ld) and the spent one (%ld) are E_NOENT", polls, (long)p, (unsigned long)d0,
           (long)bad, (long)spent);
    int64_t stop = blk_watch(dev, (uint32_t)sys_handle_dup((uint32_t)note, R_WRITE | R_GRANT, 0), 0);
    tap_ok(stop == 0, "blk: watch with bits 0 stops watching (%ld)", (long)stop);
}

/* The host's pattern reads at [s, s + n / 512): the cache as it was. */
static bool untouched(uint64_t s, uint32_t n)
{
    int a = 0;
    return check(s, n, false, &a);
}

/* Transactions: blocks kept apart until the commit, dropped by an abort,
 * a new begin, a fault in the data or two idle seconds. */
#define TXN_AT      24000u              /* block 3,000 on (never written above) */
static uint8_t tx[8192];
static uint32_t joined;      /* txn_commit: it joined a sync under way */
static void transactions(void)
{
    uint64_t n = 0, dummy, d0 = 0, d1 = 0;
    blk_stats(dev, &dummy, &dummy, &dummy, &dummy, &dummy, &d0, &dummy, &dummy);
    int64_t b = blk_txn_begin(dev, 3);
    for (int k = 0; b == -E_AGAIN && k < 100; k++) {
        blk_wait(dev);
        b = blk_txn_begin(dev, 3);
    }
    expect(tx, TXN_AT, 8192, true);
    int64_t w1 = blk_txn_write(dev, TXN_AT, tx, 8192, &n);
    bool hidden = untouched(TXN_AT, 8192);              /* (not read by anyone, its own client too) */
    int64_t part = blk_txn_write(dev, TXN_AT + 1, tx, 4096, &n);
    int64_t odd = blk_txn_write(dev, TXN_AT, tx, 1024, &n);
    int64_t over = blk_txn_write(dev, TXN_AT + 16, tx, 8192, &n);    /* two new blocks, one left */
    int64_t again = blk_txn_write(dev, TXN_AT, tx, 4096, &n);       /* (the same block: no new one) */
    int64_t rng = blk_txn_write(dev, sectors, tx, 4096, &n);
    int64_t c = blk_txn_commit(dev, &joined);
    for (int k = 0; c == -E_AGAIN && k < 100; k++) {
        blk_wait(dev);
        c = blk_txn_commit(dev, &joined);
    }
    int a = 0;
    bool shown = check(TXN_AT, 8192, true, &a) && untouched(TXN_AT + 16, 8192);
    blk_stats(dev, &dummy, &dummy, &dummy, &dummy, &dummy, &d1, &dummy, &dummy);
    tap_ok(b == 0 && w1 == 0 && hidden && part == -E_INVAL && odd == -E_INVAL && over == -E_LIMIT && again == 0 &&
               rng == -E_RANGE && c == 0 && shown && d1 >= d0 + 2,
           "blk: a transaction's two blocks are read by nobody until its commit (%ld), then read and dirty (%lu more); "
           "a part block E_INVAL (%ld %ld), past its room E_LIMIT (%ld), past the disk E_RANGE (%ld)", (long)c,
           (unsigned long)(d1 - d0), (long)part, (long)odd, (long)over, (long)rng);

    /* Dropped: an abort, a new begin, a fault, idle. None leaves a trace. */
    expect(tx, TXN_AT + 32, 4096, true);
    int64_t ab[3] = { blk_txn_begin(dev, 1), blk_txn_write(dev, TXN_AT + 32, tx, 4096, &n), blk_txn_abort(dev) };
    int64_t after_abort = blk_txn_commit(dev, &joined);
    int64_t rb[4] = { blk_txn_begin(dev, 1), blk_txn_write(dev, TXN_AT + 32, tx, 4096, &n), blk_txn_begin(dev, 1),
                      blk_txn_commit(dev, &joined) };
    int64_t fb[3] = { blk_txn_begin(dev, 1), blk_txn_write(dev, TXN_AT + 32, (void *)0x10, 4096, &n),
                      blk_txn_commit(dev, &joined) };
    int64_t kf = blk_txn_begin(dev, 1) == 0 ? blk_txn_write(dev, TXN_AT + 32, (void *)0xffff000000001000ull, 4096, &n)
                                            : -1;
    int64_t ib[2] = { blk_txn_begin(dev, 1), blk_txn_write(dev, TXN_AT + 32, tx, 4096, &n) };
    sleep_ms(2200);
    int64_t idle = blk_txn_commit(dev, &joined);
    int64_t none[2] = { blk_txn_abort(dev), blk_txn_write(dev, TXN_AT + 32, tx, 4096, &n) };
    tap_ok(ab[0] == 0 && ab[1] == 0 && ab[2] == 0 && after_abort == -E_NOENT && rb[0] == 0 && rb[1] == 0 &&
               rb[2] == 0 && rb[3] == 0 && fb[0] == 0 && fb[1] == -E_FAULT && fb[2] == -E_NOENT && kf == -E_FAULT &&
               ib[0] == 0 && ib[1] == 0 && idle == -E_NOENT && none[0] == 0 && none[1] == -E_NOENT &&
               untouched(TXN_AT + 32, 4096),
           "blk: a transaction aborted, replaced by a new begin, dropped by a fault in its data (%ld %ld) and left "
           "idle 2.2 s (commit %ld) leaves its block as it was; with none open, abort is 0, write E_NOENT",
           (long)fb[1], (long)kf, (long)idle);

    int64_t zero = blk_txn_begin(dev, 0), huge = blk_txn_begin(dev, ~0ull), quarter = blk_txn_begin(dev, 257);
    int64_t fits = blk_txn_begin(dev, 256);
    for (int k = 0; fits == -E_AGAIN && k < 100; k++) {
        blk_wait(dev);
        fits = blk_txn_begin(dev, 256);
    }
    int64_t end = blk_txn_abort(dev), synced = blk_sync(dev);
    tap_ok(zero == -E_INVAL && huge == -E_LIMIT && quarter == -E_LIMIT && fits == 0 && end == 0 && synced == 0,
           "blk: a transaction of no blocks is E_INVAL, of more than a quarter of the 1,024-block cache E_LIMIT "
           "(%ld %ld), of 256 begun (%ld)", (long)huge, (long)quarter, (long)fits);
}

/* A commit that replaces a dirty block a sync already waits for makes
 * that sync wait for the whole transaction (it says so: `joined`): when
 * its ticket is over, nothing is dirty. Every other block of the 6 MiB
 * written above is written again (the same bytes): 768 blocks apart from
 * each other, many more requests than the disk's queue takes, so most
 * are still dirty when the commit comes; it replaces the last one not
 * being written. Whether that one was still dirty depends on how fast
 * the host's disk is: tried until a commit joined the sync (10 times at
 * most; in the user placement the first try does). */
#define SPREAD_AT   BIG_FROM
#define SPREAD      768u
static void commit_under_sync(void)
{
    int a = 0, tries = 0;
    bool wrote = true;
    int64_t st = 0, c = -1, p = -1;
    uint64_t dirty = 1, dummy, n = 0;
    uint32_t k = SPREAD;
    for (joined = 0; !joined && tries < 10 && wrote; tries++) {
        for (uint32_t i = 0; i < SPREAD && wrote; i++) {
            expect(tx, SPREAD_AT + i * 16, 4096, true);
            wrote = write_at(SPREAD_AT + i * 16, tx, 4096, &a) == 4096;
        }
        uint64_t ticket = 0;
        st = blk_sync_start(dev, &ticket);
        c = -1;
        k = SPREAD;
        while (c != 0 && k-- > 0) {
            expect(tx, SPREAD_AT + k * 16, 4096, true);
            if (blk_txn_begin(dev, 1) != 0 || blk_txn_write(dev, SPREAD_AT + k * 16, tx, 4096, &n) != 0)
                break;
            if ((c = blk_txn_commit(dev, &joined)) != 0)
                blk_txn_abort(dev);
        }
        p = blk_sync_poll(dev, ticket);
        for (int i = 0; p == -E_AGAIN && i < 1000; i++) {
            blk_wait(dev);
            p = blk_sync_poll(dev, ticket);
        }
        blk_stats(dev, &dummy, &dummy, &dummy, &dummy, &dummy, &dirty, &dummy, &dummy);
        if (!joined)
            blk_sync(dev);                      /* (it replaced a block already written: again) */
    }
    /* (The disk may have been faster every time, the kernel placement's
     * mostly: then no commit joined a sync, and there is nothing to see.) */
    tap_ok(wrote && st == 0 && c == 0 && p == 0 && (!joined || dirty == 0),
           "blk: a commit replacing block %u of %u, %s while a sync waits (try %d, %ld), is waited for by that "
           "sync: %lu dirty after it", SPREAD - k, SPREAD, joined ? "still dirty" : "written already every time",
           tries, (long)p, (unsigned long)dirty);
}

/* role=ticket n=K (systems/blkreap-*.toml; tests/host/test_blk.py): client
 * K, 40 ms after client K - 1, takes a sync ticket (sync_start) and ends
 * without asking after it. role=reap, after sixteen of them: the
 * service's 16 places are all ended clients' tickets; its sync_start
 * succeeds only if the service gives it one of their places. */
static int ticket_role(uint64_t k, int reap)
{
    sleep_ms(reap ? 40 * 16 + 600 : 40 * k);
    uint64_t ticket = 0;
    int64_t err = blk_sync_start(dev, &ticket);
    if (reap) {
        int64_t polled = err ? err : blk_sync_poll(dev, ticket);
        for (int tries = 0; polled == -E_AGAIN && tries < 500; tries++) {
            sleep_ms(10);                       /* (its sync runs: the disk answers) */
            polled = blk_sync_poll(dev, ticket);
        }
        printf("blktest: after sixteen clients ended holding sync tickets, one more: %s (start %ld, poll %ld)\n",
               err == 0 && polled == 0 ? "yes" : "no", (long)err, (long)polled);
        return err == 0 && polled == 0 ? 0 : 1;
    }
    printf("blktest: client %lu holds a sync ticket (error %ld)\n", (unsigned long)k, (long)err);
    exit_process(err ? 1 : 0);                  /* (its ticket never asked after) */
    return 1;
}

int main(void)
{
    dev = start_handle("blk");
    char role[8];
    if (start_arg("role", role, sizeof(role)) && (!strcmp(role, "ticket") || !strcmp(role, "reap")))
        return ticket_role(start_arg_u64("n", 1), !strcmp(role, "reap"));
    uint32_t block_size = 0, flags = 0, geometry = 0;
    int64_t err = blk_info(dev, &sectors, &block_size, &flags, &geometry);
    if (err == -E_NOENT) {
        no_disk();
        return 0;
    }
    bool ro = flags & 1;
    tap_ok(err == 0 && sectors > BIG_FROM + BIG_BYTES / SECTOR && block_size == SECTOR && (flags & 2),
           "blk: the disk has %lu sectors of %u bytes, flags %u%s, geometry %u/%u/%u (err %ld)", (unsigned long)sectors,
           block_size, flags, ro ? " (read-only)" : "", geometry >> 16, (geometry >> 8) & 0xff, geometry & 0xff,
           (long)err);

    /* What the host wrote. */
    int agains = 0;
    bool one = check(0, SECTOR, false, &agains);
    bool run = check(5, RUN, false, &agains);
    bool last = check(sectors - 1, SECTOR, false, &agains);
    bool again = check(5, RUN, false, &(int){0});
    tap_ok(one && run && last && again && agains >= 3,
           "blk: sector 0, an unaligned 64 KiB run across 17 blocks and the last sector read as the host wrote "
           "them (E_AGAIN %d times before the fetches came), again from the cache", agains);

    /* Bad requests. */
    uint64_t n = 0;
    int64_t inv[4] = { blk_read(dev, 0, buf, 0, &n), blk_read(dev, 0, buf, 100, &n),
                       blk_read(dev, 0, buf, RUN + SECTOR, &n), blk_write(dev, 0, buf, 513, &n) };
    int64_t rng[4] = { blk_read(dev, sectors, buf, SECTOR, &n), blk_read(dev, sectors - 1, buf, 2 * SECTOR, &n),
                       blk_read(dev, 1ull << 63, buf, SECTOR, &n), blk_write(dev, ~0ull, buf, SECTOR, &n) };
    int64_t fault = blk_read(dev, 5, (void *)0x10, SECTOR, &n);
    int64_t kfault = blk_read(dev, 5, (void *)0xffff000000001000ull, SECTOR, &n);
    tap_ok(inv[0] == -E_INVAL && inv[1] == -E_INVAL && inv[2] == -E_INVAL && inv[3] == -E_INVAL &&
           rng[0] == -E_RANGE && rng[1] == -E_RANGE && rng[2] == -E_RANGE && rng[3] == -E_RANGE &&
           fault == -E_FAULT && kfault == -E_FAULT && check(5, SECTOR, false, &agains),
           "blk: bad lengths are E_INVAL, past the end E_RANGE, an unmapped or kernel buffer E_FAULT "
           "(%ld %ld); the service still answers", (long)fault, (long)kfault);

    /* Read-ahead: a prefetch of 17 blocks not cached is one request to
     * the disk; once it is in, reading them never waits. */
    uint64_t pr0 = 0, pr1 = 0, dummy0;
    blk_stats(dev, &pr0, &dummy0, &dummy0, &dummy0, &dummy0, &dummy0, &dummy0, &dummy0);
    int64_t pf = blk_prefetch(dev, 20001, RUN / SECTOR + 1);
    int64_t pw = blk_wait(dev);
    blk_stats(dev, &pr1, &dummy0, &dummy0, &dummy0, &dummy0, &dummy0, &dummy0, &dummy0);
    int pagain = 0;
    bool fetched = check(20001, RUN, false, &pagain) && check(20001 + RUN / SECTOR, SECTOR, false, &pagain);
    int64_t pbad[4] = { blk_prefetch(dev, 0, 0), blk_prefetch(dev, 0, (2u << 20) / SECTOR + 1),
                        blk_prefetch(dev, sectors - 1, 2), blk_prefetch(dev, ~0ull, 1) };
    tap_ok(pf == 0 && pw == 0 && pr1 - pr0 == 1 && fetched && pagain == 0 && pbad[0] == -E_INVAL &&
               pbad[1] == -E_INVAL && pbad[2] == -E_RANGE && pbad[3] == -E_RANGE,
           "blk: a prefetch of 17 blocks (%ld) is %lu request to the disk, then read without E_AGAIN (%d); no "
           "sectors or more than 2 MiB E_INVAL, past the end E_RANGE (%ld %ld %ld %ld)", (long)pf,
           (unsigned long)(pr1 - pr0), pagain, (long)pbad[0], (long)pbad[1], (long)pbad[2], (long)pbad[3]);

    if (ro) {
        expect(want, 3, SECTOR, true);
        int64_t w = blk_write(dev, 3, want, SECTOR, &n), s = blk_sync(dev);
        tap_ok(w == -E_PERM && s == 0 && check(3, SECTOR, false, &agains),
               "blk: a read-only disk refuses a write with E_PERM (%ld), syncs (%ld) and keeps its data", (long)w,
               (long)s);
        printf("blktest: wrote nothing\n");
        tap_plan();
        return 0;
    }

    /* Writes: a sector inside a block (the block is read first), an
     * unaligned run, the last sector. */
    int wagain = 0;
    expect(want, 3, SECTOR, true);
    int64_t w1 = write_at(3, want, SECTOR, &wagain);
    expect(want, 1001, RUN, true);
    int64_t w2 = write_at(1001, want, RUN, &wagain);
    expect(want, sectors - 1, SECTOR, true);
    int64_t w3 = write_at(sectors - 1, want, SECTOR, &wagain);
    bool back = check(3, SECTOR, true, &agains) && check(1001, RUN, true, &agains) &&
                check(sectors - 1, SECTOR, true, &agains) && check(2, SECTOR, false, &agains) &&
                check(4, SECTOR, false, &agains) && check(1000, SECTOR, false, &agains) &&
                check(1001 + RUN / SECTOR, SECTOR, false, &agains);
    tap_ok(w1 == SECTOR && w2 == RUN && w3 == SECTOR && back,
           "blk: a sector inside a block, an unaligned 64 KiB run and the last sector written (%ld %ld %ld) and read "
           "back, their neighbours untouched", (long)w1, (long)w2, (long)w3);

    uint64_t r0 = 0, wr0 = 0, f0 = 0, h0, m0, d0 = 0, e0, i0;
    blk_stats(dev, &r0, &wr0, &f0, &h0, &m0, &d0, &e0, &i0);
    int64_t s1 = blk_sync(dev);
    uint64_t r1 = 0, wr1 = 0, f1 = 0, h1, m1, d1 = 1, e1 = 1, i1 = 0;
    blk_stats(dev, &r1, &wr1, &f1, &h1, &m1, &d1, &e1, &i1);
    tap_ok(s1 == 0 && d0 >= 3 && d1 == 0 && wr1 - wr0 >= 3 && f1 - f0 == 1 && e1 == 0 && i1 >= 1,
           "blk: sync wrote the %lu dirty blocks (%lu writes) and flushed the disk once (sync %ld, %lu interrupts)",
           (unsigned long)d0, (unsigned long)(wr1 - wr0), (long)s1, (unsigned long)i1);

    /* 6 MiB: more than the cache holds. */
    bool big = true;
    for (uint32_t off = 0; off < BIG_BYTES && big; off += RUN) {
        expect(want, BIG_FROM + off / SECTOR, RUN, true);
        big = write_at(BIG_FROM + off / SECTOR, want, RUN, &wagain) == RUN;
    }
    uint64_t wr2 = 0, d2 = 0, dummy;
    blk_stats(dev, &dummy, &wr2, &dummy, &dummy, &dummy, &d2, &dummy, &dummy);
    /* The cache is full of dirty blocks: unaligned runs written again
     * (the same bytes) need their part-covered blocks read in, and room
     * made by writing others out, never the run's own blocks. */
    bool rewrite = true;
    int ragain = 0;
    for (uint32_t k = 0; k < 24 && rewrite; k++) {
        uint64_t s = BIG_FROM + 3 + k * 509;
        expect(want, s, RUN, true);
        rewrite = write_at(s, want, RUN, &ragain) == RUN && check(s, RUN, true, &agains);
    }
    tap_ok(rewrite && d2 > 900 && d2 <= 1024, "blk: with %lu dirty blocks cached (of the 1,024 an eighth of its 32 MiB "
           "limit holds), 24 unaligned 64 KiB runs written again and read back (E_AGAIN %d times)", (unsigned long)d2,
           ragain);
    bool all = true;
    for (uint32_t off = 0; off < BIG_BYTES && all; off += RUN)
        all = check(BIG_FROM + off / SECTOR, RUN, true, &agains);
    int64_t s2 = blk_sync(dev);
    uint64_t r3 = 0, wr3 = 0, d3 = 1;
    blk_stats(dev, &r3, &wr3, &dummy, &dummy, &dummy, &d3, &dummy, &dummy);
    tap_ok(big && all && s2 == 0 && d3 == 0 && wr2 - wr1 > 0 && r3 - r1 > 0,
           "blk: 6 MiB written past the cache's 4 MiB (%lu writes to make room, E_AGAIN %d times), read "
           "back (%lu reads from the disk) and synced", (unsigned long)(wr2 - wr1), wagain,
           (unsigned long)(r3 - r1));
    watched();
    transactions();
    commit_under_sync();
    int64_t idle = blk_wait(dev);
    tap_ok(idle == 0, "blk: wait with nothing in flight answers at once (%ld)", (long)idle);
    printf("blktest: wrote inverse 3+1 7+1 %lu+128 %lu+1 %u+%u %u+16", 1001ul, (unsigned long)(sectors - 1), BIG_FROM,
           BIG_BYTES / SECTOR, TXN_AT);
    printf("\n");
    tap_plan();
    return 0;
}
