/*
 * The file service (idl/fs.toml), written once against svc.h.
 *
 * /boot holds the boot image's files, read in place (never copied), in
 * the spirit of the OKL4 paper's in-memory file system. /tmp is a
 * writable file system whose every byte — inodes, block map, data —
 * lives in the service's durable state (svc_state): one flat region with
 * no pointers, so a user-placed instance restarted by its supervisor
 * finds every file written before the crash. Open files are not
 * durable: after a restart, clients open again.
 *
 * Clients. A client is a process, known by the process id the kernel
 * puts in every request (call->pid): it cannot forge it. Each client has
 * quotas, counted from the tables themselves (no table of clients): at
 * most FS_CLIENT_OPEN open files, FS_CLIENT_INODES files and directories it
 * created, FS_CLIENT_BLOCKS data blocks in the files it owns; past one,
 * E_LIMIT, while other clients go on. Descriptors are numbered per
 * client (its lowest free number), so one client's number names nothing
 * of another's.
 *
 * Ownership. Every /tmp inode records its creator. Only the owner may
 * write, truncate, unlink or rename a file, or add entries to its
 * directory (/tmp itself is everyone's to add to). Other clients may
 * not open a file at all, unless it was created with FS_O_SHARED: then
 * they may open it for reading. Names, kinds and sizes (readdir, stat)
 * are visible to all; /boot is readable by all. Unlinking a shared file
 * closes other clients' opens of it.
 *
 * Departed clients. The service environment does not say when a client
 * process ends. Its open files stay until the table of MAX_OPEN is full:
 * then the opens of every client that ended are closed (svc_client_alive)
 * before a new one is refused. Its /tmp files stay (charged to it,
 * removable by nobody, until a reboot), as a file outlives its writer.
 */
#include "fs_if.h"
#include "fs_abi.h"
#include "pstring.h"

#define FS_MAGIC        0x5346504c45525450ull   /* "PTRELPFS" */
#define STATE_SIZE      (1024 * 1024)
#define MAX_INODES      128
#define FILE_BLOCKS     32                      /* 128 KiB per file */
#define BLOCK           4096
#define NAME_MAX        48
#define MAX_OPEN        64
#define TMP_ROOT        0                       /* inode of /tmp */

/* Per-client quotas are in fs_abi.h. A client's descriptor numbers are bits of a word. */
_Static_assert(FS_CLIENT_OPEN <= 32 && FS_CLIENT_OPEN < MAX_OPEN && FS_CLIENT_INODES < MAX_INODES &&
               FS_CLIENT_BLOCKS < 256, "a quota is a part of its table");

struct inode {
    char name[NAME_MAX];
    int16_t parent;
    uint8_t kind;                               /* 0 free, FS_KIND_FILE, FS_KIND_DIR */
    uint8_t shared;                             /* others may read it (FS_O_SHARED) */
    uint32_t owner;                             /* the creator's process id; 0: /tmp itself */
    uint64_t size;
    uint16_t blocks[FILE_BLOCKS];               /* 0: none; else block number */
};

struct fs_state {
    uint64_t magic;
    uint32_t nblocks;
    uint32_t data_page;                         /* first page of block 1 */
    struct inode inodes[MAX_INODES];
    uint8_t used[256];                          /* block map */
};

struct ofile {
    uint32_t pid;                               /* the client that opened it */
    uint32_t fd;                                /* its number for that client; 0: a free slot */
    int32_t node;                               /* >= 0: /tmp inode; < 0: boot file -1-node */
    uint32_t flags;
    uint64_t pos;
};

static struct fs_state *st;
static struct ofile *open_files;

/* Set up (or find again) the durable state and the open-file table. */
static int ready(void)
{
    if (st)
        return 0;
    int fresh;
    struct fs_state *s = svc_state(STATE_SIZE, &fresh);
    open_files = svc_alloc(sizeof(struct ofile) * MAX_OPEN);
    if (!s || !open_files)
        return SVC_E_NOMEM;
    if (s->magic != FS_MAGIC) {
        memset(s, 0, sizeof(*s));
        s->data_page = (sizeof(*s) + BLOCK - 1) / BLOCK;
        s->nblocks = STATE_SIZE / BLOCK - s->data_page;
        if (s->nblocks > sizeof(s->used))
            s->nblocks = sizeof(s->used);
        s->inodes[TMP_ROOT].kind = FS_KIND_DIR;
        s->inodes[TMP_ROOT].parent = -1;
        memcpy(s->inodes[TMP_ROOT].name, "tmp", 4);
        s->magic = FS_MAGIC;
    }
    st = s;
    return 0;
}

