/*
 * The file service (idl/fs.toml), written once against svc.h.
 *
 * /boot holds the boot image's files, read in place (never copied), in
 * the spirit of the OKL4 paper's in-memory file system. /tmp is a
 * writable file system whose every byte — inodes, block map, data —
 * lives in the service's durable state (svc_state): one flat region with
 * no pointers, so a user-placed instance restarted by its supervisor
 * finds every file written before the crash. Open files are per client
 * process (a descriptor is only valid for the process that opened it)
 * and are not durable: after a restart, clients open again.
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

struct inode {
    char name[NAME_MAX];
    int16_t parent;
    uint8_t kind;                               /* 0 free, FS_KIND_FILE, FS_KIND_DIR */
    uint8_t pad[5];
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
    uint64_t pid;
    int32_t node;                               /* >= 0: /tmp inode; < 0: boot file -1-node */
    uint32_t flags;
    uint64_t pos;
    uint8_t used;
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

static int new_inode(int parent, const char *name, uint8_t kind)
{
    for (int i = 1; i < MAX_INODES; i++) {
        if (!st->inodes[i].kind) {
            struct inode *in = &st->inodes[i];
            memset(in, 0, sizeof(*in));
            memcpy(in->name, name, strlen(name) + 1);
            in->parent = (int16_t)parent;
            in->kind = kind;
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

static int is_open(int node)
{
    for (int i = 0; i < MAX_OPEN; i++)
        if (open_files[i].used && open_files[i].node == node)
            return 1;
    return 0;
}

/* ---------------------------------------------------------------- handlers */

/* The state ready and a path resolved. */
static int lookup(const uint8_t *path, uint32_t len, struct where *w)
{
    int err = ready();
    return err ? err : resolve(path, len, w);
}

static struct ofile *file_of(struct svc_call *call, uint32_t fd)
{
    if (fd == 0 || fd > MAX_OPEN)
        return NULL;
    struct ofile *f = &open_files[fd - 1];
    return f->used && f->pid == call->pid ? f : NULL;
}

static int64_t fs_open_h(struct svc_call *call, const uint8_t *path, uint32_t path_len, uint32_t flags, uint32_t *fd)
{
    struct where w;
    int err = ready();
    if (err)
        return err;
    if (flags & ~(FS_O_READ | FS_O_WRITE | FS_O_CREATE | FS_O_TRUNC | FS_O_APPEND) || !(flags & (FS_O_READ | FS_O_WRITE)))
        return SVC_E_INVAL;
    err = resolve(path, path_len, &w);
    if (err == SVC_E_NOENT && (flags & FS_O_CREATE) && w.parent >= 0) {
        int n = new_inode(w.parent, w.last, FS_KIND_FILE);
        if (n < 0)
            return n;
        w.kind = P_TMP;
        w.node = n;
        err = 0;
    }
    if (err)
        return err;
    if (w.kind == P_ROOT || w.kind == P_BOOTDIR || (w.kind == P_TMP && st->inodes[w.node].kind == FS_KIND_DIR))
        return (flags & FS_O_WRITE) ? SVC_E_PERM : SVC_E_INVAL;
    if (w.kind == P_BOOT && (flags & (FS_O_WRITE | FS_O_TRUNC | FS_O_APPEND)))
        return SVC_E_PERM;
    for (int i = 0; i < MAX_OPEN; i++) {
        if (!open_files[i].used) {
            struct ofile *f = &open_files[i];
            f->used = 1;
            f->pid = call->pid;
            f->node = w.kind == P_BOOT ? -1 - w.node : w.node;
            f->flags = flags;
            f->pos = 0;
            if (w.kind == P_TMP && (flags & FS_O_TRUNC) && (flags & FS_O_WRITE))
                truncate(&st->inodes[w.node]);
            *fd = (uint32_t)i + 1;
            return 0;
        }
    }
    return SVC_E_BUSY;
}

static int64_t fs_close_h(struct svc_call *call, uint32_t fd)
{
    if (ready() || !file_of(call, fd))
        return -E_BADHANDLE;
    open_files[fd - 1].used = 0;
    return 0;
}

static int64_t fs_read_h(struct svc_call *call, uint32_t fd, uint64_t buf, uint64_t buf_len, uint64_t *count)
{
    struct ofile *f = ready() ? NULL : file_of(call, fd);
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
    struct ofile *f = ready() ? NULL : file_of(call, fd);
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
    while (done < buf_len) {
        uint64_t at = f->pos + done, off = at % BLOCK, n = BLOCK - off;
        if (n > buf_len - done)
            n = buf_len - done;
        uint16_t *b = &in->blocks[at / BLOCK];
        if (!*b) {
            for (uint32_t i = 0; i < st->nblocks && !*b; i++)
                if (!st->used[i]) {
                    st->used[i] = 1;
                    *b = (uint16_t)(i + 1);
                    memset(block_data(*b), 0, BLOCK);
                }
            if (!*b)
                return done ? 0 : SVC_E_NOMEM;
        }
        if (svc_copy_in(call, block_data(*b) + off, buf + done, n))
            return SVC_E_FAULT;
        done += n;
        if (f->pos + done > in->size)
            in->size = f->pos + done;
    }
    f->pos += done;
    *count = done;
    return 0;
}

static int64_t fs_seek_h(struct svc_call *call, uint32_t fd, int64_t offset, uint32_t whence, uint64_t *position)
{
    struct ofile *f = ready() ? NULL : file_of(call, fd);
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
        *writable = 1;
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
    int n = new_inode(w.parent, w.last, FS_KIND_DIR);
    return n < 0 ? n : 0;
}

static int64_t fs_unlink_h(struct svc_call *call, const uint8_t *path, uint32_t path_len)
{
    struct where w;
    int err = lookup(path, path_len, &w);
    if (err)
        return err;
    if (w.kind != P_TMP || w.node == TMP_ROOT)
        return SVC_E_PERM;
    if (is_open(w.node))
        return SVC_E_BUSY;
    struct inode *in = &st->inodes[w.node];
    if (in->kind == FS_KIND_DIR)
        for (int i = 0; i < MAX_INODES; i++)
            if (st->inodes[i].kind && st->inodes[i].parent == w.node && i != w.node)
                return SVC_E_BUSY;
    truncate(in);
    in->kind = 0;
    return 0;
}

static int64_t fs_rename_h(struct svc_call *call, const uint8_t *from, uint32_t from_len, const uint8_t *to,
                           uint32_t to_len)
{
    struct where a, b;
    int err = lookup(from, from_len, &a);
    if (err)
        return err;
    if (a.kind != P_TMP || a.node == TMP_ROOT)
        return SVC_E_PERM;
    err = resolve(to, to_len, &b);
    if (err == 0) {
        if (b.kind != P_TMP || st->inodes[b.node].kind != FS_KIND_FILE || st->inodes[a.node].kind != FS_KIND_FILE)
            return SVC_E_BUSY;
        if (b.node == a.node)
            return 0;
        if (is_open(b.node))
            return SVC_E_BUSY;
        b.parent = st->inodes[b.node].parent;
        memcpy(b.last, st->inodes[b.node].name, NAME_MAX);
        truncate(&st->inodes[b.node]);
        st->inodes[b.node].kind = 0;
    } else if (err != SVC_E_NOENT || b.parent < 0) {
        return err == SVC_E_NOENT ? SVC_E_PERM : err;
    }
    for (int p = b.parent; p >= 0; p = st->inodes[p].parent)
        if (p == a.node)
            return SVC_E_INVAL;         /* a directory into itself */
    st->inodes[a.node].parent = (int16_t)b.parent;
    memcpy(st->inodes[a.node].name, b.last, NAME_MAX);
    return 0;
}

static int64_t fs_crash_h(struct svc_call *call)
{
    return svc_crash_for_testing();
}

static const struct fs_ops ops = {
    fs_open_h, fs_close_h, fs_read_h, fs_write_h, fs_seek_h, fs_stat_h, fs_readdir_h,
    fs_mkdir_h, fs_unlink_h, fs_rename_h, fs_crash_h,
};

void fs_service(struct svc_call *call)
{
    fs_dispatch(&ops, call);
}
