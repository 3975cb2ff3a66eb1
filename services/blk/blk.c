/*
 * The block device service (idl/blk.toml): the machine's virtio-blk disk,
 * driven by services/common/virtio_blk.c, behind a write-back cache of
 * 4 KiB blocks; placed in the kernel or in user space by the system
 * description.
 *
 * No request waits for the disk, in either placement: what is not cached
 * is fetched while the client is told E_AGAIN, and `wait` keeps its reply
 * until the disk finishes something. The cache is an eighth of the
 * service's memory limit (CACHE_MIN to CACHE_MAX blocks; CACHE_DEFAULT
 * without a limit) of DMA memory, made PIECE at a time as it fills, so that the disk reads
 * into and writes from the block itself (no copy but the client's).
 * A block is free, being read, valid (clean or dirty), or being written.
 * A free block is taken first (a stack of them); then a clean one, by a
 * clock (the first the hand meets that was not used since it last passed);
 * a dirty one only after it is written. Consecutive blocks go to the disk
 * together: a run of up to 32 (the driver's segments) is one request,
 * read into or written from the blocks where they lie. `sync` waits for
 * the blocks dirty at its call (their generation), then for the disk's
 * flush. A transaction's blocks (txn_begin) are taken from the cache at
 * its beginning and kept apart, invisible to lookups, until its commit
 * makes them dirty blocks of the cache at once.
 */
#include "blk_if.h"
#include "pstring.h"
#include "svc_proc.h"
#include "svc_watch.h"
#include "virtio_blk.h"

#define BLOCK           4096u
#define SPB             (BLOCK / VBLK_SECTOR)   /* sectors a block */
#define CACHE_MIN       1024u                   /* blocks: 4 MiB (twice the 2 MiB a client needs in at
                                                 * once: the personality's exec of a file on the disk) ... */
#define CACHE_MAX       16384u                  /* ... to 64 MiB (indices are 16 bits) */
#define CACHE_DEFAULT   1024u                   /* 4 MiB, for a service without a memory limit */
#define PIECE           0x10000u                /* DMA memory is made this much at a time */
#define PER_PIECE       (PIECE / BLOCK)
#define WAITERS         16u
#define NONE            0xffffu

enum { B_FREE, B_READING, B_VALID, B_WRITING, B_TXN };   /* B_TXN: a transaction's (txn) */

struct cblock {
    uint64_t no;                        /* the block number (sector / SPB) */
    uint64_t used;                      /* the cache's clock at its last use (which dirty one goes first) */
    uint64_t gen;                       /* dirty: the sync generation it became dirty in */
    uint8_t *data;
    uint64_t pa;
    uint8_t state, dirty, failed;       /* failed: its read failed (told once) */
    uint8_t fresh;                      /* taken by the write at hand, not filled yet */
    uint8_t ref;                        /* used since the clock's hand last passed */
    uint16_t next;                      /* the hash chain */
    uint16_t run;                       /* being read or written: the next block of its request (NONE: last);
                                         * a transaction's: its next block */
    uint8_t txn;                        /* B_TXN: its transaction's slot + 1 */
};

/* A transaction: blocks taken at its beginning (`spare`, not yet
 * written), and those written in it (`kept`: in the hash, as B_TXN, so
 * that a block written twice is found, but no lookup of others sees
 * them). One a client, TXNS in all, a quarter of the cache each and half
 * of it together, dropped when left untouched for TXN_IDLE_NS. */
#define TXNS            4u
#define TXN_IDLE_NS     2000000000ull
#define TXN_STALE_NS    50000000ull     /* ... or this, when another needs its place or room (its
                                         * client died: a live one calls again at once, and a
                                         * dropped transaction only costs it a retry) */
struct txn {
    uint64_t pid;                       /* its client */
    int open;                           /* 0: the slot is free */
    int ready;                          /* its begin answered 0 (before: its room is being gathered) */
    uint64_t touched;                   /* svc_clock_ns() at its client's last call on it */
    uint16_t spare, kept;               /* chains through run */
    unsigned held, want;                /* blocks it holds (spare and kept), and was begun with */
};

static struct vblk disk;
static struct cblock *cache;            /* nslots of them, made at the first request */
static uint16_t *hash;                  /* nbuckets chains (a power of two) */
static unsigned nslots, nbuckets;
static unsigned made;                   /* blocks with memory */
static uint16_t *free_stack;
static unsigned nfree, hand;
static unsigned nwriting;               /* blocks being written */
static unsigned solo;                   /* requests to come of one block each: a run failed lately */
static uint64_t clock, gen = 1;
static uint64_t hits, misses;
static int write_failed;                /* a write failed while no sync waited for it: the next sync says so */
static svc_token waiter[WAITERS];
static uint64_t waiter_pid[WAITERS];
static svc_token syncer[WAITERS];       /* a sync that keeps its reply (`sync`) */
static uint64_t syncer_pid[WAITERS];    /* ... and its client (one a client) */
static uint64_t sync_gen[WAITERS];
static uint8_t sync_failed[WAITERS];    /* a write this sync waited for failed */
static uint64_t ticket_pid[WAITERS];    /* a sync the client asks after (`sync_start`, `sync_poll`) */
static uint8_t ticket_done[WAITERS];    /* ... finished: its answer is ticket_status, kept until asked */
static int8_t ticket_status[WAITERS];
#define WATCHES         4u
static struct svc_watch watches[WATCHES];
static uint64_t flushing_gen;           /* a flush in flight covers the syncs up to this generation (0: none) */
static int booted;
static uint64_t req_first = 1, req_last;  /* the blocks of the request at hand: never taken for another */
static struct txn txns[TXNS];
static unsigned txn_held;               /* blocks the transactions hold */

