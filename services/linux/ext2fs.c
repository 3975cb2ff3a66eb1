/*
 * The machine's disk, driven by the block device service (`blk`,
 * services/blk, idl/blk.toml), with its ext2 file system (lib/ext2.c,
 * lib/ext2_write.c) mounted in the personality's tree (at /data in the
 * default systems) when the system description lets the personality
 * call `blk` and the machine has a disk.
 *
 * The disk's files live in the same node table as the root's
 * (rootfs.c): a node of LX_FS_DATA mirrors an inode (its number, mode,
 * links, owner, size, times and blocks), and a directory's entries are
 * read into the table, all of them, when a lookup or a listing first
 * needs them. Contents stay on the disk: read() goes to the file system
 * each time, through a cache here (an eighth of the personality's memory
 * limit, in blocks of 4 KiB found by a hash, taken back by a clock) and
 * the blk service's.
 *
 * The personality never waits for the disk. A call that needs a block
 * the cache lacks gets -EXT2_EAGAIN from the file system, having changed
 * nothing; it answers LX_DISKWAIT, which the dispatcher turns into a
 * wait (LX_BLK_DISK) that the blk service's `watch` ends when the disk
 * finishes a request: then every such call runs again from its `svc`.
 * A read that had moved bytes answers their count instead. As Linux's
 * waits for a disk, these do not end for a signal.
 *
 * The disk is /dev/vda; lx_data_mount mounts it on a directory (mount(2),
 * mount.c; lxrun's mount=DIR at boot), read-write unless the disk or the
 * image allows only reading (EROFS of every change: lx_data_writable,
 * op_begin), and lx_data_umount puts it away (marked clean, everything
 * on the disk) and forgets its nodes. An image the file system refuses
 * is not mounted, with the reason on the console.
 *
 * A change writes into copies of its blocks, kept whole or dropped with
 * the saved struct ext2_fs (op_begin, op_end), then handed to the blk
 * service (drain); fsync and its kin wait for blk's sync (sync_all).
 */
#include "lx.h"
#include "blk_if.h"
#include "ext2.h"

#define DBLOCK          4096u           /* the unit of the cache here and in the blk service */
#define CACHE_MIN       256u            /* blocks: 1 MiB, ... */
#define CACHE_MAX       16384u          /* ... to 64 MiB; an eighth of the personality's memory limit */
#define READ_AHEAD      16u             /* blocks fetched after a block neither cache has ... */
#define READ_AHEAD_MAX  256u            /* ... growing to this (1 MiB) while reads go on in order */
#define SLAB            16u             /* cache blocks given memory at once (64 KiB) */
#define BATCH           16u             /* blocks read from blk by one call when reads go on in order */
#define WRITEBACK_NS    (5000000000ull) /* a dirty block goes to the blk service within about this
                                         * (Linux's dirty_writeback_centisecs), or when half of
                                         * dirty_max() is dirty, or at a sync */
#define WRITEBACK_RETRY_NS 100000000ull  /* ... and again after this when the blk service did not take them */
#define OP_MAX          128u            /* blocks one change may write (a write goes CHUNK at a time) */
#define TXN_BLOCKS      256u            /* dirty blocks at most: what one blk transaction surely holds
                                         * (a quarter of its smallest cache), so that every change
                                         * made is handed over whole, with all the others */
#define CHUNK           32768u
#define SECTOR          512u
#define EXT2_MAGIC      0xef53
#define ORPHANS         64u
#define RELEASE_STEP    (16u << 20)     /* a file is cut or freed this much at a change, so that a
                                         * change writes a few bitmaps and reads a few indirect blocks */

static uint32_t blk_ep;                 /* the blk service (0: none) */
static uint64_t disk_bytes;
static uint32_t disk_flags;             /* blk's `info` flags: 1 read-only */

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
static uint8_t *stage;                  /* BATCH blocks read from blk at once, then put in the cache */
static int32_t pins[OP_MAX];            /* the blocks with an op copy */
static uint8_t *spare[OP_MAX];          /* op copies kept for the next changes (each svc_alloc maps
                                         * memory of its own in user space: costly) */
static unsigned spares;
static uint64_t kept_changes;           /* changes kept so far (and mounts) */
/* The nodes that mirror inodes, by inode number: chains through
 * lx_node.ino_next, so that a change finds its inode's nodes at once. */
#define INO_BUCKETS     1024u
static int32_t ino_heads[INO_BUCKETS];
static uint64_t dirty_since;            /* when the oldest dirty block became dirty (none dirty: 0) */
static int writeback_later;             /* the timer's handler could not hand them on (the kernel's) */
static unsigned pinned;
static uint64_t handed, synced;         /* blocks handed to blk so far; of them, synced to the disk */
static uint64_t ticket, ticket_at;      /* a blk sync under way (0: none), and `handed` when it began */
static int sync_failed;                 /* a write or sync of blk failed: the next fsync says EIO */
static struct ext2_fs fs, saved;        /* the file system, and as it was when the change began */
static int in_op;
static int32_t mnt_root = -1;           /* the mount's root directory (-1: not mounted) */
static int32_t covered = -1;            /* the directory it hides */
static uint64_t mnt_flags;              /* LX_MS_* it was mounted with (LX_MS_KEPT of them) */
static struct { uint32_t ino; uint8_t gone; } orphans[ORPHANS];   /* unlinked while open */

/* ---------------------------------------------------------------- the disk */

static uint64_t disk_blocks(void) { return (disk_bytes + DBLOCK - 1) / DBLOCK; }
static uint64_t block_bytes(uint64_t no) { return disk_bytes - no * DBLOCK < DBLOCK ? disk_bytes - no * DBLOCK : DBLOCK; }

/* The cache's tables, sized from the personality's memory limit: 0 or -LX_ENOMEM. */
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
    if (!cache || !heads || !dirtyq || !stage)
        return -LX_ENOMEM;
    for (uint32_t i = 0; i < nbuckets; i++)
        heads[i] = -1;
    for (uint32_t i = 0; i < INO_BUCKETS; i++)
        ino_heads[i] = -1;
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
 * slab), made at once as the cache first reaches them: 0 or -LX_ENOMEM. */
