/*
 * The root file system's store: nodes (what a file is: its mode, links,
 * times and contents) and directory entries (a name in a directory naming
 * a node), filled at start from a cpio archive ("newc", the Linux
 * initramfs format) in the boot image, then changed by the programs.
 * This is the OKL4 paper's in-memory file system (section IV.A.1): a
 * file's contents stay in place in the archive until it is first written;
 * then they are copied into memory of the personality (svc_alloc, charged
 * to it), at most lx_vfs_bytes() in all (ENOSPC past it). Names of the
 * archive stay in it too; new names go to a pool of small slots.
 *
 * A regular file mapped MAP_SHARED moves its contents into a memory
 * object (lx_node_share), which every shared mapping maps: from then on
 * that object is the file's only copy, read and written with
 * svc_mem_read and svc_mem_write (and by read() and write() straight
 * between it and the process: svc_mem_copy_out, svc_mem_copy_in), so a store through a mapping is what
 * read() sees and a write() is what the mappings see, as with Linux's
 * page cache. It is charged like memory contents (cap: the end of the
 * page its largest size reached); the bytes between the size and the end
 * of its page are zeros except for stores through a mapping past the end,
 * which a shrink clears (tmpfs's rule). At most LX_SHARED_FILES files are
 * in objects: making one more first moves one that nothing maps back into
 * memory.
 *
 * Nodes and entries live in two tables that grow a chunk (4,096) at a
 * time as they fill, up to the personality's memory. A node is freed when no entry names it, no open
 * file description holds it and it is no process's working directory: an
 * unlinked file stays readable through its descriptors until the last
 * close. A directory knows its parent and the entry naming it (no hard
 * links to directories), which getcwd and ".." walk.
 *
 * A directory lists "." and "..", then its entries newest first (Linux's
 * tmpfs order, which find and tar show, so the archive's entries come in
 * reverse); each entry has a cookie, smaller for newer entries, that
 * getdents hands out as d_off: a listing resumes after the cookie it
 * stopped at, so removing entries while reading a directory skips none
 * (rm -r does that), and entries made meanwhile are not seen.
 */
#include "lx.h"

/* Nodes and entries live in tables that grow a chunk at a time as they
 * fill, bounded by the personality's memory (svc_alloc), and a chunk
 * never moves: a node's or an entry's address stays good while it lives. */
#define CHUNK_SHIFT     12
#define CHUNK           (1 << CHUNK_SHIFT)      /* nodes (or entries) a chunk */
#define CHUNKS_MAX      256                     /* 1,048,576 of each at most */
static struct lx_node *node_chunks[CHUNKS_MAX];
static struct lx_dent *dent_chunks[CHUNKS_MAX];
static int32_t maxnodes, node_hint;             /* (whole chunks) */
static int32_t maxdents, dent_hint;
static uint32_t used_dents;

static inline struct lx_node *node_at(int32_t n) { return &node_chunks[n >> CHUNK_SHIFT][n & (CHUNK - 1)]; }
static inline struct lx_dent *dent_at(int32_t d) { return &dent_chunks[d >> CHUNK_SHIFT][d & (CHUNK - 1)]; }

static int32_t node_index(const struct lx_node *x)
{
    for (int32_t c = 0; c < maxnodes >> CHUNK_SHIFT; c++)
        if (x >= node_chunks[c] && x < node_chunks[c] + CHUNK)
            return (c << CHUNK_SHIFT) + (int32_t)(x - node_chunks[c]);
    return -1;
}

/* One more chunk of nodes (zeroed: free), or of entries (free: no node):
 * 0, or -LX_ENOSPC when the memory or the chunks ran out. */
static int grow_nodes(void)
{
    struct lx_node *c = maxnodes < CHUNKS_MAX * CHUNK ? svc_alloc(CHUNK * sizeof(*c)) : NULL;
    if (!c)
        return -LX_ENOSPC;
    node_chunks[maxnodes >> CHUNK_SHIFT] = c;
    maxnodes += CHUNK;
    return 0;
}

static int grow_dents(void)
{
    struct lx_dent *c = maxdents < CHUNKS_MAX * CHUNK ? svc_alloc(CHUNK * sizeof(*c)) : NULL;
    if (!c)
        return -LX_ENOSPC;
    for (int32_t i = 0; i < CHUNK; i++)
        c[i].node = -1;
    dent_chunks[maxdents >> CHUNK_SHIFT] = c;
    maxdents += CHUNK;
    return 0;
}
static uint64_t next_cookie = 1ull << 39;   /* counts down: 1 and 2 are the cookies of "." and ".." */
static const uint8_t *archive;
static uint64_t archive_size;
static svc_handle archive_mem;
static uint64_t mem_used;                   /* bytes of file contents in memory (page-rounded capacities) */
static uint64_t vfs_bytes;                  /* the most file contents in memory (lx_vfs_bytes) */
static uint32_t used_nodes;
static uint32_t shared_nodes;               /* nodes whose contents are in a memory object */

struct lx_node *lx_node(int32_t n)
{
    if (n < 0 || n >= maxnodes)
        return NULL;
    struct lx_node *x = node_at(n);
    return x->mode ? x : NULL;
}

struct lx_dent *lx_dent(int32_t d)
{
    if (d < 0 || d >= maxdents)
        return NULL;
    struct lx_dent *e = dent_at(d);
    return e->node >= 0 ? e : NULL;
}

int32_t lx_dent_of(int32_t node)
{
    for (int32_t d = 0; d < maxdents; d++)
        if (dent_at(d)->node == node)
            return d;
    return -1;
}

const uint8_t *lx_fs_data(void) { return archive; }
svc_handle lx_fs_object(void) { return archive_mem; }

const uint8_t *lx_node_data(const struct lx_node *n)
{
    return n->mem ? n->mem : archive + n->data_off;
}

int lx_node_read(const struct lx_node *n, uint64_t off, void *dst, uint64_t len)
{
    if (n->fs == LX_FS_DATA && (n->mode & LX_S_IFMT) == LX_S_IFREG)
        return lx_data_node_read(n, off, dst, len);
    if (off > n->size || len > n->size - off)
        return -LX_ENOMEM;                      /* (not asked by the callers) */
    if (n->obj)
        return svc_mem_read(n->obj->h, off, dst, len) ? -LX_ENOMEM : 0;
    memcpy(dst, lx_node_data(n) + off, len);
    return 0;
}