#define FLUSH_TAG       UINT64_MAX

static void interrupt(void);

static int ready(void)
{
    int err = vblk_open(&disk, interrupt);
    if (!err && disk.blk_size > BLOCK)
        return SVC_E_STATE;                             /* (a logical block larger than the cache's) */
    if (!err && !booted) {
        uint64_t limit = svc_memory_limit(), want = limit ? limit / 8 / BLOCK : CACHE_DEFAULT;
        nslots = want < CACHE_MIN ? CACHE_MIN : want > CACHE_MAX ? CACHE_MAX : (unsigned)want;
        nslots = nslots / PER_PIECE * PER_PIECE;
        for (nbuckets = 1; nbuckets < nslots / 4; nbuckets *= 2)
            ;
        cache = cache ? cache : svc_alloc(nslots * sizeof(*cache));
        hash = hash ? hash : svc_alloc(nbuckets * sizeof(*hash));
        free_stack = free_stack ? free_stack : svc_alloc(nslots * sizeof(*free_stack));
        if (!cache || !hash || !free_stack)
            return SVC_E_NOMEM;                         /* (tried again at the next request) */
        for (unsigned i = 0; i < nbuckets; i++)
            hash[i] = NONE;
        booted = 1;
    }
    return err;
}

static uint32_t block_bytes(uint64_t no)
{
    uint64_t left = disk.capacity - no * SPB;
    return (uint32_t)(left < SPB ? left : SPB) * VBLK_SECTOR;
}

static struct cblock *lookup(uint64_t no)
{
    for (uint16_t i = hash[no & (nbuckets - 1)]; i != NONE; i = cache[i].next)
        if (cache[i].no == no && cache[i].state != B_FREE && cache[i].state != B_TXN)
            return &cache[i];
    return NULL;
}

/* Block no as written in transaction slot t, or NULL. */
static struct cblock *lookup_txn(uint64_t no, unsigned t)
{
    for (uint16_t i = hash[no & (nbuckets - 1)]; i != NONE; i = cache[i].next)
        if (cache[i].no == no && cache[i].state == B_TXN && cache[i].txn == t + 1)
            return &cache[i];
    return NULL;
}

/* Out of its hash chain (to be taken for another block number). */
static void unchain(struct cblock *c)
{
    uint16_t idx = (uint16_t)(c - cache), *p = &hash[c->no & (nbuckets - 1)];
    while (*p != NONE && *p != idx)
        p = &cache[*p].next;
    if (*p == idx)
        *p = c->next;
}

/* Forget block c: free for the next take. */
static void unhash(struct cblock *c)
{
    unchain(c);
    c->state = B_FREE;
    free_stack[nfree++] = (uint16_t)(c - cache);
}

static int in_request_at_hand(const struct cblock *c) { return c->no >= req_first && c->no <= req_last; }
static int writable_out(const struct cblock *c)
{
    return c && c->state == B_VALID && c->dirty && !in_request_at_hand(c);
}

/* Start writing dirty block c out with the dirty blocks next to it, up
 * to the driver's segments, as one request (0, or E_AGAIN when no slot is
 * free). The blocks of the request at hand stay: it may be copying into
 * them. */
static int write_out(struct cblock *c)
{
    struct vblk_seg seg[VBLK_SEGS];
    struct cblock *first = c, *prev;
    for (unsigned back = 1; back < disk.max_segs && first->no > 0 && writable_out(prev = lookup(first->no - 1)); back++)
        first = prev;
    unsigned n = 0;
    uint16_t head = (uint16_t)(first - cache);
    for (struct cblock *k = first, *last = NULL; n < disk.max_segs && writable_out(k); k = lookup(k->no + 1)) {
        seg[n].pa = k->pa;                              /* (past the disk's end lookup finds none) */
        seg[n].len = block_bytes(k->no);
        if (last)
            last->run = (uint16_t)(k - cache);
        k->run = NONE;
        last = k;
        n++;
    }
    int err = vblk_submit_sg(&disk, VBLK_T_OUT, first->no * SPB, seg, n, head);
    if (err)
        return err;
    for (uint16_t i = head; i != NONE; i = cache[i].run) {
        cache[i].state = B_WRITING;
        cache[i].dirty = 0;
    }
    nwriting += n;
    return 0;
}

/* A free block: one from the stack, or new memory while the cache is
 * below its size. NULL when it is at its size and none is free. */