static uint8_t *block_data(uint16_t b)
{
    return (uint8_t *)st + (uint64_t)(st->data_page + b - 1) * BLOCK;
}

/* ---------------------------------------------------------------- paths */

enum { P_ROOT, P_BOOTDIR, P_BOOT, P_TMP };

struct where {
    int kind;
    int node;               /* P_TMP: inode; P_BOOT: file index */
    int parent;             /* P_TMP lookups that failed at the last step: its directory */
    char last[NAME_MAX];    /* ... and the missing name */
};

static int component_ok(const char *c, size_t n)
{
    return n > 0 && n < NAME_MAX && !(n == 1 && c[0] == '.') && !(n == 2 && c[0] == '.' && c[1] == '.');
}

static int child(int dir, const char *name, size_t n)
{
    for (int i = 0; i < MAX_INODES; i++) {
        struct inode *in = &st->inodes[i];
        if (in->kind && in->parent == dir && strlen(in->name) == n && !memcmp(in->name, name, n))
            return i;
    }
    return -1;
}

/* Resolve an absolute path; SVC_E_NOENT with w->parent/last set when only
 * the last component of a /tmp path is missing. */
static int resolve(const uint8_t *path, uint32_t len, struct where *w)
{
    char p[97];
    if (len == 0 || len > 96 || path[0] != '/')
        return SVC_E_INVAL;
    memcpy(p, path, len);
    p[len] = 0;
    if (strlen(p) != len)
        return SVC_E_INVAL;
    while (len > 1 && p[len - 1] == '/')
        p[--len] = 0;
    w->parent = -1;
    if (!strcmp(p, "/")) {
        w->kind = P_ROOT;
        return 0;
    }
    if (!strcmp(p, "/boot")) {
        w->kind = P_BOOTDIR;
        return 0;
    }
    if (!strncmp(p, "/boot/", 6)) {
        struct petrel_bootfile bf;
        const void *data;
        for (uint32_t i = 0; svc_bootfile(i, &bf, &data) == 0; i++) {
            if (!strcmp(bf.name, p + 6)) {
                w->kind = P_BOOT;
                w->node = (int)i;
                return 0;
            }
        }
        return SVC_E_NOENT;
    }
    if (strncmp(p, "/tmp", 4) != 0 || (p[4] && p[4] != '/'))
        return SVC_E_NOENT;
    int node = TMP_ROOT;
    const char *c = p + 4;
    while (*c == '/') {
        c++;
        size_t n = 0;
        while (c[n] && c[n] != '/')
            n++;
        if (!component_ok(c, n))
            return SVC_E_INVAL;
        int next = st->inodes[node].kind == FS_KIND_DIR ? child(node, c, n) : -1;
        if (next < 0) {
            if (c[n] == 0 && st->inodes[node].kind == FS_KIND_DIR) {
                w->parent = node;
                memcpy(w->last, c, n);
                w->last[n] = 0;
            }
            return SVC_E_NOENT;
        }
        node = next;
        c += n;
    }
    w->kind = P_TMP;
    w->node = node;
    return 0;
}

/* ---------------------------------------------------------------- clients */

/* The client making a request: the process id the kernel gave (32 bits). */
static uint32_t client(struct svc_call *call)
{
    return (uint32_t)call->pid;
}

/* Does client `me` own /tmp inode `node` (may write, truncate, unlink or rename it)? */
static int owns(int node, uint32_t me)
{
    return st->inodes[node].owner == me;
}

/* May client `me` add entries to directory `dir`? /tmp itself: everyone. */
static int may_add(int dir, uint32_t me)
{
    return dir == TMP_ROOT || owns(dir, me);
}

/* How many inodes client `me` owns. */
static int owned_inodes(uint32_t me)
{
    int n = 0;
    for (int i = 0; i < MAX_INODES; i++)
        n += st->inodes[i].kind && st->inodes[i].owner == me;
    return n;
}