int lx_node_copy_out(const struct lx_node *n, uint64_t off, svc_handle mem, uint64_t at, uint64_t len)
{
    static uint8_t bounce[16384];
    if (off > n->size || len > n->size - off)
        return -LX_ENOMEM;
    if (n->fs == LX_FS_DATA && len > LX_DATA_COPY_MAX)
        return -LX_EFBIG;                       /* (copied at once: no wait for the disk halfway) */
    for (uint64_t done = 0; n->fs == LX_FS_DATA && done < len; done += sizeof(bounce)) {
        uint64_t k = len - done < sizeof(bounce) ? len - done : sizeof(bounce);
        int err = lx_data_node_read(n, off + done, bounce, k);
        if (err || svc_mem_write(mem, at + done, bounce, k))
            return err ? err : -LX_ENOMEM;
    }
    if (n->fs == LX_FS_DATA)
        return 0;
    if (!n->obj)
        return svc_mem_write(mem, at, lx_node_data(n) + off, len) ? -LX_ENOMEM : 0;
    for (uint64_t done = 0; done < len; done += sizeof(bounce)) {
        uint64_t k = len - done < sizeof(bounce) ? len - done : sizeof(bounce);
        if (svc_mem_read(n->obj->h, off + done, bounce, k) || svc_mem_write(mem, at + done, bounce, k))
            return -LX_ENOMEM;
    }
    return 0;
}

int lx_node_write(struct lx_node *n, uint64_t off, const void *src, uint64_t len)
{
    if (off > n->cap || len > n->cap - off)
        return -LX_ENOSPC;                      /* no room made */
    if (n->obj)
        return svc_mem_write(n->obj->h, off, src, len) ? -LX_ENOSPC : 0;
    memcpy(n->mem + off, src, len);
    return 0;
}

int lx_node_write_from(struct lx_ctx *c, struct lx_node *n, uint64_t off, uint64_t src, uint64_t len)
{
    if (off > n->cap || len > n->cap - off)
        return -LX_ENOSPC;                      /* no room made */
    if (!lx_range_ok(src, len))
        return -LX_EFAULT;
    int err = svc_mem_copy_in(c->call, n->obj->h, off, src, len);
    return err == SVC_E_FAULT ? -LX_EFAULT : err ? -LX_ENOSPC : 0;
}

int lx_node_read_to(struct lx_ctx *c, const struct lx_node *n, uint64_t off, uint64_t dst, uint64_t len)
{
    if (off > n->size || len > n->size - off)
        return -LX_ENOMEM;                      /* (not asked by the callers) */
    if (!lx_range_ok(dst, len))
        return -LX_EFAULT;
    int err = svc_mem_copy_out(c->call, dst, n->obj->h, off, len);
    return err == SVC_E_FAULT ? -LX_EFAULT : err ? -LX_ENOMEM : 0;
}

void lx_fs_usage(uint64_t *bytes_used, uint32_t *nodes_used, uint32_t *nodes_max)
{
    /* The most nodes: as many as the store has pages (tmpfs's nr_inodes
     * is its size in pages too), and no fewer than are used; the tables
     * grow to that. */
    uint64_t max = lx_vfs_bytes() / LX_PAGE;
    max = max < (uint64_t)CHUNKS_MAX * CHUNK ? max : (uint64_t)CHUNKS_MAX * CHUNK;
    *bytes_used = mem_used;
    *nodes_used = used_nodes;
    *nodes_max = (uint32_t)(max > used_nodes ? max : used_nodes);
}

uint64_t lx_node_ino(int32_t n)
{
    return node_at(n)->fs == LX_FS_DATA && node_at(n)->ino ? node_at(n)->ino : (uint64_t)n + 1;
}

/* The file system node n is in. */
int lx_node_fs(int32_t n)
{
    return node_at(n)->proc ? LX_FS_PROC : (int)node_at(n)->fs;
}

/* Is n the root of a file system mounted on a directory of another? */
int lx_is_mount_point(int32_t n)
{
    return (node_at(n)->mode & LX_S_IFMT) == LX_S_IFDIR && n != LX_ROOT && lx_node_fs(n) != lx_node_fs(node_at(n)->parent);
}

/* Each file system's device number (st_dev), as Linux numbers them when
 * its init mounts them in this order: the root 0:2, devtmpfs 0:5, proc
 * 0:21, devpts 0:22, the tmpfs of /dev/shm 0:23; the disk (virtio-blk's
 * first, vda) 254:0. */
uint32_t lx_fs_dev(int fs)
{
    static const uint32_t dev[LX_FS_COUNT] = { [LX_FS_ROOT] = 2, [LX_FS_DEV] = 5, [LX_FS_PTS] = 22,
                                               [LX_FS_SHM] = 23, [LX_FS_PROC] = 21,
                                               [LX_FS_DATA] = 0xfe00 };    /* vda, 254:0 */
    return dev[fs];
}

/* Each file system's mount id (/proc/PID/mountinfo, fdinfo's mnt_id), as Linux's. */
uint32_t lx_fs_mount_id(int fs)
{
    static const uint32_t id[LX_FS_COUNT] = { [LX_FS_ROOT] = 1, [LX_FS_DEV] = 23, [LX_FS_PROC] = 24,
                                              [LX_FS_PTS] = 25, [LX_FS_SHM] = 26, [LX_FS_DATA] = 27 };
    return id[fs];
}

/* Bytes of contents and nodes of one file system (they share one store). */
void lx_fs_usage_of(int fs, uint64_t *bytes_used, uint32_t *nodes_used)
{
    *bytes_used = 0;
    *nodes_used = 0;
    for (int32_t i = 0; i < maxnodes; i++)
        if (node_at(i)->mode && lx_node_fs(i) == fs) {
            *bytes_used += node_at(i)->cap;
            (*nodes_used)++;
        }
}

struct lx_time lx_now(void)
{
    uint64_t ns = svc_clock_ns() + lx_realtime_base();
    return (struct lx_time){ (int64_t)(ns / 1000000000u), (int64_t)(ns % 1000000000u) };
}

/* ---------------------------------------------------------------- names */
/* Slots of 32, 64 and 256 bytes (a name and its NUL), in chunks of 16 KiB;
 * a free slot holds the next free one. */
static const uint32_t name_sizes[3] = { 32, 64, 256 };
static void *name_free[3];

static int name_class(uint32_t len) { return len < 32 ? 0 : len < 64 ? 1 : 2; }

static char *name_alloc(uint32_t len)
{
    int k = name_class(len);
    if (!name_free[k]) {
        uint8_t *chunk = svc_alloc(16384);
        if (!chunk)
            return NULL;
        for (uint32_t at = 0; at + name_sizes[k] <= 16384; at += name_sizes[k]) {
            *(void **)(chunk + at) = name_free[k];
            name_free[k] = chunk + at;
        }
    }
    char *s = name_free[k];
    name_free[k] = *(void **)s;
    return s;
}