static struct cblock *free_block(void)
{
    if (!nfree && made < nslots) {
        uint64_t pa;
        uint8_t *mem = svc_dma_alloc(PIECE, &pa);
        if (mem) {
            for (unsigned k = PER_PIECE; k-- > 0;) {
                cache[made + k].data = mem + k * BLOCK;
                cache[made + k].pa = pa + k * BLOCK;
                cache[made + k].state = B_FREE;
                free_stack[nfree++] = (uint16_t)(made + k);
            }
            made += PER_PIECE;
        }
    }
    return nfree ? &cache[free_stack[--nfree]] : NULL;
}

/* A clean block to take back: the first valid, clean one the clock's
 * hand meets that was not used since it last passed (NULL after two
 * turns without one). */
static struct cblock *clean_block(void)
{
    for (unsigned k = 0; k < 2 * made; k++) {
        struct cblock *c = &cache[hand];
        hand = hand + 1 < made ? hand + 1 : 0;
        if (c->state != B_VALID || c->dirty || in_request_at_hand(c))
            continue;
        if (c->ref) {
            c->ref = 0;                                 /* (a second chance) */
            continue;
        }
        unchain(c);
        return c;
    }
    return NULL;
}

/* A block for block number no, not yet valid: a free one (made if the
 * cache is not at its size), else a clean one by the clock. NULL when
 * every block is dirty or busy (then the oldest dirty ones are started
 * on their way out, ROOM blocks or as many as the queue takes, so that
 * `wait` brings room for more than one block) or memory ran out. */
#define ROOM            128u
static void txn_expire(uint64_t idle);

/* No block could be had: the oldest dirty ones start on their way out
 * (room for the next try), and transactions left idle are dropped. */
static void make_room(void)
{
    txn_expire(TXN_STALE_NS);
    while (nwriting < ROOM) {
        struct cblock *oldest_dirty = NULL;
        for (unsigned i = 0; i < made; i++)
            if (writable_out(&cache[i]) && (!oldest_dirty || cache[i].used < oldest_dirty->used))
                oldest_dirty = &cache[i];
        if (!oldest_dirty || write_out(oldest_dirty))
            break;
    }
}

static struct cblock *take(uint64_t no)
{
    struct cblock *c = free_block();
    if (!c)
        c = clean_block();
    if (!c) {
        make_room();
        return NULL;
    }
    c->no = no;
    c->state = B_FREE;
    c->dirty = c->failed = c->fresh = 0;
    c->ref = 1;
    c->used = ++clock;
    c->next = hash[no & (nbuckets - 1)];
    hash[no & (nbuckets - 1)] = (uint16_t)(c - cache);
    return c;
}

/* Put the run of n blocks from cache[head] (chained by run) on the
 * disk's queue: 0, or an error of the driver's (no slot: then its blocks
 * are forgotten, and asked for again by the client's next try). */
static int read_run(uint16_t head, const struct vblk_seg *seg, unsigned n)
{
    int err = vblk_submit_sg(&disk, VBLK_T_IN, cache[head].no * SPB, seg, n, head);
    for (uint16_t i = head, k; err && i != NONE; i = k) {
        k = cache[i].run;
        unhash(&cache[i]);
    }
    return err;
}

/* Start fetching the blocks of [first, last] that are neither cached nor
 * on their way, each run of them one request (up to the driver's
 * segments), until no block or slot is free (the client's next try asks
 * again for what was left). */
static void fetch_range(uint64_t first, uint64_t last)
{
    struct vblk_seg seg[VBLK_SEGS];
    uint16_t head = NONE, tail = NONE;
    unsigned n = 0;
    for (uint64_t no = first; no <= last; no++) {
        if (n && (n == (solo ? 1u : disk.max_segs) || lookup(no))) {
            if (read_run(head, seg, n))
                return;
            solo -= solo > 0;
            n = 0;
        }
        if (lookup(no))
            continue;
        struct cblock *c = take(no);
        if (!c)
            break;
        c->state = B_READING;
        c->run = NONE;
        if (n)
            cache[tail].run = (uint16_t)(c - cache);
        else
            head = (uint16_t)(c - cache);
        tail = (uint16_t)(c - cache);
        seg[n].pa = c->pa;
        seg[n].len = block_bytes(no);
        n++;
    }
    if (n && read_run(head, seg, n) == 0)
        solo -= solo > 0;
}

/* Sync slot i waits: a kept reply, or a ticket not finished. */
static int syncing(unsigned i) { return syncer[i] || (ticket_pid[i] && !ticket_done[i]); }

static int anyone_syncs(void)
{
    for (unsigned i = 0; i < WAITERS; i++)
        if (syncing(i))
            return 1;
    return 0;
}

static int anyone_watches(void)
{
    for (unsigned i = 0; i < WATCHES; i++)
        if (watches[i].pid)
            return 1;
    return 0;
}

/* Sync slot i is over with `status`: its reply, or its ticket's answer. */
static void sync_answer(unsigned i, int status)
{
    if (syncer[i]) {
        blk_sync_reply(syncer[i], status);
        syncer[i] = 0;
    } else {
        ticket_done[i] = 1;
        ticket_status[i] = (int8_t)status;
    }
}

