/*
 * The ext2 file system service (idl/ext2fs.toml): the disk's ext2
 * (lib/ext2.c reads, lib/ext2_write.c writes) over the block device
 * service, by inode, placed in the kernel or in user space by the system
 * description. Its client (the Linux personality: services/linux/data.c)
 * keeps the names, the tree and who may do what.
 *
 * No request waits for the disk. The file system reads through a cache
 * here (an eighth of the service's memory limit, in blocks of 4 KiB
 * found by a hash, taken back by a clock) over blk's; a block neither
 * holds is fetched while the request answers E_AGAIN, having changed
 * nothing, and the client asks again when blk's `watch` says the disk
 * finished a request.
 *
 * A change writes into copies of its blocks, kept whole or dropped with
 * the saved struct ext2_fs (op_begin, op_end). Dirty blocks go to blk
 * as one transaction (drain), so blk holds the file system as it was
 * between two changes: a user-placed instance that dies is restarted by
 * its supervisor and mounts what blk holds, which e2fsck finds clean.
 * fsync and its kin wait for blk's sync (sync_all).
 */
#include "ext2fs_if.h"
#include "blk_if.h"
#include "ext2.h"
#include "format.h"
#include "pstring.h"
#include "svc_proc.h"
#include <stdarg.h>

#define DBLOCK          4096u           /* the unit of the cache here and in the blk service */
#define CACHE_MIN       256u            /* blocks: 1 MiB, ... */
#define CACHE_MAX       16384u          /* ... to 64 MiB; an eighth of the service's memory limit */
#define READ_AHEAD      16u             /* blocks fetched after a block neither cache has ... */
#define READ_AHEAD_MAX  256u            /* ... growing to this (1 MiB) while reads go on in order */
#define SLAB            16u             /* cache blocks given memory at once (64 KiB) */
#define BATCH           16u             /* blocks moved to or from blk by one call */
#define WRITEBACK_NS    (5000000000ull) /* a dirty block goes to the blk service within about this
                                         * (Linux's dirty_writeback_centisecs), or when half of
                                         * dirty_max() is dirty, or at a sync */
#define OP_MAX          128u            /* blocks one change may write (a write goes CHUNK at a time) */
#define TXN_BLOCKS      256u            /* dirty blocks at most: what one blk transaction surely holds
                                         * (a quarter of its smallest cache), so that every change
                                         * made is handed over whole, with all the others */
#define CHUNK           32768u
#define SECTOR          512u
#define ORPHANS         64u
#define RELEASE_STEP    (16u << 20)     /* a file is cut or freed this much at a change, so that a
                                         * change writes a few bitmaps and reads a few indirect blocks */
#define WRITE_MAX       (1u << 20)      /* bytes one `write` request moves at most */
#define ENOMEM_         12              /* (Linux's ENOMEM: the cache all dirty or held) */
#define EFAULT_         14

static uint32_t blk_ep;                 /* the blk service (0: not asked yet) */
static uint64_t disk_bytes;
static uint32_t disk_flags;             /* blk's `info` flags: 1 read-only */
static int64_t crash_after = -1;        /* writes to blk before a fault (`crash`; -1: none) */

/* The cache: a block is valid (read from the disk, or made whole by a
 * change; then in its hash chain) and maybe dirty (changed here, not
 * handed to the blk service yet; then in the queue of dirty blocks). A
 * change writes into a copy (op) that becomes the block when the change
 * is over, or goes if it is abandoned; `fresh`: made by the change
 * without reading (it covered the whole block). A block is taken for
 * another by the clock: the first clean one, not in a change, that was
 * not used since the hand last passed it. */
struct cblock {
    uint64_t no;
    uint8_t *data, *op;
    int32_t next;                       /* its hash chain's next (-1: none) */
    uint8_t valid, dirty, fresh, used, queued;
    uint8_t held;                       /* being filled by block(): take() leaves it */
};
static struct cblock *cache;
static uint32_t nblocks, nbuckets, hand;
static int32_t *heads;                  /* nbuckets hash chains */
static int32_t *dirtyq;                 /* a ring of nblocks: blocks in the order they became dirty */
static uint32_t dq_head, dq_len, ndirty;
static uint8_t *stage;                  /* BATCH blocks moved to or from blk at once */
#define DIRENT_BATCH    16384u          /* bytes of records one readdir answers at most */
#define PATH_BYTES      4096u           /* a symbolic link's target at most (PATH_MAX) */
static uint8_t *bounce;                 /* a write's CHUNK from the client */
static uint8_t *dirents;                /* readdir's records (DIRENT_BATCH) */
static uint8_t *path;                   /* a link's target (PATH_BYTES), read or made
                                         * (made with the cache: memory, not the image's) */
static int32_t pins[OP_MAX];            /* the blocks with an op copy */
static uint8_t *spare[OP_MAX];          /* op copies kept for the next changes (each svc_alloc maps
                                         * memory of its own in user space: costly) */
static unsigned spares;
static uint64_t kept_changes;           /* changes kept so far (and mounts) */
static uint64_t dirty_since;            /* when the oldest dirty block became dirty (none dirty: 0) */
static unsigned pinned;
static uint64_t handed, synced;         /* blocks handed to blk so far; of them, synced to the disk */
static uint64_t ticket, ticket_at;      /* a blk sync under way (0: none), and `handed` when it began */
static int sync_failed;                 /* a write or sync of blk failed: the next fsync says EIO */
static struct ext2_fs fs, saved;        /* the file system, and as it was when the change began */
static int in_op, mounted;
static uint64_t owner;                  /* the client that mounted it: the only one it serves */
static uint64_t put_need;               /* set_readonly's sync under way */
static struct { uint32_t ino; uint8_t gone; } orphans[ORPHANS];   /* unlinked while open */

/* A test's fault (`crash`): after the writes it allowed, in the middle of
 * handing blocks over. */
static void crash_tick(void)
{
    if (crash_after == 0)
        svc_crash_for_testing();
    if (crash_after > 0)
        crash_after--;
}

/* A line on the console, as the kernel's log would have it. */
static void svc_log(const char *f, ...)
{
    char line[160];
    va_list ap;
    va_start(ap, f);
    int n = fmt_vsnprintf(line, sizeof(line) - 1, f, ap);
    va_end(ap);
    n = n < 0 ? 0 : n > (int)sizeof(line) - 2 ? (int)sizeof(line) - 2 : n;
    line[n++] = '\n';
    svc_console_write(line, (uint64_t)n);
}

/* ---------------------------------------------------------------- the disk */

static uint64_t disk_blocks(void) { return (disk_bytes + DBLOCK - 1) / DBLOCK; }
static uint64_t block_bytes(uint64_t no) { return disk_bytes - no * DBLOCK < DBLOCK ? disk_bytes - no * DBLOCK : DBLOCK; }

/* The cache's tables, sized from the personality's memory limit: 0 or -ENOMEM_. */
static int cache_init(void)
{
    uint64_t want = svc_memory_limit() / 8 / DBLOCK;
    nblocks = want < CACHE_MIN ? CACHE_MIN : want > CACHE_MAX ? CACHE_MAX : (uint32_t)want;
    nblocks = nblocks / SLAB * SLAB;
    for (nbuckets = 1; nbuckets < nblocks; nbuckets *= 2)
        ;
    cache = svc_alloc(nblocks * sizeof(*cache));
    heads = svc_alloc(nbuckets * sizeof(*heads));
    dirtyq = svc_alloc(nblocks * sizeof(*dirtyq));
    stage = svc_alloc(BATCH * DBLOCK);
    bounce = svc_alloc(CHUNK);
    dirents = svc_alloc(DIRENT_BATCH);
    path = svc_alloc(PATH_BYTES);
    if (!cache || !heads || !dirtyq || !stage || !bounce || !dirents || !path) {
        cache = NULL;                           /* (tried again at the next mount) */
        return -ENOMEM_;
    }
    for (uint32_t i = 0; i < nbuckets; i++)
        heads[i] = -1;
    return 0;
}

static uint32_t bucket(uint64_t no)
{
    return (uint32_t)((no * 0x9e3779b97f4a7c15ull) >> 40) & (nbuckets - 1);
}

static struct cblock *lookup(uint64_t no)
{
    for (int32_t i = heads[bucket(no)]; i >= 0; i = cache[i].next)
        if (cache[i].no == no)
            return &cache[i];
    return NULL;
}

/* Block c now holds block `no`, or nothing (unhash). */
static void hash_in(struct cblock *c, uint64_t no)
{
    uint32_t b = bucket(no);
    c->no = no;
    c->valid = 1;
    c->next = heads[b];
    heads[b] = (int32_t)(c - cache);
}

static void unhash(struct cblock *c)
{
    int32_t me = (int32_t)(c - cache), *at = &heads[bucket(c->no)];
    while (*at >= 0 && *at != me)
        at = &cache[*at].next;
    if (*at == me)
        *at = c->next;
    c->valid = 0;
}

/* Memory for the blocks of slots first..first + SLAB - 1 (those of i's
 * slab), made at once as the cache first reaches them: 0 or -ENOMEM_. */
static int slab(uint32_t i)
{
    uint32_t first = i / SLAB * SLAB;
    uint8_t *mem = svc_alloc(SLAB * DBLOCK);
    if (!mem)
        return -ENOMEM_;
    for (uint32_t k = 0; k < SLAB; k++)
        cache[first + k].data = mem + k * DBLOCK;
    return 0;
}

/* The copy a change writes a block into: one kept from an earlier change, else new. */
static uint8_t *op_copy(void)
{
    return spares ? spare[--spares] : svc_alloc(DBLOCK);
}

static void op_copy_free(uint8_t *p)
{
    /* Never svc_free: a cache block's memory is a slice of a slab. There
     * is room: copies are made only when none is spare, at most OP_MAX
     * at once. */
    if (spares < OP_MAX)
        spare[spares++] = p;
}

/* A slot for a block (not valid, its data allocated): the clock's next
 * clean block not in a change; NULL if every one is dirty or held. */
static struct cblock *take(void)
{
    for (uint32_t k = 0; k < 2 * nblocks; k++) {
        struct cblock *c = &cache[hand];
        hand = hand + 1 < nblocks ? hand + 1 : 0;
        if (c->dirty || c->op || c->held)
            continue;
        if (c->valid && c->used) {
            c->used = 0;                        /* (a second chance) */
            continue;
        }
        if (!c->data && slab((uint32_t)(c - cache)))
            return NULL;
        if (c->valid)
            unhash(c);
        return c;
    }
    return NULL;
}

/* Read-ahead, as Linux's: a block neither cache has starts a window of
 * the READ_AHEAD blocks after it, which the blk service fetches (blk
 * `prefetch`: a run of blocks is one request to the disk) while the
 * caller waits for the block itself. When the blocks are then asked for
 * in order and the reads reach the window's mark (its first block, or
 * the first of the last window asked for), the next window is asked for,
 * twice as large up to READ_AHEAD_MAX, so that a long read finds its
 * blocks on their way or in already and seldom waits. A scan of an inode
 * table or a file waits for the disk once in a while, not at every
 * block. */
static uint64_t ra_start, ra_end, ra_mark, ra_size;     /* the blocks asked for, the mark, the window's size */

#define PREFETCH_MAX    512u            /* blocks blk takes in one prefetch (2 MiB) */
static void prefetch(uint64_t first, uint64_t n)
{
    if (first >= disk_blocks())
        return;
    n = n < disk_blocks() - first ? n : disk_blocks() - first;
    while (n) {
        uint64_t k = n < PREFETCH_MAX ? n : PREFETCH_MAX;
        uint64_t end = (first + k) * DBLOCK < disk_bytes ? (first + k) * DBLOCK : disk_bytes;
        (void)blk_prefetch(blk_ep, first * (DBLOCK / SECTOR), (end - first * DBLOCK) / SECTOR);
        first += k;                                     /* (a disk error: the block's own read says) */
        n -= k;
    }
}

/* Block no was not cached here and blk answered `missed` (it lacked it too). */
static void read_ahead(uint64_t no, int missed)
{
    if (no >= ra_start && no < ra_end) {
        if (no < ra_mark)
            return;
        ra_size = 2 * ra_size < READ_AHEAD_MAX ? 2 * ra_size : READ_AHEAD_MAX;
        prefetch(ra_end, ra_size);
        ra_mark = ra_end;
        ra_end += ra_size;
        return;
    }
    if (!missed)
        return;
    ra_size = READ_AHEAD;
    ra_start = no;
    ra_mark = no + 1;
    ra_end = no + 1 + ra_size;
    prefetch(no + 1, ra_size);
}

/* Block `no` in the cache: 0 (*out), -EXT2_EAGAIN while the blk service
 * fetches it, -EXT2_EIO, or -ENOMEM_ when the cache is all dirty. With
 * `whole`, a block not cached is taken without reading (the caller
 * writes all of it). */
static int block(uint64_t no, int whole, struct cblock **out)
{
    struct cblock *c = lookup(no);
    if (c) {
        c->used = 1;
        *out = c;
        return 0;
    }
    if (no >= disk_blocks())
        return -EXT2_EIO;
    if (!(c = take()))
        return -ENOMEM_;
    if (whole) {
        c->fresh = 1;
    } else {
        if (!svc_may_call())
            return -EXT2_EAGAIN;                /* (the register entry: the full path asks the disk) */
        /* In a read-ahead window the blocks after it come along (not
         * cached here: then the first that is ends them), BATCH at most,
         * through `stage`: one call to blk for them all. When one of them
         * is not in yet, or failed, block no comes alone. */
        uint64_t n = 1, bytes = block_bytes(no), count = 0;
        if (no >= ra_start && no < ra_end)
            while (n < BATCH && no + n < ra_end && no + n < disk_blocks() && !lookup(no + n))
                bytes += block_bytes(no + n++);
        int64_t err = 0;
        if (n > 1 && (blk_read(blk_ep, no * (DBLOCK / SECTOR), stage, bytes, &count) != 0 || count != bytes))
            n = 1;
        if (n == 1) {
            bytes = block_bytes(no);
            err = blk_read(blk_ep, no * (DBLOCK / SECTOR), c->data, bytes, &count);
        }
        read_ahead(no, err == SVC_E_AGAIN);
        if (err == SVC_E_AGAIN)
            return -EXT2_EAGAIN;
        if (err || count != bytes)
            return -EXT2_EIO;
        if (n > 1)
            memcpy(c->data, stage, block_bytes(no));
        hash_in(c, no);
        c->used = 1;
        c->held = 1;                            /* (take() gives out none of these while they are filled) */
        struct cblock *got[BATCH];
        uint64_t k = 1;
        for (; k < n; k++) {
            struct cblock *o = take();
            if (!o)
                break;                          /* (all dirty or held: they are read when asked for) */
            memcpy(o->data, stage + k * DBLOCK, block_bytes(no + k));
            hash_in(o, no + k);
            o->used = o->held = 1;
            got[k] = o;
        }
        while (--k > 0)
            got[k]->held = 0;
        c->held = 0;
        *out = c;
        return 0;
    }
    hash_in(c, no);
    c->used = 1;
    *out = c;
    return 0;
}

/* The file system's read callback: what the change at hand wrote, else
 * the block. */
static int disk_read(void *ctx, uint64_t off, void *buf, uint32_t len)
{
    (void)ctx;
    uint8_t *dst = buf;
    if (off > disk_bytes || len > disk_bytes - off)
        return -EXT2_EIO;
    while (len) {
        struct cblock *c;
        uint32_t in = (uint32_t)(off % DBLOCK), k = DBLOCK - in < len ? DBLOCK - in : len;
        int err = block(off / DBLOCK, 0, &c);
        if (err)
            return err;
        memcpy(dst, (c->op ? c->op : c->data) + in, k);
        dst += k;
        off += k;
        len -= k;
    }
    return 0;
}

/* The map callback: the bytes in their cache block, when they lie in one. */
static int disk_map(void *ctx, uint64_t off, uint32_t len, const void **at)
{
    (void)ctx;
    struct cblock *c;
    *at = NULL;
    if (off > disk_bytes || len > disk_bytes - off)
        return -EXT2_EIO;
    if (off % DBLOCK + len > DBLOCK)
        return 0;                               /* (across two: the caller reads them) */
    int err = block(off / DBLOCK, 0, &c);
    if (!err)
        *at = (c->op ? c->op : c->data) + off % DBLOCK;
    return err;
}

/* The write callback: into the change's copy of each block. */
static int disk_write(void *ctx, uint64_t off, const void *buf, uint32_t len)
{
    (void)ctx;
    const uint8_t *src = buf;
    if (!in_op || off > disk_bytes || len > disk_bytes - off)
        return -EXT2_EIO;
    while (len) {
        struct cblock *c;
        uint64_t no = off / DBLOCK;
        uint32_t in = (uint32_t)(off % DBLOCK), k = DBLOCK - in < len ? DBLOCK - in : len;
        int err = block(no, in == 0 && k == block_bytes(no), &c);
        if (err)
            return err;
        if (!c->op) {
            if (pinned >= OP_MAX || !(c->op = op_copy())) {
                if (c->fresh) {
                    unhash(c);                  /* (never read: nothing of it is known) */
                    c->fresh = 0;
                }
                return -ENOMEM_;              /* (more than one change may write: the caller splits) */
            }
            pins[pinned++] = (int32_t)(c - cache);
            if (!c->fresh)
                memcpy(c->op, c->data, DBLOCK);
        }
        memcpy(c->op + in, src, k);
        src += k;
        off += k;
        len -= k;
    }
    return 0;
}

/* At most this many blocks dirty, and a hand-over due at half of it. */
static uint32_t dirty_max(void) { return nblocks < TXN_BLOCKS ? nblocks : TXN_BLOCKS; }

/* The dirty blocks forgotten as handed over (the queue empty). */
static void all_handed(void)
{
    for (; dq_len; dq_len--, dq_head = dq_head + 1 < nblocks ? dq_head + 1 : 0) {
        struct cblock *c = &cache[dirtyq[dq_head]];
        handed += c->dirty;
        c->dirty = c->queued = 0;
    }
    ndirty = 0;
    dirty_since = 0;
}

/* Hand the dirty blocks to the blk service one by one, in the order they
 * became dirty, as it takes them: 0, or -EXT2_EIO. What the blk service
 * holds may then be part of a change for a while (see drain). */
static int drain_each(void)
{
    while (dq_len) {
        struct cblock *c = &cache[dirtyq[dq_head]];
        if (c->dirty) {
            uint64_t bytes = block_bytes(c->no), count = 0;
            crash_tick();
            int64_t err = blk_write(blk_ep, c->no * (DBLOCK / SECTOR), c->data, bytes, &count);
            if (err == SVC_E_AGAIN)
                return 0;                       /* (it is busy writing: the rest next time) */
            if (err || count != bytes) {
                sync_failed = 1;
                return -EXT2_EIO;
            }
            c->dirty = 0;
            ndirty--;
            handed++;
        }
        if (!ndirty)
            dirty_since = 0;
        c->queued = 0;
        dq_head = dq_head + 1 < nblocks ? dq_head + 1 : 0;
        dq_len--;
    }
    return 0;
}

/* Hand every dirty block to the blk service (its cache takes them; its
 * sync puts them on the disk) as one transaction: the blk service, and
 * so the disk, gets the file system as it is between two changes, all
 * of it or nothing, never a part of a change. Runs of blocks next to
 * each other go BATCH at a time (one call for 64 KiB). 0 (handed over,
 * or the blk service busy: later), or -EXT2_EIO. When other clients hold
 * the blk service's transactions, the blocks go one by one. */
static int drain(void)
{
    for (int tries = 0; ndirty && tries < 2; tries++) {
        int64_t r = blk_txn_begin(blk_ep, ndirty);
        if (r == SVC_E_BUSY || r == SVC_E_LIMIT)
            return drain_each();
        if (r == SVC_E_AGAIN)
            return 0;                           /* (room being made: after the disk's next answer) */
        uint64_t run = 0, bytes = 0, count = 0;
        uint32_t n = 0;
        for (uint32_t k = 0; !r && k <= dq_len; k++) {
            struct cblock *c = k < dq_len ? &cache[dirtyq[(dq_head + k) % nblocks]] : NULL;
            if (c && !c->dirty)
                continue;
            if (n && (!c || c->no != run + n || n == BATCH)) {
                crash_tick();
                r = blk_txn_write(blk_ep, run * (DBLOCK / SECTOR), stage, bytes, &count);
                n = 0;
                bytes = 0;
            }
            if (c && !r) {
                run = n ? run : c->no;
                memcpy(stage + n * DBLOCK, c->data, block_bytes(c->no));
                bytes += block_bytes(c->no);
                n++;
            }
        }
        if (!r)
            r = blk_txn_commit(blk_ep, &(uint32_t){ 0 });
        if (r == SVC_E_NOENT)
            continue;                           /* (dropped: idle too long between our calls) */
        if (r)
            blk_txn_abort(blk_ep);
        if (r == SVC_E_AGAIN)
            return 0;                           /* (a block it replaces on its way to or from the
                                                 * disk: all of it again after the disk's answer) */
        if (r) {
            sync_failed = 1;
            return -EXT2_EIO;
        }
        all_handed();
    }
    if (ndirty)
        return drain_each();                    /* (dropped twice: as the blk service takes them) */
    all_handed();
    return 0;
}

static int drain_due(void)
{
    if (!ndirty || (ndirty < dirty_max() / 2 && svc_clock_ns() - dirty_since < WRITEBACK_NS))
        return 0;
    return drain();
}

/* A change is over: its blocks are the cache's (dirty), or it is
 * abandoned and the file system is as it was. */
static void op_finish(int keep)
{
    kept_changes += keep != 0;
    for (unsigned i = 0; i < pinned; i++) {
        struct cblock *c = &cache[pins[i]];
        if (keep) {
            uint8_t *old = c->data;
            c->data = c->op;
            c->op = old;
            if (!c->dirty) {
                c->dirty = 1;
                if (!ndirty++)
                    dirty_since = svc_clock_ns();
            }
            if (!c->queued) {
                c->queued = 1;
                dirtyq[(dq_head + dq_len++) % nblocks] = pins[i];
            }
        } else if (c->fresh) {
            unhash(c);                          /* (never read: nothing of it is known) */
        }
        op_copy_free(c->op);
        c->op = NULL;
        c->fresh = 0;
    }
    pinned = 0;
    if (!keep)
        fs = saved;
    in_op = 0;
}

/* ---------------------------------------------------------------- inodes and changes */

/* A file system error as a request's answer: E_AGAIN for a block not in
 * yet (the status), else Linux's errno in *fserr. */
static int64_t answer(int err, uint32_t *fserr)
{
    if (err == -EXT2_EAGAIN)
        return SVC_E_AGAIN;
    *fserr = err < 0 ? (uint32_t)-err : 0;
    return 0;
}

/* Inode ino (`orphan`: one with no name left, on the orphan list), in *in
 * until the next call. The last inode read outside a change is kept until
 * the next change is kept (kept_changes): a read() then decodes no inode
 * and copies none. */
static int inode_ref(uint32_t ino, int orphan, const struct ext2_inode **in)
{
    static struct ext2_inode last, got;
    static uint64_t last_at = UINT64_MAX;
    static uint8_t last_orphan;
    if (!in_op && last_at == kept_changes && last.ino == ino && last_orphan == orphan) {
        *in = &last;
        return 0;
    }
    int known = !orphan;
    for (unsigned i = 0; !known && i < ORPHANS; i++)
        known = orphans[i].ino == ino && ino;
    if (!known)
        return -EXT2_EUCLEAN;                   /* (an orphan is one this instance made: no other) */
    int err = orphan ? ext2_inode_orphan(&fs, ino, &got) : ext2_inode(&fs, ino, &got);
    *in = &got;
    if (!err && !in_op) {
        last = got;
        last_at = kept_changes;
        last_orphan = (uint8_t)orphan;
    }
    return err == -EXT2_ENOENT ? -EXT2_EUCLEAN : err;   /* (an entry naming a free inode) */
}

/* Inode ino (an orphan of this instance's if `orphan`), a copy of its
 * own in *in; the last one read is kept until the next change. */
static int inode_get(uint32_t ino, int orphan, struct ext2_inode *in)
{
    const struct ext2_inode *p;
    int err = inode_ref(ino, orphan, &p);
    if (!err)
        *in = *p;
    return err;
}

/* Files unlinked while open whose last opener went (`release`): off the
 * orphan list and freed, each a change of its own. */
static int release_orphans(void)
{
    for (unsigned i = 0; i < ORPHANS; i++) {
        while (orphans[i].gone) {
            if (ndirty + OP_MAX > dirty_max())
                return -EXT2_EAGAIN;            /* (the blk service is busy taking the last steps) */
            struct ext2_inode in;
            saved = fs;
            in_op = 1;
            int err = ext2_inode_orphan(&fs, orphans[i].ino, &in), last = 0;
            if (!err && in.size > RELEASE_STEP)        /* a large file goes a step at a time, still an orphan */
                err = ext2_truncate(&fs, &in, (in.size - 1) / RELEASE_STEP * RELEASE_STEP);
            else if (!err && (err = ext2_orphan_del(&fs, &in)) == 0)
                err = ext2_release(&fs, &in), last = 1;
            op_finish(err == 0);
            if (err == -EXT2_EAGAIN)
                return err;
            drain_due();
            if (err || last) {
                orphans[i].ino = 0;             /* (a failure: e2fsck finds what the list holds) */
                orphans[i].gone = 0;
            }
        }
    }
    return 0;
}

/* A free slot of the orphans, or ORPHANS when they are all taken. */
static unsigned orphan_slot(void)
{
    unsigned slot = 0;
    while (slot < ORPHANS && orphans[slot].ino)
        slot++;
    return slot;
}

/* After a change took a file's last name: free it at once when small and
 * not open; else (open, or large) put it on the orphan list (the change
 * at hand does), to be freed when released, a step at a time. *orphaned:
 * it went on the list. */
static int last_name_gone(struct ext2_inode *victim, int open, int *orphaned)
{
    *orphaned = open || victim->size > RELEASE_STEP;
    if (*orphaned && orphan_slot() == ORPHANS)
        return -EXT2_ENOSPC;                    /* (too many files unlinked while open: none changed) */
    return *orphaned ? ext2_orphan_add(&fs, victim) : ext2_release(&fs, victim);
}

/* A change put inode ino (0: none) on the orphan list: it takes slot
 * `slot`, freed when released (`open`), else from the next change on
 * (a large file). */
static void orphaned_in(unsigned slot, uint32_t ino, uint32_t open, uint32_t *orphaned)
{
    *orphaned = ino != 0;
    if (ino) {
        orphans[slot].ino = ino;
        orphans[slot].gone = !open;
    }
}

/* Begin a change of the disk: what earlier changes wrote handed on to
 * the blk service as it takes it, room for this one, the file system
 * kept to go back to. 0, -EXT2_EAGAIN, -EXT2_EROFS or -EXT2_EIO. */
static int op_begin(uint64_t now)
{
    if (!mounted || !fs.writable)
        return -EXT2_EROFS;
    if (!svc_may_call())
        return -EXT2_EAGAIN;                    /* (the register entry: the full path does it) */
    if (drain_due())
        return -EXT2_EIO;
    if (ndirty + OP_MAX > dirty_max())
        return -EXT2_EAGAIN;                    /* a writer faster than the disk waits for it */
    fs.now = (uint32_t)now;
    int err = release_orphans();
    if (err)
        return err;
    saved = fs;
    in_op = 1;
    return 0;
}

/* End it: kept (and handed on when due) when err is 0, else undone. */
static int op_end(int err)
{
    op_finish(err == 0);
    if (!err)
        drain_due();
    return err;
}

/* Hand everything to the blk service and have it put on the disk: 0,
 * -EXT2_EAGAIN while that goes on (*need says what the call waits for),
 * or -EXT2_EIO (once) if a write failed. */
static int sync_all(uint64_t *need)
{
    if (!mounted)
        return 0;
    if (!svc_may_call())
        return -EXT2_EAGAIN;
    for (;;) {
        if (drain())
            return -EXT2_EIO;
        if (!*need && ndirty)
            return -EXT2_EAGAIN;                /* (what was written before the call: handed on first) */
        if (!*need)
            *need = handed + 1;                 /* what this call waits for: the blocks handed on so far */
        if (synced + 1 >= *need) {
            int failed = sync_failed;
            sync_failed = 0;
            *need = 0;
            return failed ? -EXT2_EIO : 0;
        }
        if (!ticket) {
            int64_t r = blk_sync_start(blk_ep, &ticket);
            if (r) {
                ticket = 0;
                if (r == SVC_E_BUSY)
                    return -EXT2_EAGAIN;        /* (its syncs are all taken: they end soon) */
                *need = 0;
                return -EXT2_EIO;
            }
            ticket_at = handed;
        }
        int64_t r = blk_sync_poll(blk_ep, ticket);
        if (r == SVC_E_AGAIN)
            return -EXT2_EAGAIN;
        ticket = 0;
        if (r)
            sync_failed = 1;
        synced = ticket_at > synced ? ticket_at : synced;
    }
}

/* The disk, through the blk service: 0, or E_NOENT without one. */
static int64_t disk_ready(void)
{
    if (blk_ep)
        return 0;
    svc_handle ep = svc_service("blk");
    uint64_t sectors = 0;
    uint32_t block_size = 0, geometry = 0;
    if (!ep || blk_info((uint32_t)ep, &sectors, &block_size, &disk_flags, &geometry) != 0 || !sectors)
        return SVC_E_NOENT;
    if (!cache && cache_init())
        return SVC_E_NOMEM;
    disk_bytes = sectors * SECTOR;
    blk_ep = (uint32_t)ep;
    return 0;
}

/* Copy inodes out to the client's `attrs` buffer (as many as it holds). */
static int64_t put_attrs(struct svc_call *call, uint64_t attrs, uint64_t attrs_len, const struct ext2_inode *in,
                         unsigned n)
{
    uint64_t bytes = n * sizeof(*in) < attrs_len ? n * sizeof(*in) : attrs_len / sizeof(*in) * sizeof(*in);
    return bytes && svc_copy_out(call, attrs, in, bytes) ? SVC_E_FAULT : 0;
}

/* A change's answer: its error, or the inodes it touched into `attrs`. */
static int64_t done_with(struct svc_call *call, int err, uint32_t *fserr, uint64_t attrs, uint64_t attrs_len,
                         const struct ext2_inode *in, unsigned n)
{
    if (err)
        return answer(err, fserr);
    *fserr = 0;
    return put_attrs(call, attrs, attrs_len, in, n);
}

/* A name from the client: its bytes, 1 to EXT2_NAME_MAX of them. */
static int64_t get_name(struct svc_call *call, uint64_t at, uint64_t len, char *name)
{
    if (!len || len > EXT2_NAME_MAX)
        return SVC_E_INVAL;
    return svc_copy_in(call, name, at, len) ? SVC_E_FAULT : 0;
}

/* ---------------------------------------------------------------- mounting */

/* Make fs writable (the change that marks it so, on the disk). */
static int make_writable(uint64_t now)
{
    if (!svc_may_call())
        return -EXT2_EAGAIN;
    saved = fs;
    in_op = 1;
    fs.io.write = disk_write;
    fs.now = (uint32_t)now;
    int err = ext2_mount_rw(&fs);
    op_finish(err == 0);
    if (err == -EXT2_EAGAIN)
        return err;
    if (err) {
        svc_log("EXT2-fs (vda): not writable: %s (error %d)",
                err == -EXT2_EROFS ? "the image has features this file system does not write" :
                fs.why ? fs.why : "its orphan list could not be released", -err);
        return -EXT2_EROFS;
    }
    drain_due();
    return 0;
}

static int64_t mount(struct svc_call *call, uint32_t rw, uint64_t now, uint64_t attrs, uint64_t attrs_len,
                     uint32_t *fserr, uint32_t *writable, uint32_t *block_size, uint8_t *why, uint32_t *why_len)
{
    *why_len = 0;
    if (!svc_may_call())
        return SVC_E_AGAIN;
    int64_t r = disk_ready();
    if (r)
        return r;
    if (mounted) {
        *fserr = EXT2_EBUSY;
        return 0;
    }
    struct ext2_io io = { NULL, disk_read, NULL, disk_map };
    struct ext2_inode root;
    fs = (struct ext2_fs){ 0 };
    kept_changes++;
    int err = ext2_mount(&fs, &io);
    if (!err)
        err = ext2_inode(&fs, EXT2_ROOT_INO, &root);
    if (!err && (root.mode & EXT2_S_IFMT) != EXT2_S_IFDIR)
        err = -EXT2_EUCLEAN, fs.why = "the root inode is not a directory";
    if (err && err != -EXT2_EAGAIN && fs.why) {
        *why_len = (uint32_t)strlen(fs.why) < 120 ? (uint32_t)strlen(fs.why) : 120;
        memcpy(why, fs.why, *why_len);
    }
    mounted = !err;
    owner = call->pid;
    if (!err && rw && !(disk_flags & 1)) {
        err = make_writable(now);
        if (err == -EXT2_EROFS)
            err = 0;                            /* (read-only: `writable` says so) */
    }
    if (err) {
        mounted = 0;
        fs = (struct ext2_fs){ 0 };
        kept_changes++;
        return answer(err, fserr);
    }
    *writable = (uint32_t)fs.writable;
    *block_size = fs.block_size;
    *fserr = 0;
    return put_attrs(call, attrs, attrs_len, &root, 1);
}

static int64_t set_writable(struct svc_call *call, uint64_t now, uint32_t *fserr)
{
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    if (fs.writable) {
        *fserr = 0;
        return 0;
    }
    if (disk_flags & 1) {
        *fserr = EXT2_EROFS;
        return 0;
    }
    return answer(make_writable(now), fserr);
}

static int64_t set_readonly(struct svc_call *call, uint64_t now, uint32_t *fserr)
{
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    if (fs.writable) {
        int err = op_begin(now);
        if (!err)
            err = op_end(ext2_unmount(&fs));
        if (err)
            return answer(err, fserr);
    }
    int err = sync_all(&put_need);
    if (err != -EXT2_EAGAIN)
        put_need = 0;
    return answer(err, fserr);
}

static int64_t unmount(struct svc_call *call)
{
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    for (uint32_t i = 0; i < nblocks; i++)    /* (dirty only if the disk failed: lost, as on Linux) */
        cache[i].valid = cache[i].dirty = cache[i].queued = cache[i].used = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
        heads[i] = -1;
    dq_len = ndirty = 0;
    dirty_since = 0;
    memset(orphans, 0, sizeof(orphans));
    fs = (struct ext2_fs){ 0 };
    kept_changes++;
    mounted = 0;
    put_need = 0;
    return 0;
}

/* ---------------------------------------------------------------- reading */

static int64_t getattr(struct svc_call *call, uint32_t ino, uint32_t orphan, uint64_t attrs, uint64_t attrs_len,
                       uint32_t *fserr)
{
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    struct ext2_inode in;
    int err = inode_get(ino, orphan != 0, &in);
    if (err)
        return answer(err, fserr);
    *fserr = 0;
    return put_attrs(call, attrs, attrs_len, &in, 1);
}

static int64_t readdir(struct svc_call *call, uint32_t dir, uint64_t pos, uint64_t buf, uint64_t buf_len,
                       uint32_t *fserr, uint32_t *count, uint64_t *bytes, uint64_t *next, uint32_t *done)
{
    uint8_t *out = dirents;
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    struct ext2_inode din;
    int e = inode_get(dir, 0, &din);
    if (!e && (din.mode & EXT2_S_IFMT) != EXT2_S_IFDIR)
        e = -EXT2_ENOTDIR;
    uint64_t room = buf_len < DIRENT_BATCH ? buf_len : DIRENT_BATCH, used = 0, at = pos;
    uint32_t n = 0, ino, len;
    uint8_t type;
    char name[EXT2_NAME_MAX];
    *done = 0;
    while (!e) {
        uint64_t before = at;
        if ((e = ext2_readdir(&fs, &din, &at, &ino, &type, name, &len)) != 1) {
            *done = e == 0;
            if (e == -EXT2_EAGAIN)
                at = before;
            break;
        }
        e = 0;
        if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
            continue;
        uint64_t reclen = (sizeof(struct ext2fs_dirent) + len + 7) & ~7ull;
        if (used + reclen > room) {
            at = before;
            if (!n)
                return SVC_E_INVAL;             /* (not even one record fits) */
            break;
        }
        struct ext2_inode in;
        e = ext2_inode(&fs, ino, &in);
        if (e == -EXT2_EAGAIN || e == -ENOMEM_) {
            at = before;
            break;
        }
        uint32_t kind = in.mode & EXT2_S_IFMT;
        int bad = e || !kind || (type && type != ext2_file_type(in.mode));
        if (bad) {
            /* A corrupt inode (or one the entry's type belies): listed by
             * its name, as Linux lists it; the client answers EUCLEAN
             * when it is reached. */
            static const uint16_t kinds[8] = { EXT2_S_IFREG, EXT2_S_IFREG, EXT2_S_IFDIR, EXT2_S_IFCHR, EXT2_S_IFBLK,
                                               EXT2_S_IFIFO, EXT2_S_IFSOCK, EXT2_S_IFLNK };
            in = (struct ext2_inode){ .ino = ino, .mode = kinds[type < 8 ? type : 0], .links = 1 };
        }
        e = 0;
        struct ext2fs_dirent *r = (struct ext2fs_dirent *)(out + used);
        memset(r, 0, reclen);
        r->pos = at;
        r->in = in;
        r->reclen = (uint16_t)reclen;
        r->type = type;
        r->len = (uint8_t)len;
        r->bad = (uint8_t)bad;
        memcpy(r->name, name, len);
        used += reclen;
        n++;
    }
    if (e == -EXT2_EAGAIN || e == -ENOMEM_) {
        if (!n)
            return e == -EXT2_EAGAIN ? SVC_E_AGAIN : answer(e, fserr);
        e = 0;                                  /* (what was read: the rest from `next`) */
    }
    if (e < 0)
        return answer(e, fserr);
    if (used && svc_copy_out(call, buf, out, used))
        return SVC_E_FAULT;
    *fserr = 0;
    *count = n;
    *bytes = used;
    *next = at;
    return 0;
}

static int64_t readlink(struct svc_call *call, uint32_t ino, uint64_t buf, uint64_t buf_len, uint32_t *fserr,
                        uint64_t *count)
{
    char *target = (char *)path;
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    struct ext2_inode in;
    uint32_t got = 0;
    int e = inode_get(ino, 0, &in);
    if (!e && (in.mode & EXT2_S_IFMT) != EXT2_S_IFLNK)
        e = -EXT2_EINVAL;
    if (!e && (in.size == 0 || in.size > PATH_BYTES))
        e = -EXT2_EUCLEAN;
    if (!e)
        e = ext2_readlink(&fs, &in, target, (uint32_t)in.size, &got);
    if (e)
        return answer(e, fserr);
    uint64_t n = got < buf_len ? got : buf_len;
    if (n && svc_copy_out(call, buf, target, n))
        return SVC_E_FAULT;
    *fserr = 0;
    *count = n;
    return 0;
}

/* Copy bytes [at, at + len) of the disk, or zeros (a hole: hole), to the
 * client at buf, a cache block at a time: 0 (*moved: all of it, or fewer
 * where buf faulted: then -EFAULT_) or the file system's error. */
static int copy_out(struct svc_call *call, uint64_t at, int hole, uint64_t buf, uint64_t len, uint64_t *moved)
{
    static const uint8_t zeros[1024];
    *moved = 0;
    if (!hole && (at > disk_bytes || len > disk_bytes - at))
        return -EXT2_EIO;
    while (*moved < len) {
        const uint8_t *src = zeros;
        uint64_t k = len - *moved < sizeof(zeros) ? len - *moved : sizeof(zeros);
        if (!hole) {
            struct cblock *cb;
            uint64_t d = at + *moved;
            int err = block(d / DBLOCK, 0, &cb);
            if (err)
                return err;
            src = cb->data + d % DBLOCK;
            k = DBLOCK - d % DBLOCK < len - *moved ? DBLOCK - d % DBLOCK : len - *moved;
        }
        if (svc_copy_out(call, buf + *moved, src, k))
            return -EFAULT_;
        *moved += k;
    }
    return 0;
}

/* A long read straight from the blk service's cache into the client's
 * buffer (lent on: svc_client_buffer, where the placement lends a lent
 * buffer): the whole file system blocks from `at` (one of them) on,
 * DIRECT_MAX bytes at most, while they lie one after another on the disk
 * and no disk block of them is cached here (a block changed here and not
 * yet handed to blk is read through the cache). One call to blk, each
 * byte copied once, the read-ahead window moved on as block() would. 0
 * (*moved), 1 when it does not apply (the caller goes through the cache),
 * or -EXT2_EAGAIN while blk fetches them. */
#define DIRECT_MIN      (64u * 1024)    /* a read of at least this much left goes straight ... */
#define DIRECT_MAX      (64u * 1024)    /* ... this much at a time (blk's largest read) */
_Static_assert(DIRECT_MAX <= BATCH * DBLOCK, "a direct read fits in stage");
static int read_direct(struct svc_call *call, const struct ext2_inode *in, uint64_t at, uint64_t end, uint64_t buf,
                       uint64_t *moved)
{
    uint32_t bs = fs.block_size, first = 0;
    uint64_t want = end - at < DIRECT_MAX ? end - at : DIRECT_MAX, bytes = 0;
    want -= want % bs;
    if (at % bs || want < bs || !svc_may_call())
        return 1;
    while (bytes < want) {
        uint32_t pb = 0;
        if (ext2_bmap(&fs, in, (at + bytes) / bs, &pb) || !pb || (bytes && pb != first + bytes / bs))
            break;                              /* (a hole, an indirect block not in, or not next on the disk) */
        uint64_t d = (uint64_t)pb * bs / DBLOCK, dend = ((uint64_t)pb * bs + bs - 1) / DBLOCK;
        while (d <= dend && !lookup(d))
            d++;
        if (d <= dend)
            break;                              /* (a block of it cached here: the cache's way) */
        if (!bytes)
            first = pb;
        bytes += bs;
    }
    if (!bytes)
        return 1;
    /* A buffer the client lent of its own client's is not lent on in
     * user space (lends do not chain): there blk's blocks come into
     * `stage` by the one call, then go on by one copy. */
    uint64_t lent = svc_client_buffer(call, buf, bytes, 1), count = 0;
    void *into = lent ? (void *)(uintptr_t)lent : stage;
    uint64_t d0 = (uint64_t)first * bs / DBLOCK, d1 = ((uint64_t)first * bs + bytes - 1) / DBLOCK;
    int64_t err = blk_read(blk_ep, (uint64_t)first * (bs / SECTOR), into, bytes, &count);
    read_ahead(d0, err == SVC_E_AGAIN);
    if (d1 != d0)
        read_ahead(d1, 0);
    if (err == SVC_E_AGAIN)
        return -EXT2_EAGAIN;
    if (err || count != bytes || (!lent && svc_copy_out(call, buf, stage, bytes)))
        return 1;                               /* (a fault in the client's memory, a disk error: */
    *moved = bytes;                             /* the cache's way tells them apart) */
    return 0;
}

static int64_t read(struct svc_call *call, uint32_t ino, uint32_t orphan, uint64_t off, uint64_t buf,
                    uint64_t buf_len, uint32_t *fserr, uint64_t *count, uint32_t *more, uint64_t *size)
{
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    const struct ext2_inode *in;                /* (nothing below reads another inode) */
    int err = inode_ref(ino, orphan != 0, &in);
    if (!err && (in->mode & EXT2_S_IFMT) != EXT2_S_IFREG)
        err = -EXT2_EINVAL;                     /* (a directory's or a link's blocks are not its bytes) */
    if (err)
        return answer(err, fserr);
    uint64_t end = off >= in->size ? off : buf_len < in->size - off ? off + buf_len : in->size, done = 0;
    while (off + done < end) {
        /* Straight from the cache's blocks: the file system maps each of its blocks. */
        uint64_t at = off + done, moved = 0;
        if (end - at >= DIRECT_MIN && (err = read_direct(call, in, at, end, buf + done, &moved)) <= 0) {
            done += moved;
            if (err)
                break;
            continue;
        }
        err = 0;
        uint32_t from = (uint32_t)(at % fs.block_size), pb = 0;
        uint64_t k = fs.block_size - from < end - at ? fs.block_size - from : end - at;
        if ((err = ext2_bmap(&fs, in, at / fs.block_size, &pb)) == 0)
            err = copy_out(call, (uint64_t)pb * fs.block_size + from, pb == 0, buf + done, k, &moved);
        done += moved;
        if (err)
            break;
    }
    *more = 0;
    if (err == -EXT2_EAGAIN) {
        if (!done)
            return SVC_E_AGAIN;
        *more = 1;                              /* (the rest once it is in) */
        err = 0;
    }
    if (done && err == -EFAULT_)
        err = 0;                                /* (a short read, as Linux's) */
    *fserr = err < 0 ? (uint32_t)-err : 0;
    *count = done;
    *size = in->size;
    return 0;
}

#define PREFETCH_FILE_MAX   (2u << 20)      /* bytes of a file one prefetch covers at most */
static int64_t prefetch_h(struct svc_call *call, uint32_t ino, uint64_t off, uint64_t len, uint32_t *fserr)
{
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    if (!svc_may_call())
        return SVC_E_AGAIN;
    struct ext2_inode in;
    int e = inode_get(ino, 0, &in);
    *fserr = 0;
    if (e)
        return answer(e, fserr);
    if ((in.mode & EXT2_S_IFMT) != EXT2_S_IFREG || off >= in.size || len == 0)
        return 0;
    if (len > in.size - off)
        len = in.size - off;
    if (len > PREFETCH_FILE_MAX)
        return 0;
    /* Each run of the blocks not cached here (BATCH at most) read from
     * blk at once: one request to the disk for what it lacks, and its
     * answer says whether all of them are in. One not in yet is waited
     * for. */
    int missing = 0;
    uint64_t last = UINT64_MAX, run = 0, runs = 0;
    uint64_t lb_end = (off + len - 1) / fs.block_size;
    for (uint64_t lb = off / fs.block_size; lb <= lb_end + 1; lb++) {
        uint64_t no = 0;
        if (lb <= lb_end) {
            uint32_t pb = 0;
            e = ext2_bmap(&fs, &in, lb, &pb);
            if (e == -EXT2_EAGAIN) {
                missing = 1;                    /* (an indirect block first) */
                continue;
            }
            if (e)
                return answer(e, fserr);
            no = (uint64_t)pb * fs.block_size / DBLOCK;
            if (!pb || no == last || lookup(no))
                continue;
            last = no;
            if (runs && runs < BATCH && no == run + runs) {
                runs++;
                continue;
            }
        }
        if (runs) {
            uint64_t bytes = 0, count = 0;
            for (uint64_t k = 0; k < runs; k++)
                bytes += block_bytes(run + k);
            int64_t r = blk_read(blk_ep, run * (DBLOCK / SECTOR), stage, bytes, &count);
            if (r == SVC_E_AGAIN)
                missing = 1;
            else if (r || count != bytes)
                return answer(-EXT2_EIO, fserr);
        }
        run = no;
        runs = lb <= lb_end;
    }
    return missing ? SVC_E_AGAIN : 0;
}

static int64_t statfs(struct svc_call *call, uint64_t *blocks, uint64_t *bfree, uint64_t *bavail, uint64_t *files,
                      uint64_t *ffree, uint64_t *fsid)
{
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    struct ext2_statfs st;
    ext2_statfs(&fs, &st);
    *blocks = st.blocks;
    *bfree = st.bfree;
    *bavail = st.bavail;
    *files = st.files;
    *ffree = st.ffree;
    *fsid = st.fsid;
    return 0;
}

/* ---------------------------------------------------------------- changes */

static int64_t write(struct svc_call *call, uint32_t ino, uint32_t orphan, uint64_t off, uint32_t append, uint64_t now,
                     uint64_t data, uint64_t data_len, uint64_t attrs, uint64_t attrs_len, uint32_t *fserr,
                     uint64_t *count, uint32_t *more)
{
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    struct ext2_inode in = { 0 }, kept = { 0 };
    uint64_t len = data_len < WRITE_MAX ? data_len : WRITE_MAX, done = 0;
    int err = 0;
    while (done < len) {
        uint32_t k = len - done < CHUNK ? (uint32_t)(len - done) : CHUNK, put = 0;
        if (svc_copy_in(call, bounce, data + done, k)) {
            err = -EFAULT_;
            break;
        }
        if ((err = op_begin(now)) != 0)
            break;
        int e = inode_get(ino, orphan != 0, &in);
        if (!e)
            e = ext2_write(&fs, &in, append ? in.size : off + done, bounce, k, &put);
        if ((err = op_end(e)) != 0)
            break;
        kept = in;
        done += put;
        if (put < k)
            break;                              /* the disk is full (or the file at its largest) */
    }
    *more = 0;
    if (err == -EXT2_EAGAIN) {
        if (!done)
            return SVC_E_AGAIN;
        *more = 1;
    }
    *fserr = done || err >= 0 ? 0 : (uint32_t)-err;
    *count = done;
    return done ? put_attrs(call, attrs, attrs_len, &kept, 1) : 0;
}

static int64_t create(struct svc_call *call, uint32_t dir, uint32_t mode, uint32_t rdev, uint64_t now, uint64_t name,
                      uint64_t name_len, uint64_t target, uint64_t target_len, uint64_t attrs, uint64_t attrs_len,
                      uint32_t *fserr)
{
    char *to = (char *)path;
    char nm[EXT2_NAME_MAX];
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    int64_t r = get_name(call, name, name_len, nm);
    if (r)
        return r;
    if (target_len > PATH_BYTES)
        return SVC_E_INVAL;
    if (target_len && svc_copy_in(call, to, target, target_len))
        return SVC_E_FAULT;
    struct ext2_inode din, in[2];
    int e = op_begin(now);
    if (!e) {
        e = inode_get(dir, 0, &din);
        if (!e)
            e = target_len ? ext2_symlink(&fs, &din, nm, (uint32_t)name_len, to, (uint32_t)target_len, 0, 0, &in[0])
                           : ext2_create(&fs, &din, nm, (uint32_t)name_len, mode, 0, 0, rdev, &in[0]);
        if (!e)
            e = inode_get(dir, 0, &in[1]);
        e = op_end(e);
    }
    return done_with(call, e, fserr, attrs, attrs_len, in, 2);
}

static int64_t unlink(struct svc_call *call, uint32_t dir, uint32_t rmdir, uint32_t open, uint64_t now, uint64_t name,
                      uint64_t name_len, uint64_t attrs, uint64_t attrs_len, uint32_t *fserr, uint32_t *orphaned)
{
    char nm[EXT2_NAME_MAX];
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    int64_t r = get_name(call, name, name_len, nm);
    if (r)
        return r;
    unsigned slot = orphan_slot();
    int orph = 0;
    *orphaned = 0;
    struct ext2_inode in[2] = { 0 };            /* the directory, the inode that lost the name */
    int e = op_begin(now);
    if (!e) {
        e = inode_get(dir, 0, &in[0]);
        if (!e && rmdir) {
            e = ext2_rmdir(&fs, &in[0], nm, (uint32_t)name_len);
        } else if (!e) {
            e = ext2_unlink(&fs, &in[0], nm, (uint32_t)name_len, &in[1]);
            if (!e && !in[1].links)
                e = last_name_gone(&in[1], open != 0, &orph);
        }
        if (!e)
            e = inode_get(dir, 0, &in[0]);
        e = op_end(e);
    }
    if (!e)
        orphaned_in(slot, orph ? in[1].ino : 0, open, orphaned);
    return done_with(call, e, fserr, attrs, attrs_len, in, 2);
}

static int64_t rename(struct svc_call *call, uint32_t odir, uint32_t ndir, uint32_t moved, uint32_t open, uint64_t now,
                      uint64_t from, uint64_t from_len, uint64_t to, uint64_t to_len, uint64_t attrs,
                      uint64_t attrs_len, uint32_t *fserr, uint32_t *orphaned)
{
    char on[EXT2_NAME_MAX], nn[EXT2_NAME_MAX];
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    int64_t r = get_name(call, from, from_len, on);
    if (!r)
        r = get_name(call, to, to_len, nn);
    if (r)
        return r;
    unsigned slot = orphan_slot();
    int orph = 0, same = odir == ndir;
    *orphaned = 0;
    struct ext2_inode in[4] = { 0 };            /* the old directory, the new, the moved, the replaced */
    int e = op_begin(now);
    if (!e) {
        e = inode_get(odir, 0, &in[0]);
        if (!e && !same)
            e = inode_get(ndir, 0, &in[1]);
        if (!e)
            e = ext2_rename(&fs, &in[0], on, (uint32_t)from_len, same ? &in[0] : &in[1], nn, (uint32_t)to_len, &in[3]);
        if (!e && in[3].ino && !in[3].links)
            e = (in[3].mode & EXT2_S_IFMT) == EXT2_S_IFDIR ? ext2_release(&fs, &in[3]) :
                last_name_gone(&in[3], open != 0, &orph);
        if (!e)
            e = inode_get(odir, 0, &in[0]);
        if (!e)
            e = inode_get(ndir, 0, &in[1]);
        if (!e)
            e = inode_get(moved, 0, &in[2]);
        e = op_end(e);
    }
    if (!e)
        orphaned_in(slot, orph ? in[3].ino : 0, open, orphaned);
    return done_with(call, e, fserr, attrs, attrs_len, in, 4);
}

static int64_t link(struct svc_call *call, uint32_t ino, uint32_t dir, uint64_t now, uint64_t name, uint64_t name_len,
                    uint64_t attrs, uint64_t attrs_len, uint32_t *fserr)
{
    char nm[EXT2_NAME_MAX];
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    int64_t r = get_name(call, name, name_len, nm);
    if (r)
        return r;
    struct ext2_inode in[2];                    /* the directory, the inode */
    int e = op_begin(now);
    if (!e) {
        e = inode_get(dir, 0, &in[0]);
        if (!e)
            e = inode_get(ino, 0, &in[1]);
        if (!e)
            e = ext2_link(&fs, &in[0], nm, (uint32_t)name_len, &in[1]);
        if (!e)
            e = inode_get(dir, 0, &in[0]);
        e = op_end(e);
    }
    return done_with(call, e, fserr, attrs, attrs_len, in, 2);
}

#define IMMUTABLE_OR_APPEND 0x30u               /* chattr +i, +a: their attributes stay (Linux's EPERM) */

static int64_t setattr(struct svc_call *call, uint32_t ino, uint32_t what, uint32_t mode, uint32_t uid, uint32_t gid,
                       uint64_t atime, uint64_t mtime, uint64_t now, uint64_t attrs, uint64_t attrs_len,
                       uint32_t *fserr)
{
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    struct ext2_inode in;
    int e = op_begin(now);
    if (!e) {
        e = inode_get(ino, 0, &in);
        if (!e && (in.flags & IMMUTABLE_OR_APPEND))
            e = -EXT2_EPERM;
        if (!e) {
            if (what & 1)
                in.mode = (uint16_t)((in.mode & EXT2_S_IFMT) | (mode & 07777));
            if (what & 2)
                in.uid = uid;
            if (what & 4)
                in.gid = gid;
            if (what & 8)
                in.atime = (uint32_t)atime;
            if (what & 16)
                in.mtime = (uint32_t)mtime;
            in.ctime = fs.now;
            e = ext2_inode_write(&fs, &in);
        }
        e = op_end(e);
    }
    return done_with(call, e, fserr, attrs, attrs_len, &in, 1);
}

static int64_t truncate(struct svc_call *call, uint32_t ino, uint64_t size, uint64_t now, uint64_t attrs,
                        uint64_t attrs_len, uint32_t *fserr)
{
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    struct ext2_inode in;
    for (;;) {                                  /* a step at a time (a wait in between: on from there) */
        int e = op_begin(now);
        uint64_t to = size;
        if (!e) {
            e = inode_get(ino, 0, &in);
            if (!e && in.size > size && in.size - size > RELEASE_STEP)
                to = (in.size - 1) / RELEASE_STEP * RELEASE_STEP > size ? (in.size - 1) / RELEASE_STEP * RELEASE_STEP
                                                                        : size;
            if (!e)
                e = ext2_truncate(&fs, &in, to);
            e = op_end(e);
        }
        if (e)
            return answer(e, fserr);
        if (to == size)
            break;
    }
    *fserr = 0;
    return put_attrs(call, attrs, attrs_len, &in, 1);
}

static int64_t release(struct svc_call *call, uint32_t ino)
{
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    for (unsigned i = 0; i < ORPHANS; i++)
        if (orphans[i].ino == ino)
            orphans[i].gone = 1;
    return 0;
}

static int64_t sync(struct svc_call *call, uint64_t need, uint32_t *fserr, uint64_t *need_out)
{
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    if (need == UINT64_MAX)
        need = 0;                               /* (asked again, not begun yet) */
    if (need > handed + 1)
        need = handed + 1;                      /* (never more than was handed over: it would never end) */
    int e = sync_all(&need);
    *need_out = e == -EXT2_EAGAIN ? (need ? need : UINT64_MAX) : 0;
    *fserr = e == -EXT2_EAGAIN || e >= 0 ? 0 : (uint32_t)-e;
    return 0;
}

static int64_t writeback(struct svc_call *call, uint32_t *fserr, uint64_t *due)
{
    if (!mounted)
        return SVC_E_STATE;
    if (call->pid != owner)
        return SVC_E_PERM;                      /* (one client: the one that mounted it) */
    *fserr = svc_may_call() && drain_due() ? EXT2_EIO : 0;
    *due = ndirty ? dirty_since + WRITEBACK_NS : 0;
    return 0;
}

static int64_t crash(struct svc_call *call, uint32_t after)
{
    (void)call;
    if (!after)
        return svc_crash_for_testing();         /* (in the kernel: E_PERM, nothing faults) */
    crash_after = after;
    return 0;
}

/* The handlers: the generated skeleton (ext2fs_service, ext2fs_fast) calls them. */
const struct ext2fs_ops ext2fs_ops = {
    mount, set_writable, set_readonly, unmount, getattr, readdir, readlink, read, write, create, unlink, rename,
    link, setattr, truncate, release, sync, writeback, statfs, prefetch_h, crash,
};