static void name_release(const char *s, uint32_t len)
{
    int k = name_class(len);
    *(void **)(uintptr_t)s = name_free[k];
    name_free[k] = (void *)(uintptr_t)s;
}

/* ---------------------------------------------------------------- nodes */
static int is_cwd(int32_t n);
static void node_free_mem(struct lx_node *n);
static void node_free(struct lx_node *n);

/* Is node n mapped (its object, by some process's range)? */
static int mapped(const struct lx_node *n)
{
    return n->obj && n->obj->refs;
}

/* Free every node nothing holds any more: removed directories that were
 * some process's working directory until it moved or ended. */
static void sweep(void)
{
    for (int32_t i = 1; i < maxnodes; i++) {
        struct lx_node *n = node_at(i);
        if (n->mode && !n->nlink && !n->opens && !n->proc && !mapped(n) && !is_cwd(i))
            node_free(n);
    }
}

int32_t lx_node_new(uint32_t mode)
{
    if (used_nodes >= (uint32_t)maxnodes)
        sweep();
    if (used_nodes >= (uint32_t)maxnodes) {
        if (grow_nodes())
            return -LX_ENOSPC;
        node_hint = maxnodes - CHUNK;           /* (the new chunk: free from its start) */
    }
    for (int32_t i = 0; i < maxnodes; i++) {
        int32_t n = (node_hint + i) % maxnodes;
        if (!node_at(n)->mode) {
            struct lx_time now = lx_now();
            (*node_at(n)) = (struct lx_node){ .mode = mode, .parent = -1, .dent = -1, .first = -1, .last = -1,
                                         .atime = now, .mtime = now, .ctime = now };
            node_hint = n + 1;
            used_nodes++;
            return n;
        }
    }
    return -LX_ENOSPC;
}

/* Is node n some process's working directory? */
static int is_cwd(int32_t n)
{
    for (struct lx_proc *p = lx_procs(); p; p = p->next)
        if (p->used && !p->ended && p->cwd == n)
            return 1;
    return 0;
}

/* The node goes: its contents, its attributes, its slot. */
int32_t lx_nodes_max(void)
{
    return maxnodes;
}

static void node_free(struct lx_node *n)
{
    if ((n->mode & LX_S_IFMT) == LX_S_IFCHR && n->dev == LX_DEV_BINDER)
        lx_binder_node_gone(node_index(n));     /* (its device stays: made again, the node gets it back) */
    if (n->fs == LX_FS_DATA)
        lx_data_node_gone(node_index(n));        /* (an orphan's last opener: it can be freed on the disk) */
    node_free_mem(n);
    lx_xattrs_free(n);
    n->mode = 0;
    used_nodes--;
}

/* The largest file contents kept in one block of the personality's
 * memory (in the kernel placement, blocks go to 2 MiB); larger files live
 * in a memory object. */
#define FILE_MEM_MAX    (1ull << 20)

/* Its contents go (the node stays: a resize gives it others). */
static void node_free_mem(struct lx_node *n)
{
    if (n->mem)
        svc_free(n->mem, n->cap);
    if (n->obj) {
        lx_mobj_file_gone(n->obj);
        shared_nodes--;
    }
    mem_used -= n->cap;
    n->mem = NULL;
    n->obj = NULL;
    n->cap = 0;
}

void lx_node_maybe_free(int32_t i)
{
    struct lx_node *n = lx_node(i);
    if (!n || i == LX_ROOT || n->nlink || n->opens || n->proc || mapped(n) || is_cwd(i))
        return;
    node_free(n);
}

int lx_node_reserve(struct lx_node *n, uint64_t end)
{
    if (end < n->size)
        end = n->size;                          /* the whole file moves: every byte below its size stays
                                                 * readable (a write near the start of a big file) */
    if (end <= n->cap)
        return 0;
    if (end > vfs_bytes)
        return -LX_ENOSPC;
    if (n->obj) {                               /* the object has room: the pages are only charged */
        uint64_t cap = lx_page_up(end);
        if (mem_used - n->cap + cap > vfs_bytes)
            return -LX_ENOSPC;
        mem_used += cap - n->cap;
        n->cap = cap;
        return 0;
    }
    uint64_t cap = lx_page_up(end), more = lx_page_up(n->cap * 2);
    if (more > cap && mem_used - n->cap + more <= vfs_bytes && more <= vfs_bytes)
        cap = more;                             /* doubling: a file written in small pieces copies little */
    if (cap > FILE_MEM_MAX) {                   /* a large file: into a memory object, its pages made when
                                                 * written (one block of memory may not be had) */
        if (!lx_node_share(node_index(n)))
            return -LX_ENOSPC;
        return lx_node_reserve(n, end);
    }
    if (mem_used - n->cap + cap > vfs_bytes)
        return -LX_ENOSPC;
    uint8_t *mem = svc_alloc(cap);              /* zeroed: holes read as zeros */
    if (!mem)
        return -LX_ENOSPC;
    const uint8_t *old = lx_node_data(n);
    memcpy(mem, old, n->size < cap ? n->size : cap);
    node_free_mem(n);
    n->mem = mem;
    n->cap = cap;
    mem_used += cap;
    return 0;
}

/* Zero [from, to) of n's object (a shrink: what a mapping stored past
 * the new end, and the pages past it, read as zeros when it grows again). */
static void zero_object(struct lx_node *n, uint64_t from, uint64_t to)
{
    static const uint8_t zeros[4096];
    while (from < to) {
        uint64_t k = sizeof(zeros) - (from & (sizeof(zeros) - 1));     /* to the end of its page */
        if (k > to - from)
            k = to - from;
        svc_mem_write(n->obj->h, from, zeros, k);
        from += k;
    }
}

void lx_node_set_size(struct lx_node *n, uint64_t size)
{
    uint64_t old = n->size;
    n->size = size;
    if (!n->obj || size == old)
        return;
    if (size < old)
        zero_object(n, size, lx_page_up(old) < n->cap ? lx_page_up(old) : n->cap);
    lx_file_resized(n, old);
}

int lx_node_resize(struct lx_node *n, uint64_t size)
{
    if (n->obj) {
        int err = lx_node_reserve(n, size);
        if (!err)
            lx_node_set_size(n, size);
        return err;
    }
    if (size > n->size) {
        int err = lx_node_reserve(n, size);
        if (err)
            return err;
    } else if (size < n->size && n->mem) {
        memset(n->mem + size, 0, n->size - size);       /* growing again later reads zeros there */
    } else if (size < n->size) {
        /* Cut in the archive: only what stays is copied out (an empty file keeps no copy). */
        uint64_t old = n->size;
        n->size = size;
        int err = size ? lx_node_reserve(n, size) : 0;
        if (err) {
            n->size = old;
            return err;
        }
    }
    n->size = size;
    return 0;
}