/* Syncs whose blocks are all out: flush the disk for them, or answer them
 * when the disk has no write cache to flush. */
static void sync_progress(void)
{
    if (!anyone_syncs())
        return;                                         /* (every completion comes here: no scan for nobody) */
    uint64_t oldest = UINT64_MAX;                       /* the oldest generation still dirty or being written */
    for (unsigned i = 0; i < made; i++) {
        struct cblock *c = &cache[i];
        if ((c->state == B_VALID && c->dirty) || c->state == B_WRITING)
            oldest = c->gen < oldest ? c->gen : oldest;
    }
    uint64_t ready_gen = 0;
    for (unsigned i = 0; i < WAITERS; i++)
        if (syncing(i) && sync_gen[i] < oldest && sync_gen[i] > ready_gen)
            ready_gen = sync_gen[i];
    if (!ready_gen || flushing_gen)
        return;
    if (disk.flags & VBLK_FLUSH) {
        if (vblk_submit(&disk, VBLK_T_FLUSH, 0, 0, 0, FLUSH_TAG) == 0)
            flushing_gen = ready_gen;
        return;
    }
    for (unsigned i = 0; i < WAITERS; i++)
        if (syncing(i) && sync_gen[i] <= ready_gen)
            sync_answer(i, sync_failed[i] ? SVC_E_IO : 0);
}

/* Start writing the blocks the waiting syncs wait for, as slots allow. */
static void sync_push(void)
{
    uint64_t newest = 0;
    for (unsigned i = 0; i < WAITERS; i++)
        if (syncing(i) && sync_gen[i] > newest)
            newest = sync_gen[i];
    for (unsigned i = 0; i < made && newest; i++)
        if (cache[i].state == B_VALID && cache[i].dirty && cache[i].gen <= newest && write_out(&cache[i]))
            break;
    sync_progress();
}

static void completed(uint64_t tag, int status)
{
    if (tag == FLUSH_TAG) {
        for (unsigned i = 0; i < WAITERS; i++)
            if (syncing(i) && sync_gen[i] <= flushing_gen)
                sync_answer(i, status ? status : sync_failed[i] ? SVC_E_IO : 0);
        flushing_gen = 0;
        return;
    }
    /* A run the disk failed: its blocks are forgotten, not failed (the
     * bad sector may be one of them), and read again one a request for a
     * while, so that only a block the disk cannot read is told E_IO. */
    int run = tag < made && cache[tag].run != NONE && cache[tag].state == B_READING;
    if (status && run)
        solo = 2 * VBLK_SEGS;
    for (uint64_t i = tag, next; i < made; i = next) {
        struct cblock *c = &cache[i];
        next = c->run;
        if (c->state == B_READING && status && run) {
            unhash(c);
        } else if (c->state == B_READING) {
            c->state = B_VALID;
            c->failed = status != 0;
        } else if (c->state == B_WRITING) {
            c->state = B_VALID;
            nwriting--;
            if (status) {
                int told = 0;                           /* the syncs that waited for it fail */
                for (unsigned k = 0; k < WAITERS; k++)
                    if (syncing(k) && sync_gen[k] >= c->gen)
                        sync_failed[k] = 1, told = 1;
                write_failed |= !told;
                c->dirty = 1;                           /* (tried again by the next sync, */
                c->gen = gen;                           /* which the syncs waiting now do not wait for) */
            }
        }
    }
}

/* Everything the disk finished: its blocks and syncs, then the waiters. */
static void harvest(void)
{
    uint64_t tag;
    int status, any = 0;
    while (vblk_done(&disk, &tag, &status)) {
        completed(tag, status);
        any = 1;
    }
    if (!any)
        return;
    sync_push();
    for (unsigned i = 0; i < WAITERS; i++) {
        if (waiter[i]) {
            blk_wait_reply(waiter[i], 0);
            waiter[i] = 0;
            waiter_pid[i] = 0;
        }
    }
    svc_watch_signal(watches, WATCHES, 0);
}

static int anyone_waits(void)
{
    for (unsigned i = 0; i < WAITERS; i++)
        if (waiter[i] || syncing(i))
            return 1;
    return anyone_watches();
}

/* Arm the interrupt while someone waits; what finished meanwhile is taken. */
static void rearm(void)
{
    while (vblk_arm(&disk, anyone_waits()))
        harvest();
}

static void interrupt(void)
{
    vblk_irq_ack(&disk);
    harvest();
    rearm();
    svc_irq_done(disk.irq);
}

static int64_t info(struct svc_call *call, uint64_t *sectors, uint32_t *block_size, uint32_t *flags, uint32_t *geometry)
{
    (void)call;
    int err = ready();
    if (err)
        return err;
    *sectors = disk.capacity;
    *block_size = disk.blk_size;
    *flags = disk.flags;
    *geometry = (uint32_t)disk.cylinders << 16 | (uint32_t)disk.heads << 8 | disk.sectors;
    return 0;
}