static int slab(uint32_t i)
{
    uint32_t first = i / SLAB * SLAB;
    uint8_t *mem = svc_alloc(SLAB * DBLOCK);
    if (!mem)
        return -LX_ENOMEM;
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
 * fetches it, -EXT2_EIO, or -LX_ENOMEM when the cache is all dirty. With
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
        return -LX_ENOMEM;
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
                return -LX_ENOMEM;              /* (more than one change may write: the caller splits) */
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
 * became dirty, as it takes them: 0, or -LX_EIO. What the blk service
 * holds may then be part of a change for a while (see drain). */
static int drain_each(void)
{
    while (dq_len) {
        struct cblock *c = &cache[dirtyq[dq_head]];
        if (c->dirty) {
            uint64_t bytes = block_bytes(c->no), count = 0;
            int64_t err = blk_write(blk_ep, c->no * (DBLOCK / SECTOR), c->data, bytes, &count);
            if (err == SVC_E_AGAIN)
                return 0;                       /* (it is busy writing: the rest next time) */
            if (err || count != bytes) {
                sync_failed = 1;
                return -LX_EIO;
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
 * or the blk service busy: later), or -LX_EIO. When other clients hold
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
            r = blk_txn_commit(blk_ep);
        if (r == SVC_E_NOENT)
            continue;                           /* (dropped: idle too long between our calls) */
        if (r)
            blk_txn_abort(blk_ep);
        if (r == SVC_E_AGAIN)
            return 0;                           /* (a block it replaces on its way to or from the
                                                 * disk: all of it again after the disk's answer) */
        if (r) {
            sync_failed = 1;
            return -LX_EIO;
        }
        all_handed();
    }
    if (ndirty)
        return drain_each();                    /* (dropped twice: as the blk service takes them) */
    all_handed();
    return 0;
}

/* Hand the dirty blocks on when they are due: half of dirty_max()
 * dirty, or the oldest dirty for WRITEBACK_NS. So a block changed again
 * and again (an inode table's, a bitmap's, a directory's) goes once. */
static int drain_due(void)
{
    if (!ndirty || (ndirty < dirty_max() / 2 && svc_clock_ns() - dirty_since < WRITEBACK_NS))
        return 0;
    writeback_later = 0;
    return drain();
}

uint64_t lx_data_writeback_at(void)
{
    return ndirty && !writeback_later ? dirty_since + WRITEBACK_NS : 0;
}

void lx_data_timer(uint64_t now)
{
    if (!ndirty || now - dirty_since < WRITEBACK_NS)
        return;
    if (!svc_may_call()) {
        writeback_later = 1;                    /* (the kernel's may not: the next call on the disk does) */
        return;
    }
    drain();                                    /* (user space: the handler may call the blk service) */
    if (ndirty)
        dirty_since = now + WRITEBACK_RETRY_NS - WRITEBACK_NS;     /* (blk busy, or failing: again soon) */
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
                if (!ndirty++) {
                    dirty_since = svc_clock_ns();
                    lx_timer_note(dirty_since + WRITEBACK_NS);
                }
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

/* A file system error as the call's answer: LX_DISKWAIT for a block not
 * in yet, else Linux's errno (the file system's are Linux's). */
static int64_t answer(int err)
{
    return err == -EXT2_EAGAIN ? LX_DISKWAIT : err;
}

/* The disk finished a request (the blk service's `watch`): the calls
 * waiting for one run again. */
void lx_data_changed(void)
{
    if (blk_ep)
        lx_wake_all(LX_BLK_DISK, 0);
}

/* ---------------------------------------------------------------- nodes */

static struct lx_time at_sec(uint32_t s) { return (struct lx_time){ (int64_t)s, 0 }; }

static int32_t *ino_chain(uint32_t ino)
{
    return &ino_heads[ino % INO_BUCKETS];
}

static void ino_unindex(int32_t n)
{
    struct lx_node *x = lx_node(n);
    if (!x->indexed)
        return;
    int32_t *at = ino_chain(x->ino);
    while (*at >= 0 && *at != n)
        at = &lx_node(*at)->ino_next;
    if (*at == n)
        *at = x->ino_next;
    x->indexed = 0;
}

/* Node n now mirrors inode `in`. */
static void mirror(int32_t n, const struct ext2_inode *in)
{
    struct lx_node *x = lx_node(n);
    if (!x->indexed || x->ino != in->ino) {
        ino_unindex(n);
        int32_t *head = ino_chain(in->ino);
        x->ino_next = *head;
        *head = n;
        x->indexed = 1;
    }
    x->mode = in->mode;
    x->nlink = in->links;
    x->uid = in->uid;
    x->gid = in->gid;
    x->size = in->size;
    x->atime = at_sec(in->atime);
    x->mtime = at_sec(in->mtime);
    x->ctime = at_sec(in->ctime);
    x->disk_blocks = in->blocks;
    x->ino = in->ino;
    x->fs = LX_FS_DATA;
}

/* The node that mirrors (non-directory) inode ino, or -1. */
static int32_t node_of_ino(uint32_t ino)
{
    for (int32_t i = *ino_chain(ino); i >= 0; i = lx_node(i)->ino_next) {
        struct lx_node *x = lx_node(i);
        if (x->ino == ino && (x->mode & LX_S_IFMT) != LX_S_IFDIR)
            return i;
    }
    return -1;
}

/* The inode node n mirrors, read again. */
static int inode_of(const struct lx_node *n, struct ext2_inode *in)
{
    /* The last inode read outside a change, kept until the next change
     * is kept (kept_changes): a read() then decodes no inode. */
    static struct ext2_inode last;
    static uint64_t last_at = UINT64_MAX;
    static uint8_t last_orphan;
    int err = 0;
    if (!in_op && last_at == kept_changes && last.ino == n->ino && last_orphan == !n->nlink) {
        *in = last;
    } else {
        err = n->nlink ? ext2_inode(&fs, n->ino, in) : ext2_inode_orphan(&fs, n->ino, in);
        if (!err && !in_op) {
            last = *in;
            last_at = kept_changes;
            last_orphan = !n->nlink;
        }
    }
    if (err == -EXT2_ENOENT)
        return -EXT2_EUCLEAN;                   /* an entry naming a free inode */
    if (!err && (in->mode & EXT2_S_IFMT) != (n->mode & LX_S_IFMT))
        return -EXT2_EUCLEAN;                   /* (changed under us: only a corrupt image does that) */
    return err;
}

static void node_drop(int32_t n);

/* Make fs writable (the change that marks it so, on the disk): 0,
 * LX_DISKWAIT, or EROFS with the reason on the console. */
static int64_t make_writable(void)
{
    if (!svc_may_call())
        return LX_DISKWAIT;
    saved = fs;
    in_op = 1;
    fs.io.write = disk_write;
    fs.now = (uint32_t)lx_now().sec;
    int err = ext2_mount_rw(&fs);
    op_finish(err == 0);
    if (err == -EXT2_EAGAIN)
        return LX_DISKWAIT;
    if (err) {
        lx_log("EXT2-fs (vda): not writable: %s (error %d)",
               err == -EXT2_EROFS ? "the image has features this file system does not write" :
               fs.why ? fs.why : "its orphan list could not be released", -err);
        return -LX_EROFS;                       /* (mount(8) then mounts it read-only) */
    }
    drain_due();
    return 0;
}

int64_t lx_data_mount(int32_t dir, uint64_t flags)
{
    if (!blk_ep)
        return -LX_ENXIO;
    if (mnt_root >= 0)
        return -LX_EBUSY;                       /* (one mount of the disk at a time) */
    if (!(flags & LX_MS_RDONLY) && (disk_flags & 1))
        return -LX_EACCES;                      /* a read-only disk: mount(8) mounts it read-only */
    if (!svc_may_call())
        return LX_DISKWAIT;
    int32_t n = lx_node_new(LX_S_IFDIR | 0755);
    if (n < 0)
        return -LX_ENOMEM;
    struct ext2_io io = { NULL, disk_read, NULL, disk_map };
    struct ext2_inode root;
    fs = (struct ext2_fs){ 0 };
    kept_changes++;
    int err = ext2_mount(&fs, &io);
    if (!err)
        err = ext2_inode(&fs, EXT2_ROOT_INO, &root);
    if (!err && (root.mode & EXT2_S_IFMT) != EXT2_S_IFDIR)
        err = -EXT2_EUCLEAN, fs.why = "the root inode is not a directory";
    int64_t r = err == -EXT2_EAGAIN ? LX_DISKWAIT : 0;
    if (err && !r) {
        lx_log("EXT2-fs (vda): not mounted: %s (error %d)", fs.why ? fs.why : "the disk could not be read", -err);
        r = err == -EXT2_EOPNOTSUPP ? -LX_EINVAL : err;     /* (Linux's answer to features it lacks) */
    }
    if (!r && !(flags & LX_MS_RDONLY))
        r = make_writable();
    if (r) {
        node_drop(n);
        fs = (struct ext2_fs){ 0 };
        kept_changes++;
        return r;
    }
    lx_mount_dir(dir, n, LX_FS_DATA);
    mirror(n, &root);
    mnt_root = n;
    covered = dir;
    mnt_flags = flags & LX_MS_KEPT;
    return 0;
}

void lx_data_init(void)
{
    svc_handle ep = svc_service("blk");
    uint64_t sectors = 0;
    uint32_t block_size = 0, geometry = 0;
    if (!ep || blk_info((uint32_t)ep, &sectors, &block_size, &disk_flags, &geometry) != 0 || !sectors)
        return;                                 /* no disk: no /dev/vda */
    uint64_t bits;
    svc_handle note = lx_wakeup(&bits);
    if (!note || blk_watch((uint32_t)ep, (uint32_t)note, bits) != 0) {
        lx_log("/dev/vda left out: the disk's service takes no more watchers");
        return;
    }
    if (cache_init()) {
        lx_log("/dev/vda left out: no memory for its cache");
        return;
    }
    if (lx_dev_node("dev/vda", LX_S_IFBLK | 0600, 0, LX_DEV_DISK) < 0)    /* as devtmpfs makes it */
        return;
    blk_ep = (uint32_t)ep;
    disk_bytes = sectors * SECTOR;
}

int64_t lx_data_ready(int32_t n)
{
    struct lx_node *x = lx_node(n);
    if (!x || x->fs != LX_FS_DATA)
        return 0;
    return x->bad ? -EXT2_EUCLEAN : 0;
}

int64_t lx_data_dir_ready(int32_t dir)
{
    struct lx_node *d = lx_node(dir);
    if (!d || d->fs != LX_FS_DATA || (d->mode & LX_S_IFMT) != LX_S_IFDIR)
        return 0;
    if (d->loaded || !d->nlink)
        return 0;
    /* Every entry, each with its inode, or none: a block not in yet
     * undoes what was read so far, and the call runs again. */
    struct ext2_inode din, in;
    int e = inode_of(d, &din);
    uint64_t pos = 0;
    uint32_t ino, len;
    uint8_t type;
    char name[EXT2_NAME_MAX];
    while (!e && (e = ext2_readdir(&fs, &din, &pos, &ino, &type, name, &len)) == 1) {
        e = 0;
        if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
            continue;
        e = ext2_inode(&fs, ino, &in);
        if (e == -EXT2_EAGAIN || e == -LX_ENOMEM)
            break;
        uint32_t kind = in.mode & EXT2_S_IFMT;
        int bad = e || !kind || (type && type != ((kind >> 12) == 8 ? 1 : (kind >> 12) == 4 ? 2 : (kind >> 12) == 2 ? 3 :
                                            (kind >> 12) == 6 ? 4 : (kind >> 12) == 1 ? 5 : (kind >> 12) == 12 ? 6 : 7));
        if (bad) {
            /* A corrupt inode (or one the entry's type belies): listed by
             * its name, as Linux lists it, and EUCLEAN when reached. */
            static const uint16_t kinds[8] = { EXT2_S_IFREG, EXT2_S_IFREG, EXT2_S_IFDIR, EXT2_S_IFCHR, EXT2_S_IFBLK,
                                               EXT2_S_IFIFO, EXT2_S_IFSOCK, EXT2_S_IFLNK };
            in = (struct ext2_inode){ .ino = ino, .mode = kinds[type < 8 ? type : 0], .links = 1 };
        }
        e = 0;
        int32_t n = !bad && kind != EXT2_S_IFDIR && in.links > 1 ? node_of_ino(ino) : -1;
        if (n >= 0) {                           /* another name of a file read in: the same node */
            if ((e = lx_dent_attach(dir, name, len, n, (1ull << 40) + pos)) != 0)
                break;
            continue;
        }
        n = lx_node_new(in.mode);
        if (n < 0) {
            e = n;
            break;
        }
        mirror(n, &in);
        lx_node(n)->bad = (uint8_t)bad;
        if (!bad && (in.mode & EXT2_S_IFMT) == EXT2_S_IFLNK) {  /* the target, kept as the root's links keep it */
            struct lx_node *x = lx_node(n);
            uint32_t got = 0;
            x->size = 0;                        /* (made room for below) */
            if (in.size == 0 || in.size >= LX_PATH_MAX || (e = lx_node_resize(x, in.size)) != 0 ||
                (e = ext2_readlink(&fs, &in, (char *)x->mem, (uint32_t)in.size, &got)) != 0 || got != in.size) {
                if (e == -EXT2_EAGAIN || e == -LX_ENOSPC) {
                    x->nlink = 0;
                    lx_node_maybe_free(n);
                    break;
                }
                e = 0;
                x->bad = 1;                     /* (its target is past the disk, or no target) */
            }
            x->disk_blocks = in.blocks;
        }
        if ((e = lx_dent_attach(dir, name, len, n, (1ull << 40) + pos)) != 0) {
            lx_node(n)->nlink = 0;
            lx_node_maybe_free(n);
            break;
        }
    }
    if (e < 0) {
        lx_dir_unload(dir);
        return answer(e);
    }
    d->loaded = 1;
    return 0;
}

/* Copy bytes [at, at + len) of the disk, or zeros (a hole: hole), to
 * the process at buf, a cache block at a time: 0 (*moved: all, or fewer
 * at a bad address of the process) or the file system's error. */
static int copy_out(struct lx_ctx *c, uint64_t at, int hole, uint64_t buf, uint64_t len, uint64_t *moved)
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
        uint64_t out = lx_copy_out_some(c, buf + *moved, src, k);
        *moved += out;
        if (out < k)
            break;
    }
    return 0;
}

/* A long read straight from the blk service's cache into the process's
 * memory (svc_client_buffer): the whole file system blocks from `at`
 * (one of them) on, DIRECT_MAX bytes at most, while they lie one after
 * another on the disk and no disk block of them is cached here (a block
 * changed here and not yet handed to blk is read through the cache).
 * One call to blk, each byte copied once, the read-ahead window moved
 * on as block() would. 0 (*moved), 1 when it does not apply (the caller
 * goes through the cache), or -EXT2_EAGAIN while blk fetches them. */
#define DIRECT_MIN      (64u * 1024)    /* a read of at least this much left goes straight ... */
#define DIRECT_MAX      (64u * 1024)    /* ... this much at a time (blk's largest read) */
static int read_direct(struct lx_ctx *c, const struct ext2_inode *in, uint64_t at, uint64_t end, uint64_t buf,
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
    if (!bytes || !lx_range_ok(buf, bytes))
        return 1;
    uint64_t lent = svc_client_buffer(c->call, buf, bytes, 1), count = 0;
    if (!lent)
        return 1;
    uint64_t d0 = (uint64_t)first * bs / DBLOCK, d1 = ((uint64_t)first * bs + bytes - 1) / DBLOCK;
    int64_t err = blk_read(blk_ep, (uint64_t)first * (bs / SECTOR), (void *)(uintptr_t)lent, bytes, &count);
    read_ahead(d0, err == SVC_E_AGAIN);
    if (d1 != d0)
        read_ahead(d1, 0);
    if (err == SVC_E_AGAIN)
        return -EXT2_EAGAIN;
    if (err || count != bytes)
        return 1;                               /* (a fault in the process's memory, a disk error: */
    *moved = bytes;                             /* the cache's way tells them apart, byte by byte) */
    return 0;
}

int64_t lx_data_read(struct lx_ctx *c, struct lx_node *n, uint64_t buf, uint64_t len, uint64_t *pos)
{
    struct ext2_inode in;
    int err = inode_of(n, &in);
    if (err)
        return answer(err);
    n->size = in.size;
    uint64_t done = c->t->io.done;              /* (a read run again after a wait: what it moved then) */
    uint64_t end = *pos >= in.size ? *pos : len < in.size - *pos ? *pos + len : in.size;
    c->t->io.done = 0;
    while (*pos + done < end) {
        /* Straight from the cache's blocks: the file system maps each of its blocks. */
        uint64_t at = *pos + done, moved = 0;
        if (end - at >= DIRECT_MIN && (err = read_direct(c, &in, at, end, buf + done, &moved)) <= 0) {
            done += moved;
            if (err)
                break;
            continue;
        }
        err = 0;
        uint32_t from = (uint32_t)(at % fs.block_size), pb = 0;
        uint64_t k = fs.block_size - from < end - at ? fs.block_size - from : end - at;
        if ((err = ext2_bmap(&fs, &in, at / fs.block_size, &pb)) == 0)
            err = copy_out(c, (uint64_t)pb * fs.block_size + from, pb == 0, buf + done, k, &moved);
        done += moved;
        if (err)
            break;
        if (moved < k) {
            err = done ? 0 : -LX_EFAULT;
            break;
        }
    }
    if (err == -EXT2_EAGAIN && done) {
        c->t->io.done = done;                   /* wait, then on from here: a regular file's read is whole */
        return LX_DISKWAIT;
    }
    if (!done && err)
        return answer(err);
    *pos += done;
    return (int64_t)done;
}

int lx_data_node_read(const struct lx_node *n, uint64_t off, void *dst, uint64_t len)
{
    struct ext2_inode in;
    int err = inode_of(n, &in);
    if (err)
        return (int)answer(err);
    if (off > in.size || len > in.size - off)
        return -LX_EIO;
    uint8_t *d = dst;
    while (len) {
        uint32_t k = len < (1u << 30) ? (uint32_t)len : 1u << 30, got = 0;
        if ((err = ext2_read(&fs, &in, off, d, k, &got)) != 0)
            return (int)answer(err);
        if (!got)
            return -LX_EIO;
        d += got;
        off += got;
        len -= got;
    }
    return 0;
}

int64_t lx_data_writable(int32_t n)
{
    struct lx_node *x = lx_node(n);
    return x && x->fs == LX_FS_DATA && !fs.writable ? -LX_EROFS : 0;
}

uint32_t lx_data_block_size(void)
{
    return mnt_root >= 0 ? fs.block_size : DBLOCK;
}

int64_t lx_data_statfs(uint64_t *out)
{
    /* struct statfs from f_type: type, bsize, blocks, bfree, bavail,
     * files, ffree, fsid, namelen, frsize, flags. */
    if (mnt_root < 0)
        return 1;
    struct ext2_statfs st;
    ext2_statfs(&fs, &st);
    /* ST_* are MS_* but for ST_RELATIME 0x1000 and ST_NOSYMFOLLOW 0x2000; ST_VALID 0x20. */
    uint64_t f = lx_data_mount_flags(), flags = (f & 0xdf) | (f & LX_MS_NOATIME) | (f & LX_MS_NODIRATIME) | 0x20 |
                 (f & LX_MS_RELATIME ? 0x1000 : 0) | (f & LX_MS_NOSYMFOLLOW ? 0x2000 : 0);
    uint64_t v[11] = { EXT2_MAGIC, fs.block_size, st.blocks, st.bfree, st.bavail, st.files, st.ffree, st.fsid,
                       EXT2_NAME_MAX, fs.block_size, flags & ~(uint64_t)LX_MS_DIRSYNC };
    memcpy(out, v, sizeof(v));
    return 0;
}

uint64_t lx_data_mount_flags(void)
{
    return mnt_root < 0 ? 0 : mnt_flags | (fs.writable ? 0 : LX_MS_RDONLY);
}

int32_t lx_data_mount_root(void)
{
    return mnt_root;
}

int lx_data_refuses(const struct lx_node *n, uint64_t flag)
{
    return n->fs == LX_FS_DATA && (mnt_flags & flag);
}

/* ---------------------------------------------------------------- changes */

/* Every node that mirrors inode in->ino mirrors it as it is now. */
static void refresh(const struct ext2_inode *in)
{
    for (int32_t i = *ino_chain(in->ino); i >= 0; i = lx_node(i)->ino_next)
        if (lx_node(i)->ino == in->ino)
            mirror(i, in);
}

/* Files unlinked while open whose last opener went (lx_data_node_gone):
 * off the orphan list and freed, each a change of its own. */
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

/* A slot of the orphans for inode ino (a file about to lose its last
 * name), or ORPHANS when they are all taken. */
static unsigned orphan_slot(void)
{
    unsigned slot = 0;
    while (slot < ORPHANS && orphans[slot].ino)
        slot++;
    return slot;
}

/* After a change took a file's last name: free it at once when small and
 * not open; else (open, or large) put it on the orphan list (the change
 * at hand does), to be freed when closed, a step at a time. *orphaned:
 * it went on the list. */
static int last_name_gone(struct ext2_inode *victim, int open, int *orphaned)
{
    *orphaned = open || victim->size > RELEASE_STEP;
    return *orphaned ? ext2_orphan_add(&fs, victim) : ext2_release(&fs, victim);
}

void lx_data_node_gone(int32_t node)
{
    const struct lx_node *n = lx_node(node);
    ino_unindex(node);
    for (unsigned i = 0; i < ORPHANS && n->fs == LX_FS_DATA; i++)
        if (orphans[i].ino == n->ino && !n->nlink)
            orphans[i].gone = 1;
}

/* Begin a change of the disk: what earlier changes wrote handed on to
 * the blk service as it takes it, room for this one, the file system
 * kept to go back to. 0, LX_DISKWAIT, EROFS or EIO. */
static int64_t op_begin(void)
{
    if (mnt_root < 0 || !fs.writable)
        return -LX_EROFS;
    if (!svc_may_call())
        return LX_DISKWAIT;                     /* (the register entry: the full path does it) */
    if (drain_due())
        return -LX_EIO;
    if (ndirty + OP_MAX > dirty_max())
        return LX_DISKWAIT;                     /* a writer faster than the disk waits for it */
    fs.now = (uint32_t)lx_now().sec;
    if (release_orphans())
        return LX_DISKWAIT;
    saved = fs;
    in_op = 1;
    return 0;
}

/* End it: kept (and handed on) when err is 0, else undone; the call's answer. */
static int64_t op_end(int err)
{
    op_finish(err == 0);
    if (!err)
        drain_due();
    return err ? answer(err) : 0;
}

/* A node for the file a change is about to make, freed if it fails. */
static void node_drop(int32_t n)
{
    struct lx_node *x = lx_node(n);
    if (x) {
        x->nlink = 0;
        lx_node_maybe_free(n);
    }
}

/* The mirror of directory `dir` could not follow a change the disk
 * took: it is read again at its next lookup. */
static void reload(int32_t dir)
{
    lx_dir_unload(dir);
    lx_node(dir)->loaded = 0;
}

int64_t lx_data_create(int32_t dir, const char *name, uint32_t len, uint32_t mode, uint32_t rdev,
                       const char *target, uint32_t tlen, int32_t *out)
{
    int32_t n = lx_node_new(mode);
    if (n < 0)
        return n;
    int64_t err = op_begin();
    if (err) {
        node_drop(n);
        return err;
    }
    struct ext2_inode din, in;
    int e = inode_of(lx_node(dir), &din);
    if (!e)
        e = target ? ext2_symlink(&fs, &din, name, len, target, tlen, 0, 0, &in)
                   : ext2_create(&fs, &din, name, len, mode, 0, 0, rdev, &in);
    if (!e)
        e = inode_of(lx_node(dir), &din);
    if ((err = op_end(e)) != 0) {
        node_drop(n);
        return err;
    }
    struct lx_node *x = lx_node(n);
    mirror(n, &in);
    x->nlink = 0;                               /* (lx_link counts the name) */
    x->size = 0;
    if ((target && (lx_node_resize(x, tlen) || (memcpy(x->mem, target, tlen), 0))) ||
        lx_link(dir, name, len, n) != 0) {
        node_drop(n);
        reload(dir);                            /* (the disk has it: the next lookup finds it) */
        return 0;
    }
    mirror(n, &in);
    mirror(dir, &din);
    x->loaded = (mode & LX_S_IFMT) == LX_S_IFDIR;       /* (a new directory: no entries to read) */
    if (out)
        *out = n;
    return 0;
}

int64_t lx_data_unlink(int32_t dent, int rmdir)
{
    struct lx_dent *d = lx_dent(dent);
    int32_t dir = d->dir, node = d->node;
    int open = !rmdir && lx_node(node)->opens > 0, orphaned = 0;
    unsigned slot = orphan_slot();
    if (!rmdir && slot == ORPHANS)
        return -LX_ENOSPC;                      /* (too many files unlinked while open) */
    int64_t err = op_begin();
    if (err)
        return err;
    struct ext2_inode din, victim = { 0 };
    int e = inode_of(lx_node(dir), &din);
    if (!e && rmdir) {
        e = ext2_rmdir(&fs, &din, d->name, d->len);
    } else if (!e) {
        e = ext2_unlink(&fs, &din, d->name, d->len, &victim);
        if (!e && !victim.links)
            e = last_name_gone(&victim, open, &orphaned);
    }
    if (!e)
        e = inode_of(lx_node(dir), &din);
    if ((err = op_end(e)) != 0)
        return err;
    if (orphaned) {
        orphans[slot].ino = victim.ino;
        orphans[slot].gone = !open;             /* (large, not open: freed from the next change on) */
    }
    lx_unlink(dent);
    mirror(dir, &din);
    if (victim.ino)
        refresh(&victim);
    struct lx_node *x = rmdir ? lx_node(node) : NULL;
    if (x && !x->nlink) {
        ino_unindex(node);                      /* (a removed directory still someone's: its inode is free) */
        x->ino = 0;
    }
    return 0;
}

int64_t lx_data_rename(const struct lx_last *o, const struct lx_last *n)
{
    struct lx_node *victim_node = n->node >= 0 ? lx_node(n->node) : NULL;
    int open = victim_node && (victim_node->mode & LX_S_IFMT) != LX_S_IFDIR && victim_node->opens > 0, orphaned = 0;
    unsigned slot = orphan_slot();
    if (victim_node && slot == ORPHANS)
        return -LX_ENOSPC;
    int64_t err = op_begin();
    if (err)
        return err;
    struct ext2_inode od, nd, moved, victim = { 0 };
    int same = o->dir == n->dir;
    int e = inode_of(lx_node(o->dir), &od);
    if (!e && !same)
        e = inode_of(lx_node(n->dir), &nd);
    if (!e)
        e = ext2_rename(&fs, &od, o->name, o->len, same ? &od : &nd, n->name, n->len, &victim);
    if (!e && victim.ino && !victim.links)
        e = (victim.mode & EXT2_S_IFMT) == EXT2_S_IFDIR ? ext2_release(&fs, &victim) :
            last_name_gone(&victim, open, &orphaned);
    if (!e)
        e = inode_of(lx_node(o->dir), &od);
    if (!e && !same)
        e = inode_of(lx_node(n->dir), &nd);
    if (!e)
        e = inode_of(lx_node(o->node), &moved);
    if ((err = op_end(e)) != 0)
        return err;
    if (orphaned) {
        orphans[slot].ino = victim.ino;
        orphans[slot].gone = !open;
    }
    if (lx_rename(o->dent, n->dir, n->name, n->len) != 0) {
        reload(o->dir);
        if (!same)
            reload(n->dir);
        return 0;
    }
    if (n->dent >= 0)
        lx_unlink(n->dent);
    mirror(o->dir, &od);
    mirror(n->dir, same ? &od : &nd);
    refresh(&moved);
    if (victim.ino)
        refresh(&victim);
    struct lx_node *v = n->node >= 0 ? lx_node(n->node) : NULL;
    if (v && !v->nlink && (v->mode & LX_S_IFMT) == LX_S_IFDIR) {
        ino_unindex(n->node);                   /* (a directory replaced, still someone's: its inode is free) */
        v->ino = 0;
    }
    return 0;
}

int64_t lx_data_link(int32_t node, int32_t dir, const char *name, uint32_t len)
{
    int64_t err = op_begin();
    if (err)
        return err;
    struct ext2_inode din, in;
    int e = inode_of(lx_node(dir), &din);
    if (!e)
        e = inode_of(lx_node(node), &in);
    if (!e)
        e = ext2_link(&fs, &din, name, len, &in);
    if (!e)
        e = inode_of(lx_node(dir), &din);
    if ((err = op_end(e)) != 0)
        return err;
    if (lx_link(dir, name, len, node) != 0)
        reload(dir);
    else
        mirror(dir, &din);
    refresh(&in);
    return 0;
}

#define IMMUTABLE_OR_APPEND 0x30u               /* chattr +i, +a: their attributes stay (Linux's EPERM) */

int64_t lx_data_setattr(int32_t node, uint32_t what, uint32_t mode, uint32_t uid, uint32_t gid,
                        const struct lx_time *atime, const struct lx_time *mtime)
{
    int64_t err = op_begin();
    if (err)
        return err;
    struct ext2_inode in;
    int e = inode_of(lx_node(node), &in);
    if (!e && (in.flags & IMMUTABLE_OR_APPEND))
        e = -EXT2_EPERM;
    if (!e) {
        if (what & LX_ATTR_MODE)
            in.mode = (uint16_t)((in.mode & EXT2_S_IFMT) | (mode & 07777));
        if (what & LX_ATTR_UID)
            in.uid = uid;
        if (what & LX_ATTR_GID)
            in.gid = gid;
        if (what & LX_ATTR_ATIME)
            in.atime = (uint32_t)atime->sec;
        if (what & LX_ATTR_MTIME)
            in.mtime = (uint32_t)mtime->sec;
        in.ctime = fs.now;
        e = ext2_inode_write(&fs, &in);
    }
    if ((err = op_end(e)) != 0)
        return err;
    refresh(&in);
    return 0;
}

int64_t lx_data_truncate(int32_t node, uint64_t size)
{
    for (;;) {                                  /* a step at a time (a wait in between: on from there) */
        int64_t err = op_begin();
        if (err)
            return err;
        struct ext2_inode in;
        int e = inode_of(lx_node(node), &in);
        uint64_t to = size;
        if (!e && in.size > size && in.size - size > RELEASE_STEP)
            to = (in.size - 1) / RELEASE_STEP * RELEASE_STEP > size ? (in.size - 1) / RELEASE_STEP * RELEASE_STEP
                                                                    : size;
        if (!e)
            e = ext2_truncate(&fs, &in, to);
        if ((err = op_end(e)) != 0)
            return err;
        refresh(&in);
        if (to == size)
            return 0;
    }
}

static int64_t sync_all(uint64_t *need);

/* One change writing src[0..len) into n at `at` (its end when `append`):
 * 0 (*put bytes; fewer when the disk filled), LX_DISKWAIT or an error. */
static int64_t write_once(struct lx_node *n, int append, uint64_t at, const void *src, uint32_t len, uint32_t *put)
{
    int64_t err = op_begin();
    if (err)
        return err;
    struct ext2_inode in;
    int e = inode_of(n, &in);
    if (!e)
        e = ext2_write(&fs, &in, append ? in.size : at, src, len, put);
    if ((err = op_end(e)) != 0)
        return err;
    refresh(&in);
    return 0;
}

int64_t lx_data_write_kernel(struct lx_node *n, const void *src, uint64_t len, uint64_t *pos)
{
    uint64_t done = 0;
    int64_t err = 0;
    while (done < len) {
        uint32_t k = len - done < CHUNK ? (uint32_t)(len - done) : CHUNK, put = 0;
        if ((err = write_once(n, 0, *pos + done, (const uint8_t *)src + done, k, &put)) != 0)
            break;
        done += put;
        if (put < k)
            break;
    }
    if (!done)
        return err;
    *pos += done;
    return (int64_t)done;                       /* (a wait after some bytes: those; the caller asks again) */
}

int64_t lx_data_write(struct lx_ctx *c, struct lx_node *n, uint32_t flags, uint64_t buf, uint64_t len, uint64_t *pos)
{
    static uint8_t bounce[CHUNK];
    uint64_t done = c->t->io.done;              /* (a write run again after a wait: what it wrote then) */
    int append = (flags & O_APPEND) != 0;
    int64_t err = 0;
    while (done < len) {
        uint32_t k = len - done < CHUNK ? (uint32_t)(len - done) : CHUNK, put = 0;
        uint64_t got = lx_copy_in_some(c, bounce, buf + done, k);
        if (!got) {
            err = -LX_EFAULT;
            break;
        }
        if ((err = write_once(n, append, *pos + done, bounce, (uint32_t)got, &put)) != 0)
            break;
        done += put;
        if (put < got)
            break;                              /* the disk is full (or the file at its largest) */
    }
    if (!err && done && ((flags & O_DSYNC) || (mnt_flags & LX_MS_SYNCHRONOUS)))
        err = lx_data_fsync(c);                 /* O_SYNC, O_DSYNC, a sync mount: on the disk before it returns */
    if (err == LX_DISKWAIT && done) {
        c->t->io.done = done;                   /* run again: on from here */
        return LX_DISKWAIT;
    }
    c->t->io.done = 0;
    if (!done)
        return err;
    if (!append)
        *pos += done;
    else
        *pos = n->size;
    return (int64_t)done;
}

/* Hand everything to the blk service and have it put it on the disk:
 * 0, LX_DISKWAIT while that goes on, or EIO (once) if a write failed. */
static int64_t sync_all(uint64_t *need)
{
    if (mnt_root < 0)
        return 0;
    if (!svc_may_call())
        return LX_DISKWAIT;
    for (;;) {
        if (drain())
            return -LX_EIO;
        if (!*need && ndirty)
            return LX_DISKWAIT;                 /* (what was written before the call: handed on first) */
        if (!*need)
            *need = handed + 1;                 /* what this call waits for: the blocks handed on so far */
        if (synced + 1 >= *need) {
            int failed = sync_failed;
            sync_failed = 0;
            *need = 0;
            return failed ? -LX_EIO : 0;
        }
        if (!ticket) {
            int64_t r = blk_sync_start(blk_ep, &ticket);
            if (r) {
                ticket = 0;
                if (r == SVC_E_BUSY)
                    return LX_DISKWAIT;         /* (its syncs are all taken: they end soon) */
                *need = 0;
                return -LX_EIO;
            }
            ticket_at = handed;
        }
        int64_t r = blk_sync_poll(blk_ep, ticket);
        if (r == SVC_E_AGAIN)
            return LX_DISKWAIT;
        ticket = 0;
        if (r)
            sync_failed = 1;
        synced = ticket_at > synced ? ticket_at : synced;
    }
}

int64_t lx_data_fsync(struct lx_ctx *c)
{
    int64_t r = sync_all(&c->t->sync_need);
    if (r != LX_DISKWAIT)
        c->t->sync_need = 0;                    /* (the call is over: the next one waits for its own) */
    return r;
}

/* Mark the file system clean and read-only, everything on the disk:
 * 0, LX_DISKWAIT (the call runs again: *need says what it waits for) or EIO. */
static int64_t put_away(uint64_t *need)
{
    if (mnt_root < 0)
        return 0;
    if (fs.writable) {
        int64_t err = op_begin();
        if (err)
            return err;
        if ((err = op_end(ext2_unmount(&fs))) != 0)
            return err;
    }
    int64_t r = sync_all(need);
    if (r != LX_DISKWAIT)
        *need = 0;
    return r;
}

int64_t lx_data_unmount(void)
{
    static uint64_t need;
    return put_away(&need);
}

int64_t lx_data_umount(struct lx_ctx *c)
{
    static int made_ro;                         /* the umount under way made the file system read-only */
    if (mnt_root < 0) {
        c->t->sync_need = 0;
        return -LX_EINVAL;
    }
    if (lx_fs_busy(LX_FS_DATA)) {
        /* (held again while it waited: as it was, read-write) */
        if (made_ro && !(disk_flags & 1) && make_writable() == LX_DISKWAIT)
            return LX_DISKWAIT;
        made_ro = 0;
        c->t->sync_need = 0;
        return -LX_EBUSY;
    }
    int was = fs.writable;
    int64_t r = put_away(&c->t->sync_need);
    made_ro |= was && !fs.writable;
    if (r == LX_DISKWAIT)
        return r;
    made_ro = 0;
    if (r)
        lx_log("EXT2-fs (vda): unmounted, but a write to the disk failed");   /* (umount succeeds, as Linux's) */
    lx_fs_forget(LX_FS_DATA, mnt_root);
    lx_unmount_dir(mnt_root, covered);
    for (uint32_t i = 0; i < nblocks; i++)    /* (dirty only if the disk failed: lost, as on Linux) */
        cache[i].valid = cache[i].dirty = cache[i].queued = cache[i].used = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
        heads[i] = -1;
    dq_len = ndirty = 0;
    dirty_since = 0;
    writeback_later = 0;
    memset(orphans, 0, sizeof(orphans));
    fs = (struct ext2_fs){ 0 };
    kept_changes++;
    mnt_root = covered = -1;
    mnt_flags = 0;
    return 0;
}

int64_t lx_data_remount(struct lx_ctx *c, uint64_t flags)
{
    if (mnt_root < 0) {
        c->t->sync_need = 0;
        return -LX_EINVAL;
    }
    if ((flags & LX_MS_RDONLY) && (fs.writable || c->t->sync_need)) {
        /* (sync_need: this call made it read-only and waits for the disk) */
        if (fs.writable && lx_fs_writers(LX_FS_DATA)) {
            c->t->sync_need = 0;
            return -LX_EBUSY;                   /* files open for writing, as Linux says */
        }
        int64_t r = put_away(&c->t->sync_need);
        if (r)
            return r;
    } else if (!(flags & LX_MS_RDONLY) && !fs.writable) {
        if (disk_flags & 1)
            return -LX_EACCES;
        int64_t r = make_writable();
        if (r)
            return r;
    }
    mnt_flags = flags & LX_MS_KEPT;
    return 0;
}


int64_t lx_data_prefetch(const struct lx_node *n, uint64_t off, uint64_t len)
{
    if (n->fs != LX_FS_DATA || (n->mode & LX_S_IFMT) != LX_S_IFREG || mnt_root < 0)
        return 0;
    if (!svc_may_call())
        return LX_DISKWAIT;
    struct ext2_inode in;
    int e = inode_of(n, &in);
    if (e)
        return answer(e);
    if (off >= in.size || len == 0)
        return 0;
    if (len > in.size - off)
        len = in.size - off;
    if (len > LX_DATA_COPY_MAX)
        return 0;                               /* (lx_node_copy_out refuses it) */
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
                return e;
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
                return -LX_EIO;
        }
        run = no;
        runs = lb <= lb_end;
    }
    return missing ? LX_DISKWAIT : 0;
}