/* Move the contents of a file in an object that nothing maps back into
 * memory, to make room for another; 0, or -ENOMEM if none can move. */
static int unshare_one(void)
{
    for (int32_t i = 0; i < maxnodes; i++) {
        struct lx_node *n = node_at(i);
        if (!n->mode || !n->obj || n->obj->refs || n->cap > FILE_MEM_MAX)
            continue;                           /* (a large file stays in its object) */
        uint8_t *mem = n->cap ? svc_alloc(n->cap) : NULL;       /* zeroed past the size */
        if (n->cap && (!mem || svc_mem_read(n->obj->h, 0, mem, n->size))) {
            if (mem)
                svc_free(mem, n->cap);
            continue;
        }
        lx_mobj_file_gone(n->obj);
        n->obj = NULL;
        n->mem = mem;
        shared_nodes--;
        return 0;
    }
    return -LX_ENOMEM;
}

/* Write the contents of n into object h, leaving out pages of zeros (a
 * sparse file costs the object nothing there); 0 or an error. */
static int fill_object(const struct lx_node *n, svc_handle h)
{
    const uint8_t *data = lx_node_data(n);
    for (uint64_t at = 0; at < n->size; at += LX_PAGE) {
        uint64_t k = n->size - at < LX_PAGE ? n->size - at : LX_PAGE, i = 0;
        while (i < k && !data[at + i])
            i++;
        if (i < k && svc_mem_write(h, at, data + at, k))
            return -LX_ENOMEM;
    }
    return 0;
}

struct lx_mobj *lx_node_share(int32_t node)
{
    struct lx_node *n = lx_node(node);
    if (!n || (n->mode & LX_S_IFMT) != LX_S_IFREG || n->proc || n->fs == LX_FS_DATA)
        return NULL;                            /* (the disk's files are not shared in memory) */
    if (n->obj)
        return n->obj;
    uint64_t cap = lx_page_up(n->size);
    if (cap < n->cap)
        cap = n->cap;                           /* (what memory held stays charged) */
    if (mem_used - n->cap + cap > vfs_bytes || (shared_nodes >= LX_SHARED_FILES && unshare_one()))
        return NULL;
    int err;
    svc_handle h = svc_mem_create(vfs_bytes, &err);
    struct lx_mobj *o = h ? lx_mobj_of_file(h, node) : NULL;
    if (!o)
        return NULL;
    if (fill_object(n, o->h)) {
        lx_mobj_file_gone(o);
        return NULL;
    }
    if (n->mem)
        svc_free(n->mem, n->cap);
    mem_used += cap - n->cap;
    n->mem = NULL;
    n->cap = cap;
    n->obj = o;
    shared_nodes++;
    return o;
}

/* ---------------------------------------------------------------- entries */
int32_t lx_dent_find(int32_t dir, const char *name, uint32_t len)
{
    for (int32_t d = node_at(dir)->first; d >= 0; d = dent_at(d)->next)
        if (dent_at(d)->len == len && !memcmp(dent_at(d)->name, name, len))
            return d;
    return -1;
}

/* A new entry in `dir` for node `node` named name[0..len) (copied into the
 * pool unless `in_place`); its index or -ENOSPC. */
/* A free entry slot, and the name it will hold (*stored: name itself when
 * `in_place`, else a copy in the pool); the slot or -ENOSPC. */
static int32_t dent_take(const char *name, uint32_t len, int in_place, const char **stored)
{
    int32_t d = -1;
    if (used_dents >= (uint32_t)maxdents) {
        if (grow_dents())
            return -LX_ENOSPC;
        dent_hint = maxdents - CHUNK;           /* (the new chunk: free from its start) */
    }
    for (int32_t i = 0; i < maxdents && d < 0; i++)
        if (dent_at((dent_hint + i) % maxdents)->node < 0)
            d = (dent_hint + i) % maxdents;
    if (d < 0)
        return -LX_ENOSPC;
    *stored = name;
    if (!in_place) {
        char *s = name_alloc(len);
        if (!s)
            return -LX_ENOSPC;
        memcpy(s, name, len);
        s[len] = 0;
        *stored = s;
    }
    dent_hint = d + 1;
    used_dents++;                               /* (the caller fills it at once) */
    return d;
}

static int32_t dent_add(int32_t dir, const char *name, uint32_t len, int32_t node, int in_place)
{
    const char *stored;
    int32_t d = dent_take(name, len, in_place, &stored);
    if (d < 0)
        return d;
    struct lx_node *p = node_at(dir);
    (*dent_at(d)) = (struct lx_dent){ stored, len, node, dir, p->first, -1, next_cookie--, (uint8_t)!in_place };
    node_at(node)->fs = p->fs;                     /* (a name never links across file systems: EXDEV) */
    if (p->first >= 0)
        dent_at(p->first)->prev = d;
    else
        p->last = d;
    p->first = d;
    p->entries++;
    return d;
}

static void dent_drop(int32_t d)
{
    struct lx_dent *e = dent_at(d);
    struct lx_node *p = node_at(e->dir);
    if (e->prev >= 0)
        dent_at(e->prev)->next = e->next;
    else
        p->first = e->next;
    if (e->next >= 0)
        dent_at(e->next)->prev = e->prev;
    else
        p->last = e->prev;
    p->entries--;
    if (e->own)
        name_release(e->name, e->len);
    e->node = -1;
    used_dents--;
}

int lx_link(int32_t dir, const char *name, uint32_t len, int32_t node)
{
    int32_t d = dent_add(dir, name, len, node, 0);
    if (d < 0)
        return d;
    struct lx_node *n = node_at(node), *p = node_at(dir);
    n->nlink++;
    if ((n->mode & LX_S_IFMT) == LX_S_IFDIR) {
        n->nlink++;                             /* its own "." */
        n->parent = dir;
        n->dent = d;
        p->nlink++;                             /* its ".." */
    }
    p->mtime = p->ctime = lx_now();
    return 0;
}

void lx_unlink(int32_t d)
{
    int32_t dir = dent_at(d)->dir, node = dent_at(d)->node;
    struct lx_node *n = node_at(node), *p = node_at(dir);
    dent_drop(d);
    if ((n->mode & LX_S_IFMT) == LX_S_IFDIR) {
        n->nlink = 0;
        n->dent = -1;
        p->nlink--;
    } else {
        n->nlink--;
    }
    struct lx_time now = lx_now();
    p->mtime = p->ctime = n->ctime = now;
    lx_node_maybe_free(node);
}