/* The blocks a write took but did not fill go back: the disk's bytes are
 * theirs, not the zeros they were given. */
static void drop_fresh(uint64_t first, uint64_t last)
{
    for (uint64_t no = first; no <= last; no++) {
        struct cblock *c = lookup(no);
        if (c && c->fresh)
            unhash(c);
    }
}

/* The blocks of a request, used now: the least recently used are others'. */
static void touch(uint64_t first, uint64_t last)
{
    for (uint64_t no = first; no <= last; no++) {
        struct cblock *c = lookup(no);
        if (c)
            c->used = ++clock, c->ref = 1;
    }
}

static int64_t check_range(uint64_t sector, uint64_t len)
{
    if (!len || len % VBLK_SECTOR || len > VBLK_MAX_BYTES)
        return SVC_E_INVAL;
    if (sector > disk.capacity || len / VBLK_SECTOR > disk.capacity - sector)
        return SVC_E_RANGE;
    return 0;
}

static int64_t read_range(struct svc_call *call, uint64_t sector, uint64_t buf, uint64_t buf_len, uint64_t first,
                          uint64_t last)
{
    int missing = 0;
    touch(first, last);
    for (uint64_t no = first; no <= last; no++) {
        struct cblock *c = lookup(no);
        if (c && c->state == B_VALID && c->failed) {
            unhash(c);                                  /* (told once: the next read tries again) */
            return SVC_E_IO;
        }
        missing |= !c || c->state == B_READING;
    }
    if (missing) {
        fetch_range(first, last);
        misses++;
        return disk.inflight ? SVC_E_AGAIN : SVC_E_NOMEM;      /* (nothing on its way: no memory for it) */
    }
    hits++;
    for (uint64_t no = first, done = 0; no <= last; no++) {
        struct cblock *c = lookup(no);
        uint64_t from = no == first ? (sector % SPB) * VBLK_SECTOR : 0;
        uint64_t n = BLOCK - from < buf_len - done ? BLOCK - from : buf_len - done;
        c->used = ++clock;
        if (svc_copy_out(call, buf + done, c->data + from, n))
            return SVC_E_FAULT;
        done += n;
    }
    return 0;
}

/* The blocks of [sector, sector + len / 512) are the request at hand's
 * while it runs: take() gives none of them to another block number. */
static int64_t in_request(int64_t (*run)(struct svc_call *, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t),
                          struct svc_call *call, uint64_t sector, uint64_t addr, uint64_t len, uint64_t *count)
{
    int64_t err = ready();
    if (err || (err = check_range(sector, len)) != 0)
        return err;
    harvest();
    req_first = sector / SPB;
    req_last = (sector + len / VBLK_SECTOR - 1) / SPB;
    err = run(call, sector, addr, len, req_first, req_last);
    req_first = 1;
    req_last = 0;
    if (anyone_watches())
        rearm();                                        /* (a watcher hears when what was started ends) */
    if (!err)
        *count = len;
    return err;
}

static int64_t read(struct svc_call *call, uint64_t sector, uint64_t buf, uint64_t buf_len, uint64_t *count)
{
    return in_request(read_range, call, sector, buf, buf_len, count);
}

static int64_t write_range(struct svc_call *call, uint64_t sector, uint64_t data, uint64_t data_len, uint64_t first,
                           uint64_t last)
{
    if (disk.flags & VBLK_RO)
        return SVC_E_PERM;
    uint64_t end = sector + data_len / VBLK_SECTOR;
    touch(first, last);
    /* First every block in place and valid (a part-covered one read in,
     * a whole-covered one taken without reading, zeroed), so that the
     * copy meets nothing but the client's own memory. */
    int again = 0;
    for (uint64_t no = first; no <= last; no++) {
        struct cblock *c = lookup(no);
        uint64_t lo = no * SPB, hi = lo + block_bytes(no) / VBLK_SECTOR;
        if (c && c->state == B_VALID && c->failed) {
            unhash(c);                                  /* (a failed read: written whole, or read again) */
            c = NULL;
        }
        if (c) {
            again |= c->state != B_VALID;               /* being read or written: after that */
        } else if (sector > lo || end < hi) {
            fetch_range(no, no);
            again = 1;
        }
    }
    for (uint64_t no = first; no <= last && !again; no++) {
        if (lookup(no))
            continue;
        struct cblock *c = take(no);
        if (!c) {
            again = 1;
            break;
        }
        c->state = B_VALID;
        c->fresh = 1;
        memset(c->data, 0, BLOCK);
    }
    if (again) {
        drop_fresh(first, last);                        /* (the ones taken for this write go back) */
        misses++;
        return disk.inflight ? SVC_E_AGAIN : SVC_E_NOMEM;      /* (nothing on its way: no memory for it) */
    }
    for (uint64_t no = first, done = 0; no <= last; no++) {
        struct cblock *c = lookup(no);
        uint64_t from = no == first ? (sector % SPB) * VBLK_SECTOR : 0;
        uint64_t n = BLOCK - from < data_len - done ? BLOCK - from : data_len - done;
        if (!c->dirty)
            c->gen = gen;
        c->dirty = 1;                                   /* (before the copy: a fault leaves what it copied) */
        c->fresh = 0;
        c->used = ++clock;
        if (svc_copy_in(call, c->data + from, data + done, n)) {
            drop_fresh(no + 1, last);                   /* (never filled: the disk's bytes are the ones) */
            return SVC_E_FAULT;
        }
        done += n;
    }
    hits++;
    return 0;
}