/* How many data blocks the files of client `me` hold. */
static int owned_blocks(uint32_t me)
{
    int n = 0;
    for (int i = 0; i < MAX_INODES; i++)
        if (st->inodes[i].kind == FS_KIND_FILE && st->inodes[i].owner == me)
            for (int b = 0; b < FILE_BLOCKS; b++)
                n += st->inodes[i].blocks[b] != 0;
    return n;
}

/* A new inode `name` in directory `parent`, owned by client `me`: E_PERM
 * if the directory is not its to add to, E_LIMIT at its quota, E_NOMEM
 * when the table is full. */
static int new_inode(int parent, const char *name, uint8_t kind, uint32_t me)
{
    if (!may_add(parent, me))
        return SVC_E_PERM;
    if (owned_inodes(me) >= FS_CLIENT_INODES)
        return SVC_E_LIMIT;
    for (int i = 1; i < MAX_INODES; i++) {
        if (!st->inodes[i].kind) {
            struct inode *in = &st->inodes[i];
            memset(in, 0, sizeof(*in));
            memcpy(in->name, name, strlen(name) + 1);
            in->parent = (int16_t)parent;
            in->kind = kind;
            in->owner = me;
            return i;
        }
    }
    return SVC_E_NOMEM;
}

static void truncate(struct inode *in)
{
    for (int b = 0; b < FILE_BLOCKS; b++) {
        if (in->blocks[b])
            st->used[in->blocks[b] - 1] = 0;
        in->blocks[b] = 0;
    }
    in->size = 0;
}

/* A free data block, zeroed, into *b; E_NOMEM if none is left. */
static int alloc_block(uint16_t *b)
{
    for (uint32_t i = 0; i < st->nblocks; i++) {
        if (!st->used[i]) {
            st->used[i] = 1;
            *b = (uint16_t)(i + 1);
            memset(block_data(*b), 0, BLOCK);
            return 0;
        }
    }
    return SVC_E_NOMEM;
}

/* Client `me`'s open file numbered `fd`, or NULL. */
static struct ofile *find_open(uint32_t me, uint32_t fd)
{
    for (int i = 0; i < MAX_OPEN; i++)
        if (fd && open_files[i].fd == fd && open_files[i].pid == me)
            return &open_files[i];
    return NULL;
}

/* A free slot of the open-file table for client `me`, and in *fd its
 * lowest free descriptor number: the slot's index, or E_LIMIT at the
 * client's quota, E_BUSY when the table is full. */
static int open_slot(uint32_t me, uint32_t *fd)
{
    int held = 0, slot = -1;
    uint32_t taken = 0;                         /* bit n: descriptor n + 1 is in use */
    for (int i = 0; i < MAX_OPEN; i++) {
        if (!open_files[i].fd && slot < 0)
            slot = i;
        else if (open_files[i].fd && open_files[i].pid == me) {
            held++;
            taken |= 1u << (open_files[i].fd - 1);
        }
    }
    if (held >= FS_CLIENT_OPEN)
        return SVC_E_LIMIT;
    for (int i = 0; slot < 0 && i < MAX_OPEN; i++) {
        /* (the table full: the opens of clients that ended are closed, the first free taken) */
        uint32_t gone = open_files[i].pid;
        if (open_files[i].fd && !svc_client_alive(gone)) {
            for (int k = i; k < MAX_OPEN; k++)
                if (open_files[k].pid == gone)
                    open_files[k].fd = 0;
            slot = i;
        }
    }
    if (slot < 0)
        return SVC_E_BUSY;
    for (*fd = 1; taken & (1u << (*fd - 1)); (*fd)++)
        ;
    return slot;
}

/* Before /tmp inode `node` goes away (unlink, or replaced by a rename):
 * E_BUSY if its owner `me` has it open; other clients' opens of it
 * (readers of a shared file) are closed, their descriptors refused. */
static int close_others(int node, uint32_t me)
{
    for (int i = 0; i < MAX_OPEN; i++)
        if (open_files[i].fd && open_files[i].node == node && open_files[i].pid == me)
            return SVC_E_BUSY;
    for (int i = 0; i < MAX_OPEN; i++)
        if (open_files[i].node == node)
            open_files[i].fd = 0;
    return 0;
}