int lx_rename(int32_t from, int32_t dir, const char *name, uint32_t len)
{
    int32_t node = dent_at(from)->node, old_dir = dent_at(from)->dir;
    int32_t d = dent_add(dir, name, len, node, 0);
    if (d < 0)
        return d;
    dent_drop(from);
    struct lx_node *n = node_at(node);
    if ((n->mode & LX_S_IFMT) == LX_S_IFDIR) {
        n->parent = dir;
        n->dent = d;
        node_at(old_dir)->nlink--;
        node_at(dir)->nlink++;
    }
    struct lx_time now = lx_now();
    node_at(old_dir)->mtime = node_at(old_dir)->ctime = now;
    node_at(dir)->mtime = node_at(dir)->ctime = n->ctime = now;
    return 0;
}

void lx_exchange(int32_t a, int32_t b)
{
    int32_t na = dent_at(a)->node, nb = dent_at(b)->node, da = dent_at(a)->dir, db = dent_at(b)->dir;
    dent_at(a)->node = nb;
    dent_at(b)->node = na;
    int dir_a = (node_at(na)->mode & LX_S_IFMT) == LX_S_IFDIR, dir_b = (node_at(nb)->mode & LX_S_IFMT) == LX_S_IFDIR;
    if (dir_a) {
        node_at(na)->parent = db;
        node_at(na)->dent = b;
    }
    if (dir_b) {
        node_at(nb)->parent = da;
        node_at(nb)->dent = a;
    }
    node_at(da)->nlink += (uint32_t)(dir_b - dir_a);
    node_at(db)->nlink += (uint32_t)(dir_a - dir_b);
    struct lx_time now = lx_now();
    node_at(da)->mtime = node_at(da)->ctime = node_at(db)->mtime = node_at(db)->ctime = now;
    node_at(na)->ctime = node_at(nb)->ctime = now;
}

/* ---------------------------------------------------------------- loading the archive */
/* Eight hex digits; -1 if they are not. */
static int64_t hex8(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        uint8_t c = p[i];
        unsigned d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
                     c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
        if (d == 16)
            return -1;
        v = v << 4 | d;
    }
    return (int64_t)v;
}

/* The node for archive path name[0..len) (no leading "/"), made with its
 * parents (directories) if missing; or a negated errno. */
static int32_t place(const char *name, uint32_t len)
{
    int32_t dir = LX_ROOT;
    uint32_t i = 0;
    while (i < len) {
        while (i < len && name[i] == '/')
            i++;
        uint32_t j = i;
        while (j < len && name[j] != '/')
            j++;
        if (j == i)
            break;
        if (j - i > LX_NAME_MAX || (j - i == 1 && name[i] == '.') ||
            (j - i == 2 && name[i] == '.' && name[i + 1] == '.'))
            return j - i == 1 && j == len && dir == LX_ROOT ? LX_ROOT : -LX_EINVAL;     /* "." itself */
        if ((node_at(dir)->mode & LX_S_IFMT) != LX_S_IFDIR)
            return -LX_ENOTDIR;
        int32_t d = lx_dent_find(dir, name + i, j - i), c;
        if (d >= 0) {
            c = dent_at(d)->node;
        } else {
            c = lx_node_new(LX_S_IFDIR | 0755);
            if (c < 0)
                return c;
            node_at(c)->nlink = 2;
            node_at(c)->parent = dir;
            d = dent_add(dir, name + i, j - i, c, 1);
            if (d < 0)
                return d;
            node_at(c)->dent = d;
            node_at(c)->nlink = 2;
            node_at(c)->mtime = node_at(c)->atime = node_at(c)->ctime = (struct lx_time){ 0, 0 };
            node_at(dir)->nlink++;
        }
        dir = c;
        i = j;
    }
    return dir;
}

/* Make the node of a path (see place) a file of `mode`: a directory the
 * archive listed earlier as implied keeps its entries. */
static void set_kind(int32_t n, uint32_t mode)
{
    struct lx_node *node = node_at(n);
    int was_dir = (node->mode & LX_S_IFMT) == LX_S_IFDIR, is_dir = (mode & LX_S_IFMT) == LX_S_IFDIR;
    if (was_dir && !is_dir && n != LX_ROOT && node->first < 0) {
        node_at(node->parent)->nlink--;
        node->nlink = 1;
    }
    node->mode = mode;
}

static void device(const char *path, uint32_t dev)
{
    int32_t n = place(path, (uint32_t)strlen(path));
    if (n >= 0) {
        set_kind(n, LX_S_IFCHR | (dev == LX_DEV_CONSOLE || dev == LX_DEV_BINDER || dev == LX_DEV_INPUT ||
                          dev == LX_DEV_INPUT1 || dev == LX_DEV_FB ? 0600 : 0666));
        if (dev == LX_DEV_PTMX && strlen(path) > sizeof("dev/ptmx") - 1)
            set_kind(n, LX_S_IFCHR);            /* /dev/pts/ptmx: c--------- */
        node_at(n)->dev = dev;
        node_at(n)->size = 0;
    }
}

/* Make `path` (relative to the root, in /dev) a character device of kind
 * dev while the system runs, as devtmpfs adds a device: its node, or
 * -LX_EEXIST if the path names something already. */
int32_t lx_rootfs_device(const char *path, uint32_t dev)
{
    int32_t n = lx_lookup(LX_ROOT, path, 0);
    if (n >= 0)
        return -LX_EEXIST;
    if (n != -LX_ENOENT)
        return n;
    uint32_t dlen = 0, len = (uint32_t)strlen(path);
    for (uint32_t i = 0; i < len; i++)
        if (path[i] == '/')
            dlen = i;
    char dir[LX_NAME_MAX + 8];
    if (!dlen || dlen >= sizeof(dir) || len - dlen - 1 > LX_NAME_MAX)
        return -LX_EINVAL;
    memcpy(dir, path, dlen);
    dir[dlen] = 0;
    int32_t d = lx_lookup(LX_ROOT, dir, 1);
    if (d < 0 || (node_at(d)->mode & LX_S_IFMT) != LX_S_IFDIR)
        return d < 0 ? d : -LX_ENOTDIR;
    n = lx_node_new(LX_S_IFCHR | 0600);
    if (n < 0)
        return n;
    node_at(n)->dev = dev;
    node_at(n)->nlink = 1;
    int32_t e = dent_add(d, path + dlen + 1, len - dlen - 1, n, 0);      /* (the name copied) */
    if (e < 0) {
        node_free(node_at(n));
        return e;
    }
    struct lx_time now = lx_now();
    node_at(d)->mtime = node_at(d)->ctime = now;
    return n;
}