/* ---------------------------------------------------------------- transactions */

/* The client's transaction slot, or TXNS. */
static unsigned txn_of(uint64_t pid)
{
    for (unsigned t = 0; t < TXNS; t++)
        if (txns[t].open && txns[t].pid == pid)
            return t;
    return TXNS;
}

/* Give a transaction block back to the free blocks. */
static void txn_free_block(struct cblock *c)
{
    c->txn = 0;
    if (c->no != UINT64_MAX)
        unchain(c);
    c->state = B_FREE;
    free_stack[nfree++] = (uint16_t)(c - cache);
}

/* Drop transaction t and all its blocks. */
static void txn_drop(unsigned t)
{
    struct txn *x = &txns[t];
    for (uint16_t *chain = &x->spare; chain != NULL; chain = chain == &x->spare ? &x->kept : NULL) {
        for (uint16_t i = *chain, k; i != NONE; i = k) {
            k = cache[i].run;
            txn_free_block(&cache[i]);
        }
    }
    txn_held -= x->held;
    *x = (struct txn){ 0 };
}

/* Transactions left untouched for `idle` ns (their client died, or
 * forgot them) give their blocks back; with TXN_STALE_NS only those
 * whose begin was over (one still gathering its room waits for the disk,
 * which may take longer). */
static void txn_expire(uint64_t idle)
{
    uint64_t now = svc_clock_ns();
    for (unsigned t = 0; t < TXNS; t++)
        if (txns[t].open && now > txns[t].touched && now - txns[t].touched > idle &&
            (txns[t].ready || idle == TXN_IDLE_NS))
            txn_drop(t);
}

static int64_t txn_begin(struct svc_call *call, uint64_t count)
{
    int err = ready();
    if (err)
        return err;
    if (disk.flags & VBLK_RO)
        return SVC_E_PERM;
    harvest();
    unsigned t = txn_of(call->pid);
    if (t < TXNS && (txns[t].ready || txns[t].want != count))
        txn_drop(t);                                    /* (a new one replaces it; the same begin
                                                         * asked again goes on gathering its room) */
    if (!count)
        return SVC_E_INVAL;
    if (count > nslots / 4)
        return SVC_E_LIMIT;
    txn_expire(TXN_IDLE_NS);
    t = txn_of(call->pid);
    for (int stale = 0; t == TXNS && stale < 2; stale++) {
        if (stale)
            txn_expire(TXN_STALE_NS);           /* (no place or room: the dead first) */
        t = 0;
        while (t < TXNS && txns[t].open)
            t++;
        if (t == TXNS || txn_held + count > nslots / 2)
            t = TXNS;
    }
    if (t == TXNS)
        return SVC_E_BUSY;
    if (!txns[t].open) {
        txns[t] = (struct txn){ .pid = call->pid, .open = 1, .spare = NONE, .kept = NONE, .want = (unsigned)count };
    }
    struct txn *x = &txns[t];
    x->touched = svc_clock_ns();
    while (x->held < count) {
        struct cblock *c = free_block();
        if (!c)
            c = clean_block();
        if (!c) {
            /* What it found stays its own (so that others' reads cannot
             * take it back meanwhile), and the same begin asked again
             * goes on from there once the disk made room. */
            make_room();
            if (anyone_watches())
                rearm();
            if (disk.inflight)
                return SVC_E_AGAIN;
            /* (rearm took what the disk finished since this request
             * began: the blocks it wrote are clean now) */
            if (!(c = clean_block())) {
                txn_drop(t);
                return SVC_E_NOMEM;                     /* (nothing on its way: no memory for it) */
            }
        }
        c->state = B_TXN;
        c->no = UINT64_MAX;                             /* (out of the hash until written) */
        c->txn = (uint8_t)(t + 1);
        c->run = x->spare;
        x->spare = (uint16_t)(c - cache);
        x->held++;
        txn_held++;
    }
    x->ready = 1;
    return 0;
}

/* A write into the client's transaction: whole blocks into its own,
 * all of them or none (E_LIMIT), never waiting. A fault drops the
 * transaction. */