/* ---------------------------------------------------------------- handlers */

/* The state ready and a path resolved. */
static int lookup(const uint8_t *path, uint32_t len, struct where *w)
{
    int err = ready();
    return err ? err : resolve(path, len, w);
}

/* The caller's open file `fd`, or NULL. */
static struct ofile *file_of(struct svc_call *call, uint32_t fd)
{
    return ready() ? NULL : find_open(client(call), fd);
}

static int64_t fs_open_h(struct svc_call *call, const uint8_t *path, uint32_t path_len, uint32_t flags, uint32_t *fd)
{
    struct where w;
    uint32_t me = client(call);
    uint32_t changes = FS_O_WRITE | FS_O_TRUNC | FS_O_APPEND;
    int err = ready();
    if (err)
        return err;
    if (flags & ~(FS_O_READ | FS_O_CREATE | FS_O_SHARED | changes) || !(flags & (FS_O_READ | FS_O_WRITE)))
        return SVC_E_INVAL;
    int slot = open_slot(me, fd);
    if (slot < 0)
        return slot;
    err = resolve(path, path_len, &w);
    if (err == SVC_E_NOENT && (flags & FS_O_CREATE) && w.parent >= 0) {
        int n = new_inode(w.parent, w.last, FS_KIND_FILE, me);
        if (n < 0)
            return n;
        st->inodes[n].shared = (flags & FS_O_SHARED) != 0;
        w.kind = P_TMP;
        w.node = n;
        err = 0;
    }
    if (err)
        return err;
    if (w.kind == P_ROOT || w.kind == P_BOOTDIR || (w.kind == P_TMP && st->inodes[w.node].kind == FS_KIND_DIR))
        return (flags & FS_O_WRITE) ? SVC_E_PERM : SVC_E_INVAL;
    if (w.kind == P_BOOT && (flags & changes))
        return SVC_E_PERM;
    if (w.kind == P_TMP && !owns(w.node, me) && (!st->inodes[w.node].shared || (flags & changes)))
        return SVC_E_PERM;              /* another client's file: only shared, only to read */
    struct ofile *f = &open_files[slot];
    f->pid = me;
    f->fd = *fd;
    f->node = w.kind == P_BOOT ? -1 - w.node : w.node;
    f->flags = flags;
    f->pos = 0;
    if (w.kind == P_TMP && (flags & FS_O_TRUNC) && (flags & FS_O_WRITE))
        truncate(&st->inodes[w.node]);
    return 0;
}

static int64_t fs_close_h(struct svc_call *call, uint32_t fd)
{
    struct ofile *f = file_of(call, fd);
    if (!f)
        return -E_BADHANDLE;
    f->fd = 0;
    return 0;
}

static int64_t fs_read_h(struct svc_call *call, uint32_t fd, uint64_t buf, uint64_t buf_len, uint64_t *count)
{
    struct ofile *f = file_of(call, fd);
    if (!f)
        return -E_BADHANDLE;
    if (!(f->flags & FS_O_READ))
        return SVC_E_PERM;
    uint64_t size, done = 0;
    if (f->node < 0) {
        struct petrel_bootfile bf;
        const void *data;
        if (svc_bootfile((uint32_t)(-1 - f->node), &bf, &data))
            return SVC_E_NOENT;
        size = bf.size;
        if (f->pos < size) {
            done = size - f->pos < buf_len ? size - f->pos : buf_len;
            if (svc_copy_out(call, buf, (const uint8_t *)data + f->pos, done))
                return SVC_E_FAULT;
        }
    } else {
        struct inode *in = &st->inodes[f->node];
        size = in->size;
        while (f->pos + done < size && done < buf_len) {
            uint64_t at = f->pos + done, off = at % BLOCK;
            uint64_t n = BLOCK - off;
            if (n > size - at)
                n = size - at;
            if (n > buf_len - done)
                n = buf_len - done;
            uint16_t b = in->blocks[at / BLOCK];
            static const uint8_t zeros[BLOCK];
            if (svc_copy_out(call, buf + done, b ? block_data(b) + off : zeros + off, n))
                return SVC_E_FAULT;
            done += n;
        }
    }
    f->pos += done;
    *count = done;
    return 0;
}