/* Mount file system fs on the directory at path (made if the archive has
 * none): it and what the archive put below it are that file system's. */
static int lx_subdirs(int32_t dir);

static int32_t mount_at(const char *path, int fs, uint32_t mode)
{
    int32_t n = place(path, (uint32_t)strlen(path));
    if (n < 0 || (node_at(n)->mode & LX_S_IFMT) != LX_S_IFDIR)
        return n < 0 ? n : -LX_ENOTDIR;
    node_at(n)->mode = LX_S_IFDIR | mode;
    node_at(n)->fs = (uint32_t)fs;
    for (int32_t d = 0; d < maxdents; d++)
        if (dent_at(d)->node >= 0 && lx_is_below(dent_at(d)->dir, n))
            node_at(dent_at(d)->node)->fs = (uint32_t)fs;
    return n;
}

void lx_mount_dir(int32_t old, int32_t n, int fs)
{
    /* The new directory takes the old one's name; the old one, and what
     * is in it, stay (hidden) for lx_unmount_dir. */
    int32_t d = node_at(old)->dent;
    dent_at(d)->node = n;
    node_at(n)->nlink = node_at(old)->nlink - (uint32_t)lx_subdirs(old);
    node_at(n)->parent = node_at(old)->parent;
    node_at(n)->dent = d;
    node_at(n)->fs = (uint32_t)fs;
    node_at(old)->dent = -1;
}

void lx_unmount_dir(int32_t n, int32_t covered)
{
    int32_t d = node_at(n)->dent;
    lx_dir_unload(n);
    dent_at(d)->node = covered;
    node_at(covered)->dent = d;
    node_at(n)->dent = -1;
    node_at(n)->nlink = 0;
    lx_node_maybe_free(n);
}

int lx_dent_attach(int32_t dir, const char *name, uint32_t len, int32_t node, uint64_t cookie)
{
    struct lx_node *p = node_at(dir);
    if (p->last >= 0 && dent_at(p->last)->cookie >= cookie)
        return -LX_EINVAL;                      /* (listings go by rising cookies) */
    const char *stored;
    int32_t d = dent_take(name, len, 0, &stored);
    if (d < 0)
        return d;
    (*dent_at(d)) = (struct lx_dent){ stored, len, node, dir, -1, p->last, cookie, 1 };
    if (p->last >= 0)
        dent_at(p->last)->next = d;
    else
        p->first = d;
    p->last = d;
    p->entries++;
    if ((node_at(node)->mode & LX_S_IFMT) == LX_S_IFDIR) {
        node_at(node)->parent = dir;
        node_at(node)->dent = d;
    }
    return 0;
}

/* The directories in directory `dir`. */
static int lx_subdirs(int32_t dir)
{
    int k = 0;
    for (int32_t d = node_at(dir)->first; d >= 0; d = dent_at(d)->next)
        k += (node_at(dent_at(d)->node)->mode & LX_S_IFMT) == LX_S_IFDIR;
    return k;
}

void lx_dir_unload(int32_t dir)
{
    while (node_at(dir)->first >= 0) {
        int32_t d = node_at(dir)->first, node = dent_at(d)->node;
        dent_drop(d);
        struct lx_node *n = node_at(node);
        if (!n->opens && !mapped(n) && !is_cwd(node) && lx_dent_of(node) < 0) {    /* (no other name has it) */
            n->nlink = 0;                       /* (a mirror: the disk keeps its links) */
            lx_node_maybe_free(node);
        }
    }
}

int lx_fs_busy(int fs)
{
    for (int32_t i = 0; i < maxnodes; i++)
        if (node_at(i)->mode && lx_node_fs(i) == fs && (node_at(i)->opens || mapped(node_at(i)) || is_cwd(i)))
            return 1;
    return 0;
}

void lx_fs_forget(int fs, int32_t root)
{
    for (int32_t d = 0; d < maxdents; d++)
        if (dent_at(d)->node >= 0 && lx_node_fs(dent_at(d)->dir) == fs)
            dent_drop(d);
    for (int32_t i = 1; i < maxnodes; i++)
        if (node_at(i)->mode && node_at(i)->fs == (uint32_t)fs && i != root) {
            node_at(i)->nlink = 0;
            lx_node_maybe_free(i);
        }
}

int32_t lx_dev_node(const char *path, uint32_t mode, uint32_t gid, uint32_t dev)
{
    int32_t n = place(path, (uint32_t)strlen(path));
    if (n >= 0) {
        set_kind(n, mode);
        node_at(n)->gid = gid;
        node_at(n)->dev = dev;
        node_at(n)->size = 0;
    }
    return n;
}

/* A symbolic link at path (if the archive has no such name) to target. */
static void dev_link(const char *path, const char *target)
{
    int32_t d = lx_lookup(LX_ROOT, path, 0);
    if (d >= 0)
        return;
    int32_t n = place(path, (uint32_t)strlen(path));
    if (n < 0)
        return;
    set_kind(n, LX_S_IFLNK | 0777);
    uint64_t len = strlen(target);
    if (lx_node_resize(node_at(n), len) == 0)
        memcpy(node_at(n)->mem, target, len);
}

/* An upper bound of the nodes the archive makes: one per entry, one per
 * "/" in a name (a directory it may imply), the root, /dev and its
 * devices; or -EINVAL for a malformed archive. */
static int32_t count_nodes(void)
{
    uint64_t n = 27, at = 0;
    while (at + 110 <= archive_size && n < (1u << 24)) {
        const uint8_t *h = archive + at;
        int64_t size = hex8(h + 6 + 8 * 6), namesize = hex8(h + 6 + 8 * 11);
        uint64_t data_at = (at + 110 + (uint64_t)namesize + 3) & ~3ull;
        if (memcmp(h, "070701", 6) != 0 || size < 0 || namesize <= 0 || data_at > archive_size ||
            (uint64_t)size > archive_size - data_at)
            return -LX_EINVAL;
        if (namesize >= 11 && !memcmp(archive + at + 110, "TRAILER!!!", 11))
            break;
        n++;
        for (int64_t i = 0; i < namesize; i++)
            n += archive[at + 110 + (uint64_t)i] == '/';
        at = (data_at + (uint64_t)size + 3) & ~3ull;
    }
    return (int32_t)n;
}