static int64_t txn_write(struct svc_call *call, uint64_t sector, uint64_t data, uint64_t len, uint64_t *count)
{
    int64_t err = ready();
    if (err)
        return err;
    txn_expire(TXN_IDLE_NS);
    unsigned t = txn_of(call->pid);
    if (t == TXNS || !txns[t].ready)
        return SVC_E_NOENT;                             /* (none, or its begin is not over) */
    struct txn *x = &txns[t];
    if ((err = check_range(sector, len)) != 0)
        return err;
    uint64_t first = sector / SPB, last = (sector + len / VBLK_SECTOR - 1) / SPB, fresh = 0, have = 0;
    if (sector % SPB || (len % BLOCK && sector + len / VBLK_SECTOR != disk.capacity))
        return SVC_E_INVAL;                             /* (not whole blocks) */
    x->touched = svc_clock_ns();
    for (uint64_t no = first; no <= last; no++)
        fresh += lookup_txn(no, t) == NULL;
    for (uint16_t i = x->spare; i != NONE && have < fresh; i = cache[i].run)
        have++;
    if (have < fresh)
        return SVC_E_LIMIT;
    for (uint64_t no = first, done = 0; no <= last; no++) {
        struct cblock *c = lookup_txn(no, t);
        if (!c) {
            c = &cache[x->spare];
            x->spare = c->run;
            c->run = x->kept;
            x->kept = (uint16_t)(c - cache);
            c->no = no;
            c->next = hash[no & (nbuckets - 1)];
            hash[no & (nbuckets - 1)] = (uint16_t)(c - cache);
        }
        uint64_t n = block_bytes(no);
        if (svc_copy_in(call, c->data, data + done, n)) {
            txn_drop(t);
            return SVC_E_FAULT;
        }
        done += n;
    }
    *count = len;
    return 0;
}

static int64_t write(struct svc_call *call, uint64_t sector, uint64_t data, uint64_t data_len, uint64_t *count)
{
    return in_request(write_range, call, sector, data, data_len, count);
}

static int64_t txn_commit(struct svc_call *call, uint32_t *joined)
{
    int err = ready();
    if (err)
        return err;
    harvest();
    txn_expire(TXN_IDLE_NS);
    unsigned t = txn_of(call->pid);
    if (t == TXNS || !txns[t].ready)
        return SVC_E_NOENT;
    struct txn *x = &txns[t];
    x->touched = svc_clock_ns();
    uint64_t g = gen;
    for (uint16_t i = x->kept; i != NONE; i = cache[i].run) {
        struct cblock *old = lookup(cache[i].no);
        if (old && old->state != B_VALID)
            return SVC_E_AGAIN;                         /* (being read or written: after that) */
        if (old && old->dirty && old->gen < g)
            g = old->gen;
    }
    /* All at once: each block replaces the cache's, dirty in one
     * generation: the oldest of the dirty blocks they replace (a sync
     * waiting for one of those now waits for all of them: it cannot
     * answer with the block's bytes on the disk neither as it covered
     * them nor as they are now), else the current one (the next sync's). */
    for (uint16_t i = x->kept, k; i != NONE; i = k) {
        struct cblock *c = &cache[i], *old = lookup(c->no);
        k = c->run;
        if (old)
            unhash(old);
        c->state = B_VALID;
        c->txn = 0;
        c->dirty = 1;
        c->gen = g;
        c->failed = c->fresh = 0;
        c->ref = 1;
        c->used = ++clock;
        c->run = NONE;
        x->held--;
        txn_held--;
    }
    x->kept = NONE;
    txn_drop(t);                                        /* (what it did not use) */
    *joined = g < gen;
    if (g < gen)
        sync_push();                                    /* (a waiting sync's blocks: on their way) */
    return 0;
}

static int64_t txn_abort(struct svc_call *call)
{
    int err = ready();
    if (err)
        return err;
    unsigned t = txn_of(call->pid);
    if (t < TXNS)
        txn_drop(t);
    return 0;
}

/* Whether a sync has anything to wait for: a block dirty or being
 * written, or the disk's write cache to flush. Else a sync answers at
 * once, with the failure of a write no sync waited for. */
static int sync_needed(void)
{
    for (unsigned k = 0; k < made; k++)
        if ((cache[k].state == B_VALID && cache[k].dirty) || cache[k].state == B_WRITING)
            return 1;
    return (disk.flags & VBLK_FLUSH) != 0;
}

/* A new sync in slot i: the blocks dirty now are its (their generation). */
static void sync_begin(unsigned i)
{
    sync_failed[i] = (uint8_t)write_failed;
    write_failed = 0;
    sync_gen[i] = gen++;                                /* (what is dirtied from now on is the next sync's) */
    sync_push();
    rearm();
}

static int64_t sync(struct svc_call *call)
{
    int err = ready();
    if (err)
        return err;
    harvest();
    if (!sync_needed()) {
        int failed = write_failed;
        write_failed = 0;
        return failed ? SVC_E_IO : 0;
    }
    for (unsigned k = 0; k < WAITERS; k++)
        if (syncer[k] && syncer_pid[k] == call->pid)
            return SVC_E_BUSY;                          /* (one kept sync a client: one cannot take every place) */
    unsigned i = 0;
    while (i < WAITERS && (syncer[i] || ticket_pid[i]))
        i++;
    if (i == WAITERS)
        return SVC_E_BUSY;
    syncer[i] = svc_defer(call);
    if (!syncer[i])
        return SVC_E_NOMEM;
    syncer_pid[i] = call->pid;
    sync_begin(i);
    return SVC_DEFERRED;
}