static int64_t fs_write_h(struct svc_call *call, uint32_t fd, uint64_t buf, uint64_t buf_len, uint64_t *count)
{
    struct ofile *f = file_of(call, fd);
    if (!f)
        return -E_BADHANDLE;
    if (!(f->flags & FS_O_WRITE) || f->node < 0)
        return SVC_E_PERM;
    struct inode *in = &st->inodes[f->node];
    if (f->flags & FS_O_APPEND)
        f->pos = in->size;
    if (f->pos + buf_len < f->pos || f->pos + buf_len > (uint64_t)FILE_BLOCKS * BLOCK)
        return SVC_E_RANGE;
    uint64_t done = 0;
    int err = 0, quota = -1;            /* blocks the owner may still take, counted when first needed */
    while (done < buf_len) {
        uint64_t at = f->pos + done, off = at % BLOCK, n = BLOCK - off;
        if (n > buf_len - done)
            n = buf_len - done;
        uint16_t *b = &in->blocks[at / BLOCK];
        if (!*b) {
            if (quota < 0)
                quota = FS_CLIENT_BLOCKS - owned_blocks(in->owner);
            err = quota > 0 ? alloc_block(b) : SVC_E_LIMIT;
            if (err)
                break;                  /* what was written so far counts */
            quota--;
        }
        if (svc_copy_in(call, block_data(*b) + off, buf + done, n))
            return SVC_E_FAULT;
        done += n;
        if (f->pos + done > in->size)
            in->size = f->pos + done;
    }
    if (err && !done)
        return err;
    f->pos += done;
    *count = done;
    return 0;
}

static int64_t fs_seek_h(struct svc_call *call, uint32_t fd, int64_t offset, uint32_t whence, uint64_t *position)
{
    struct ofile *f = file_of(call, fd);
    if (!f)
        return -E_BADHANDLE;
    int64_t base;
    if (whence == 0)
        base = 0;
    else if (whence == 1)
        base = (int64_t)f->pos;
    else if (whence == 2) {
        struct petrel_bootfile bf;
        const void *data;
        if (f->node < 0)
            base = svc_bootfile((uint32_t)(-1 - f->node), &bf, &data) ? 0 : (int64_t)bf.size;
        else
            base = (int64_t)st->inodes[f->node].size;
    } else
        return SVC_E_INVAL;
    if ((offset < 0 && base + offset < 0) || (offset > 0 && base + offset < base))
        return SVC_E_INVAL;
    f->pos = (uint64_t)(base + offset);
    *position = f->pos;
    return 0;
}

static int64_t fs_stat_h(struct svc_call *call, const uint8_t *path, uint32_t path_len, uint64_t *size,
                         uint32_t *kind, uint32_t *writable)
{
    struct where w;
    int err = lookup(path, path_len, &w);
    if (err)
        return err;
    *size = 0;
    *writable = 0;
    *kind = FS_KIND_DIR;
    if (w.kind == P_BOOT) {
        struct petrel_bootfile bf;
        const void *data;
        svc_bootfile((uint32_t)w.node, &bf, &data);
        *size = bf.size;
        *kind = FS_KIND_FILE;
    } else if (w.kind == P_TMP) {
        *size = st->inodes[w.node].size;
        *kind = st->inodes[w.node].kind;
        *writable = *kind == FS_KIND_DIR ? may_add(w.node, client(call)) : owns(w.node, client(call));
    }
    return 0;
}