/* Walk the archive into the tables. */
uint64_t lx_vfs_bytes(void)
{
    return vfs_bytes;
}

int lx_fs_init(const char *name)
{
    uint64_t limit = svc_memory_limit();
    vfs_bytes = limit ? limit / 2 / 4096 * 4096 : LX_VFS_NO_LIMIT;
    if (vfs_bytes < LX_VFS_MIN)
        vfs_bytes = LX_VFS_MIN;
    struct petrel_bootfile bf;
    const void *data = NULL;
    uint32_t index = 0;
    while (svc_bootfile(index, &bf, &data) == 0 && strcmp(bf.name, name) != 0)
        index++;
    if (!data || strcmp(bf.name, name) != 0)
        return -LX_ENOENT;
    archive = data;
    archive_size = bf.size;
    archive_mem = svc_mem_bootfile(index);
    int32_t count = count_nodes();
    if (count < 0)
        return count;
    while (maxnodes < count + CHUNK / 4)        /* (the archive's, and room: the tables grow as they fill) */
        if (grow_nodes() || grow_dents())
            return -LX_ENOMEM;
    (*node_at(LX_ROOT)) = (struct lx_node){ .mode = LX_S_IFDIR | 0755, .nlink = 2, .parent = LX_ROOT, .dent = -1,
                                       .first = -1, .last = -1 };
    used_nodes = 1;
    node_hint = 1;
    uint64_t at = 0;
    while (at + 110 <= archive_size) {
        const uint8_t *h = archive + at;
        int64_t f[13];
        if (memcmp(h, "070701", 6) != 0)
            return -LX_EINVAL;
        for (int i = 0; i < 13; i++)
            if ((f[i] = hex8(h + 6 + 8 * i)) < 0)
                return -LX_EINVAL;
        uint64_t mode = (uint64_t)f[1], mtime = (uint64_t)f[5], size = (uint64_t)f[6], namesize = (uint64_t)f[11];
        uint64_t name_at = at + 110, data_at = (name_at + namesize + 3) & ~3ull;
        if (namesize == 0 || name_at + namesize > archive_size || data_at > archive_size ||
            size > archive_size - data_at)
            return -LX_EINVAL;
        const char *nm = (const char *)archive + name_at;
        uint32_t len = (uint32_t)strnlen(nm, namesize);
        if (len == 10 && !memcmp(nm, "TRAILER!!!", 10))
            break;
        int32_t n = place(nm, len);
        if (n < 0)
            return n;
        if (!(mode & LX_S_IFMT))
            mode |= LX_S_IFREG;
        set_kind(n, (uint32_t)mode);
        struct lx_node *node = node_at(n);
        node->size = (mode & LX_S_IFMT) == LX_S_IFDIR ? 0 : size;
        node->data_off = data_at;
        node->atime = node->mtime = node->ctime = (struct lx_time){ (int64_t)mtime, 0 };
        node->uid = (uint32_t)f[2];
        node->gid = (uint32_t)f[3];
        at = (data_at + size + 3) & ~3ull;
    }
    mount_at("dev", LX_FS_DEV, 0755);
    device("dev/null", LX_DEV_NULL);
    device("dev/zero", LX_DEV_ZERO);
    device("dev/full", LX_DEV_FULL);
    device("dev/random", LX_DEV_RANDOM);
    device("dev/urandom", LX_DEV_URANDOM);
    device("dev/console", LX_DEV_CONSOLE);
    device("dev/tty", LX_DEV_TTY);
    device("dev/ptmx", LX_DEV_PTMX);
    device("dev/binder", LX_DEV_BINDER);        /* (binder_linux's devices=binder; more: linux_binder_device) */
    int32_t binder = lx_lookup(LX_ROOT, "dev/binder", 0);
    if (binder < 0 || lx_binder_device_attach(binder, "binder"))
        lx_log("no /dev/binder: error %d", binder < 0 ? binder : -LX_ENOSPC);
    if (lx_evdev_present(0))
        device("dev/input/event0", LX_DEV_INPUT);   /* (devtmpfs's, for the input services' devices) */
    if (lx_evdev_present(1))
        device("dev/input/event1", LX_DEV_INPUT1);
    if (lx_fb_present())
        device("dev/fb0", LX_DEV_FB);               /* (the display service's framebuffer) */
    mount_at("dev/pts", LX_FS_PTS, 0755);
    device("dev/pts/ptmx", LX_DEV_PTMX);        /* devpts's own (mode 0: ptmxmode=000) */
    mount_at("dev/shm", LX_FS_SHM, 01777);
    dev_link("dev/fd", "/proc/self/fd");        /* as udev makes them on Linux */
    dev_link("dev/stdin", "/proc/self/fd/0");
    dev_link("dev/stdout", "/proc/self/fd/1");
    dev_link("dev/stderr", "/proc/self/fd/2");
    int32_t proc = place("proc", 4);
    if (proc >= 0 && (node_at(proc)->mode & LX_S_IFMT) == LX_S_IFDIR) {
        node_at(proc)->mode = LX_S_IFDIR | 0555;
        node_at(proc)->proc = LX_PROC_ROOT;
    }
    return lx_procfs_init();
}

/* ---------------------------------------------------------------- paths */

/* The entry naming node n (a directory's own; another node's first found), or -1. */
static int32_t dent_of(int32_t n)
{
    if ((node_at(n)->mode & LX_S_IFMT) == LX_S_IFDIR)
        return node_at(n)->dent;
    for (int32_t d = 0; d < maxdents; d++)
        if (dent_at(d)->node == n)
            return d;
    return -1;
}

int64_t lx_node_path(int32_t n, char *buf, uint64_t size)
{
    if (!lx_node(n) || size < 2)
        return -LX_ENOENT;
    if (node_at(n)->proc && dent_of(n) < 0)
        return lx_procfs_path(n, buf, size);    /* /proc/PID and below: no entry names them */
    uint64_t at = size - 1;                     /* built from the end */
    buf[at] = 0;
    int32_t cur = n;
    for (int hops = 0; cur != LX_ROOT; hops++) {
        int32_t d = dent_of(cur);
        if (d < 0 || hops > 4096)
            return -LX_ENOENT;                  /* removed */
        if (dent_at(d)->len + 1 > at)
            return -LX_ENAMETOOLONG;
        at -= dent_at(d)->len;
        memcpy(buf + at, dent_at(d)->name, dent_at(d)->len);
        buf[--at] = '/';
        cur = dent_at(d)->dir;
    }
    if (at == size - 1)
        buf[--at] = '/';                        /* the root itself */
    uint64_t len = size - 1 - at;
    memmove(buf, buf + at, len + 1);
    return (int64_t)len;
}
static int32_t resolve(int32_t dir, const char *path, uint64_t plen, int follow, int depth);