/* The client's ticket slot, or WAITERS. */
static unsigned ticket_of(uint64_t pid)
{
    for (unsigned i = 0; i < WAITERS; i++)
        if (ticket_pid[i] == pid)
            return i;
    return WAITERS;
}

static int64_t sync_start(struct svc_call *call, uint64_t *ticket)
{
    int err = ready();
    if (err)
        return err;
    harvest();
    unsigned i = ticket_of(call->pid);
    int carried = 0;                                    /* the client's last ticket, not asked after: */
    if (i < WAITERS) {                                  /* its failure is the new one's */
        carried = ticket_done[i] ? ticket_status[i] != 0 : sync_failed[i];
        ticket_pid[i] = 0;
    } else {
        i = 0;
        while (i < WAITERS && (syncer[i] || ticket_pid[i]))
            i++;
        for (unsigned k = 0; i == WAITERS && k < WAITERS; k++)
            if (!syncer[k] && ticket_done[k] && !svc_client_alive(ticket_pid[k]))
                i = k;                                  /* (all taken: a finished one of a client that ended) */
        if (i == WAITERS)
            return SVC_E_BUSY;
    }
    ticket_pid[i] = call->pid;
    ticket_done[i] = 0;
    if (!sync_needed()) {
        sync_gen[i] = gen;
        ticket_done[i] = 1;
        ticket_status[i] = (int8_t)(write_failed || carried ? SVC_E_IO : 0);
        write_failed = 0;
    } else {
        sync_begin(i);
        sync_failed[i] |= (uint8_t)carried;
    }
    *ticket = sync_gen[i];
    return 0;
}

static int64_t sync_poll(struct svc_call *call, uint64_t ticket)
{
    int err = ready();
    if (err)
        return err;
    unsigned i = ticket_of(call->pid);
    if (i == WAITERS || sync_gen[i] != ticket)
        return SVC_E_NOENT;
    if (!ticket_done[i])
        harvest();
    if (!ticket_done[i])
        return SVC_E_AGAIN;
    ticket_pid[i] = 0;
    return ticket_status[i];
}

static int64_t watch(struct svc_call *call, svc_handle note, uint64_t bits)
{
    int err = ready();
    if (err) {
        svc_handle_release(note);
        return err;                             /* (no disk: nothing to watch, and no ring to arm) */
    }
    if ((err = (int)svc_watch_set(watches, WATCHES, call->pid, note, bits)) != 0)
        return err;
    rearm();
    return 0;
}

static int64_t wait(struct svc_call *call)
{
    int err = ready();
    if (err)
        return err;
    harvest();
    if (!disk.inflight)
        return 0;                                       /* nothing in flight: nothing would come */
    unsigned i = 0;
    for (unsigned k = 0; k < WAITERS; k++)
        if (waiter[k] && waiter_pid[k] == call->pid)
            return SVC_E_BUSY;                          /* (one waiter a client: one cannot take every place) */
    while (i < WAITERS && waiter[i])
        i++;
    if (i == WAITERS)
        return SVC_E_BUSY;
    /* Ask for the interrupt first, then look: what finishes after the
     * look raises it (its handler runs after this request, in either
     * placement), what finished before is taken here and answers now. */
    if (vblk_arm(&disk, 1)) {
        harvest();
        rearm();
        return 0;
    }
    waiter[i] = svc_defer(call);
    if (!waiter[i]) {
        rearm();
        return SVC_E_NOMEM;
    }
    waiter_pid[i] = call->pid;
    return SVC_DEFERRED;
}

static int64_t stats(struct svc_call *call, uint64_t *reads, uint64_t *writes, uint64_t *flushes, uint64_t *hit,
                     uint64_t *miss, uint64_t *dirty, uint64_t *errors, uint64_t *interrupts)
{
    (void)call;
    int err = ready();
    if (err)
        return err;
    uint64_t d = 0;
    for (unsigned i = 0; i < made; i++)
        d += cache[i].state == B_VALID && cache[i].dirty;
    *reads = disk.reads;
    *writes = disk.writes;
    *flushes = disk.flushes;
    *hit = hits;
    *miss = misses;
    *dirty = d;
    *errors = disk.errors;
    *interrupts = disk.interrupts;
    return 0;
}

#define PREFETCH_MAX    (2u << 20)              /* bytes one prefetch may ask for */

static int64_t prefetch(struct svc_call *call, uint64_t sector, uint64_t count)
{
    (void)call;
    int err = ready();
    if (err)
        return err;
    if (!count || count > PREFETCH_MAX / VBLK_SECTOR)
        return SVC_E_INVAL;
    if (sector > disk.capacity || count > disk.capacity - sector)
        return SVC_E_RANGE;
    harvest();
    fetch_range(sector / SPB, (sector + count - 1) / SPB);
    if (anyone_watches())
        rearm();                                        /* (a watcher hears when they are in) */
    return 0;
}

/* The handlers: the generated skeleton (blk_service, blk_fast) calls them. */
const struct blk_ops blk_ops = { info, read, write, sync, wait, stats, sync_start, sync_poll, watch, prefetch,
                                 txn_begin, txn_write, txn_commit, txn_abort };