static int64_t fs_readdir_h(struct svc_call *call, const uint8_t *path, uint32_t path_len, uint32_t index,
                            uint8_t *name, uint32_t *name_len, uint32_t *kind)
{
    struct where w;
    int err = lookup(path, path_len, &w);
    if (err)
        return err;
    const char *found = NULL;
    if (w.kind == P_ROOT) {
        found = index == 0 ? "boot" : index == 1 ? "tmp" : NULL;
        *kind = FS_KIND_DIR;
    } else if (w.kind == P_BOOTDIR) {
        static struct petrel_bootfile bf;
        const void *data;
        if (svc_bootfile(index, &bf, &data) == 0)
            found = bf.name;
        *kind = FS_KIND_FILE;
    } else if (w.kind == P_TMP && st->inodes[w.node].kind == FS_KIND_DIR) {
        for (int i = 0, seen = 0; i < MAX_INODES && !found; i++)
            if (i != TMP_ROOT && st->inodes[i].kind && st->inodes[i].parent == w.node && seen++ == (int)index) {
                found = st->inodes[i].name;
                *kind = st->inodes[i].kind;
            }
    } else {
        return SVC_E_INVAL;
    }
    if (!found)
        return SVC_E_NOENT;
    *name_len = (uint32_t)strnlen(found, 48);
    memcpy(name, found, *name_len);
    return 0;
}

static int64_t fs_mkdir_h(struct svc_call *call, const uint8_t *path, uint32_t path_len)
{
    struct where w;
    int err = lookup(path, path_len, &w);
    if (!err)
        return SVC_E_BUSY;
    if (err != SVC_E_NOENT || w.parent < 0)
        return err == SVC_E_NOENT ? SVC_E_PERM : err;
    int n = new_inode(w.parent, w.last, FS_KIND_DIR, client(call));
    return n < 0 ? n : 0;
}

static int64_t fs_unlink_h(struct svc_call *call, const uint8_t *path, uint32_t path_len)
{
    struct where w;
    int err = lookup(path, path_len, &w);
    if (err)
        return err;
    if (w.kind != P_TMP || w.node == TMP_ROOT || !owns(w.node, client(call)))
        return SVC_E_PERM;
    struct inode *in = &st->inodes[w.node];
    if (in->kind == FS_KIND_DIR)
        for (int i = 0; i < MAX_INODES; i++)
            if (st->inodes[i].kind && st->inodes[i].parent == w.node && i != w.node)
                return SVC_E_BUSY;
    err = close_others(w.node, client(call));
    if (err)
        return err;
    truncate(in);
    in->kind = 0;
    return 0;
}

static int64_t fs_rename_h(struct svc_call *call, const uint8_t *from, uint32_t from_len, const uint8_t *to,
                           uint32_t to_len)
{
    struct where a, b;
    uint32_t me = client(call);
    int err = lookup(from, from_len, &a);
    if (err)
        return err;
    if (a.kind != P_TMP || a.node == TMP_ROOT || !owns(a.node, me))
        return SVC_E_PERM;
    int replaced = -1;                  /* a file at `to` that goes */
    err = resolve(to, to_len, &b);
    if (err == 0) {
        if (b.kind != P_TMP || st->inodes[b.node].kind != FS_KIND_FILE || st->inodes[a.node].kind != FS_KIND_FILE)
            return SVC_E_BUSY;
        if (b.node == a.node)
            return 0;
        if (!owns(b.node, me))
            return SVC_E_PERM;
        replaced = b.node;
        b.parent = st->inodes[b.node].parent;
        memcpy(b.last, st->inodes[b.node].name, NAME_MAX);
    } else if (err != SVC_E_NOENT || b.parent < 0) {
        return err == SVC_E_NOENT ? SVC_E_PERM : err;
    }
    if (!may_add(b.parent, me))
        return SVC_E_PERM;
    for (int p = b.parent; p >= 0; p = st->inodes[p].parent)
        if (p == a.node)
            return SVC_E_INVAL;         /* a directory into itself */
    if (replaced >= 0) {
        err = close_others(replaced, me);
        if (err)
            return err;
        truncate(&st->inodes[replaced]);
        st->inodes[replaced].kind = 0;
    }
    st->inodes[a.node].parent = (int16_t)b.parent;
    memcpy(st->inodes[a.node].name, b.last, NAME_MAX);
    return 0;
}

static int64_t fs_crash_h(struct svc_call *call)
{
    return svc_crash_for_testing();
}

/* The handlers: the generated skeleton (fs_service, fs_fast) calls them. */
const struct fs_ops fs_ops = {
    fs_open_h, fs_close_h, fs_read_h, fs_write_h, fs_seek_h, fs_stat_h, fs_readdir_h,
    fs_mkdir_h, fs_unlink_h, fs_rename_h, fs_crash_h,
};