/* Follow symbolic link `n` found in directory `dir`. */
static int32_t follow_link(int32_t dir, int32_t n, int depth)
{
    static char proc_targets[8][512];           /* /proc's links, generated: one buffer per depth */
    if (depth >= 40)
        return -LX_ELOOP;
    const char *target;
    uint64_t len;
    if (lx_proc_is_fd(node_at(n)->proc))
        return lx_procfs_fd_target(n);          /* the descriptor's own file, as Linux's magic links */
    if (node_at(n)->proc) {
        if (depth >= 8)
            return -LX_ELOOP;
        len = lx_procfs_link(n, proc_targets[depth], sizeof(proc_targets[depth]));
        target = proc_targets[depth];
    } else {
        len = node_at(n)->size;
        target = (const char *)lx_node_data(node_at(n));
    }
    if (len == 0 || len >= LX_PATH_MAX)
        return -LX_ENOENT;
    return resolve(dir, target, len, 1, depth + 1);
}

/* The node named name[0..len) in directory `cur`, or -ENOENT. */
static int32_t step(int32_t cur, const char *name, uint32_t len)
{
    if (len == 1 && name[0] == '.')
        return cur;
    if (len == 2 && name[0] == '.' && name[1] == '.')
        return node_at(cur)->parent >= 0 ? node_at(cur)->parent : cur;
    if (node_at(cur)->proc)
        return lx_procfs_lookup(cur, name, len);
    int64_t err = lx_data_dir_ready(cur);
    if (err)
        return (int32_t)err;
    int32_t d = lx_dent_find(cur, name, len);
    if (d >= 0 && (err = lx_data_ready(dent_at(d)->node)) != 0)
        return (int32_t)err;                    /* (/data: its file system mounted first) */
    return d >= 0 ? dent_at(d)->node : -LX_ENOENT;
}

/* Resolve path[0..plen) from `dir` (a directory node). */
static int32_t resolve(int32_t dir, const char *path, uint64_t plen, int follow, int depth)
{
    const char *p = path, *end = path + plen;
    int32_t cur = plen && path[0] == '/' ? LX_ROOT : dir;
    while (p < end) {
        while (p < end && *p == '/')
            p++;
        const char *e = p;
        while (e < end && *e != '/')
            e++;
        if (e == p)
            break;
        if (e - p > LX_NAME_MAX)
            return -LX_ENAMETOOLONG;
        if ((node_at(cur)->mode & LX_S_IFMT) != LX_S_IFDIR)
            return -LX_ENOTDIR;
        int dots = (e - p == 1 && p[0] == '.') || (e - p == 2 && p[0] == '.' && p[1] == '.');
        if (!node_at(cur)->nlink && !dots)
            return -LX_ENOENT;                  /* a removed directory has only "." and ".." */
        int32_t next = step(cur, p, (uint32_t)(e - p));
        if (next < 0)
            return next;
        /* A link is followed unless it is the last name, unfollowed, without a "/" after it. */
        if ((node_at(next)->mode & LX_S_IFMT) == LX_S_IFLNK && (follow || e < end)) {
            next = follow_link(cur, next, depth);
            if (next < 0)
                return next;
        }
        cur = next;
        p = e;
    }
    /* "name/" must be a directory. */
    if (plen && path[plen - 1] == '/' && (node_at(cur)->mode & LX_S_IFMT) != LX_S_IFDIR)
        return -LX_ENOTDIR;
    return cur;
}

int32_t lx_lookup(int32_t dir, const char *path, int follow)
{
    if (!maxnodes || !path[0])
        return -LX_ENOENT;
    uint64_t len = strnlen(path, LX_PATH_MAX);
    if (len >= LX_PATH_MAX)
        return -LX_ENAMETOOLONG;
    return resolve(dir, path, len, follow, 0);
}

int lx_lookup_last(int32_t dir, const char *path, struct lx_last *l)
{
    uint64_t len = strnlen(path, LX_PATH_MAX);
    if (!maxnodes || len == 0)
        return -LX_ENOENT;
    if (len >= LX_PATH_MAX)
        return -LX_ENAMETOOLONG;
    uint64_t end = len;
    while (end > 0 && path[end - 1] == '/')
        end--;
    l->slash = end < len;
    uint64_t start = end;
    while (start > 0 && path[start - 1] != '/')
        start--;
    l->name = path + start;
    l->len = (uint32_t)(end - start);
    l->dent = -1;
    if (end == 0) {                             /* "/" */
        l->dir = LX_ROOT;
        l->type = LX_LAST_ROOT;
        l->node = LX_ROOT;
        return 0;
    }
    if (l->len > LX_NAME_MAX)
        return -LX_ENAMETOOLONG;
    int32_t parent = start == 0 ? dir : resolve(dir, path, start, 1, 0);
    if (parent < 0)
        return parent;
    if ((node_at(parent)->mode & LX_S_IFMT) != LX_S_IFDIR)
        return -LX_ENOTDIR;
    l->dir = parent;
    l->type = l->len == 1 && l->name[0] == '.' ? LX_LAST_DOT :
              l->len == 2 && l->name[0] == '.' && l->name[1] == '.' ? LX_LAST_DOTDOT : LX_LAST_NORM;
    l->node = -LX_ENOENT;
    if (l->type != LX_LAST_NORM) {
        l->node = step(parent, l->name, l->len);
        return 0;
    }
    if (!node_at(parent)->nlink)
        return 0;                               /* a removed directory: nothing in it, nothing made */
    if (node_at(parent)->proc) {
        l->node = lx_procfs_lookup(parent, l->name, l->len);
        return 0;
    }
    int64_t err = lx_data_dir_ready(parent);
    if (err)
        return (int)err;
    l->dent = lx_dent_find(parent, l->name, l->len);
    if (l->dent >= 0 && (err = lx_data_ready(dent_at(l->dent)->node)) != 0)
        return (int)err;                        /* (/data: its file system mounted first) */
    l->node = l->dent >= 0 ? dent_at(l->dent)->node : -LX_ENOENT;
    return 0;
}

int32_t lx_follow_last(struct lx_last *l, int depth)
{
    return follow_link(l->dir, l->node, depth);
}

int lx_is_below(int32_t n, int32_t dir)
{
    for (int guard = 0; guard < 4096; guard++) {
        if (n == dir)
            return 1;
        if (n == LX_ROOT || n < 0)
            return 0;
        n = node_at(n)->parent;
    }
    return 0;
}
