/* Drives lib/ext2.c on the host for tests/host/test_ext2.py.
 *   ext2drive IMAGE tree
 *       mount IMAGE and print every file below the root, a line each:
 *       path, type, mode (octal), uid, gid, size, links, mtime, and the
 *       CRC-32 (zlib's) of a file's bytes or a link's target (directories: -)
 *   ext2drive IMAGE cat PATH
 *       the bytes of the file at PATH on stdout
 *   ext2drive IMAGE ops [again SEED]
 *       mount IMAGE writable and apply the operations of stdin, a line
 *       each, printing "ok" (or "ok N" with a number) or "err ERRNO" for
 *       each, into the image file as they go ("crash" stops there, unmounting nothing):
 *         mkdir PATH MODE | mknod PATH MODE RDEV | create PATH MODE
 *         write PATH OFF LEN SEED | append PATH LEN SEED | trunc PATH SIZE
 *         chmod PATH MODE
 *         unlink PATH | rmdir PATH | rename OLD NEW | link OLD NEW
 *         symlink TARGET PATH | open PATH (ok SLOT) | wfd SLOT OFF LEN SEED
 *         close SLOT | remount | full (fill the disk with one file) | crash
 *       (modes octal; byte x of a write is (x * 31 + SEED) % 251; a file
 *       unlinked while open goes on the orphan list until closed). With
 *       "again", through a cache of 4 KiB blocks that starts empty now and
 *       then: a call meeting a block it lacks is taken back with an undo
 *       log and made again, as the file system service does; the result
 *       must be the same, byte for byte (stderr says how many retries).
 *   ext2drive IMAGE fuzz N SEED SPAN
 *       N times: the image with 1 to 8 bytes of its first SPAN bytes changed at
 *       random (seeded), mounted and walked, bounded (depth, entries); prints
 *       how many were refused, walked with errors, walked clean. Built with
 *       the address and undefined-behaviour sanitizers, any bad access ends
 *       it with a report. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "ext2.h"

struct image {
    uint8_t *data;
    uint64_t size;
    uint64_t reads;
};

/* "ops again": a disk cache as the file system service has one. A 4 KiB
 * block not in it answers -EXT2_EAGAIN (and is in it from then on); every
 * write keeps the bytes it covers in an undo log, so that the call can be
 * taken back and made again, as the service will. */
static struct {
    int on;
    uint8_t *cached;                    /* a byte a block */
    struct undo { uint64_t off; uint32_t len; uint8_t *old; } *log;
    size_t n, cap;
    unsigned long retries;
} again;

static int cache_has(uint64_t off, uint32_t len)
{
    for (uint64_t b = off / 4096; again.on && len && b <= (off + len - 1) / 4096; b++)
        if (!again.cached[b]) {
            again.cached[b] = 1;
            return -EXT2_EAGAIN;
        }
    return 0;
}

static int image_read(void *ctx, uint64_t off, void *buf, uint32_t len)
{
    struct image *im = ctx;
    im->reads++;
    if (off > im->size || len > im->size - off)
        return -EXT2_EIO;                       /* (past the disk's end, as the block service says) */
    int err = cache_has(off, len);
    if (!err)
        memcpy(buf, im->data + off, len);
    return err;
}

static int image_write(void *ctx, uint64_t off, const void *buf, uint32_t len)
{
    struct image *im = ctx;
    if (off > im->size || len > im->size - off)
        return -EXT2_EIO;
    int err = cache_has(off, len);
    if (err)
        return err;
    if (again.on) {
        if (again.n == again.cap) {
            again.cap = again.cap ? 2 * again.cap : 256;
            again.log = realloc(again.log, again.cap * sizeof(*again.log));
        }
        struct undo *u = &again.log[again.n++];
        u->off = off, u->len = len, u->old = malloc(len ? len : 1);
        memcpy(u->old, im->data + off, len);
    }
    memcpy(im->data + off, buf, len);
    return 0;
}

/* Take back the writes of the log (newest first), or forget them. */
static void log_end(struct image *im, int undo)
{
    while (again.n) {
        struct undo *u = &again.log[--again.n];
        if (undo)
            memcpy(im->data + u->off, u->old, u->len);
        free(u->old);
    }
}

static uint32_t crc32(uint32_t crc, const uint8_t *p, uint32_t n)
{
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
    crc = ~crc;
    for (uint32_t i = 0; i < n; i++)
        crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

struct walk {
    struct ext2_fs fs;
    int print;
    unsigned entries, errors;
};

#define MAX_DEPTH   64
#define MAX_ENTRIES 20000

static void walk_dir(struct walk *w, uint32_t ino, char *path, size_t plen, int depth)
{
    struct ext2_inode dir;
    if (depth > MAX_DEPTH || ext2_inode(&w->fs, ino, &dir) != 0) {
        w->errors++;
        return;
    }
    uint64_t pos = 0;
    char name[EXT2_NAME_MAX];
    uint32_t e, nlen;
    uint8_t type;
    int r;
    while ((r = ext2_readdir(&w->fs, &dir, &pos, &e, &type, name, &nlen)) == 1) {
        if (++w->entries > MAX_ENTRIES)
            return;
        if ((nlen == 1 && name[0] == '.') || (nlen == 2 && name[0] == '.' && name[1] == '.'))
            continue;
        if (plen + 1 + nlen + 1 > 4096) {
            w->errors++;
            continue;
        }
        path[plen] = '/';
        memcpy(path + plen + 1, name, nlen);
        path[plen + 1 + nlen] = 0;
        struct ext2_inode in;
        if (ext2_inode(&w->fs, e, &in) != 0) {
            w->errors++;
            continue;
        }
        uint32_t fmt = in.mode & EXT2_S_IFMT;
        uint32_t h = 0;
        const char *kind = "other";
        char target[4096];
        int err = 0;
        if (fmt == EXT2_S_IFREG) {
            kind = "file";
            static uint8_t buf[65536];
            uint64_t most = w->print ? in.size : 1u << 20;     /* (fuzzing: a size may be anything) */
            for (uint64_t off = 0; off < in.size && off < most && !err; off += sizeof(buf)) {
                uint32_t got = 0;
                err = ext2_read(&w->fs, &in, off, buf, sizeof(buf), &got);
                h = crc32(h, buf, got);
                if (!err && !got)
                    break;
            }
        } else if (fmt == EXT2_S_IFLNK) {
            kind = "link";
            uint32_t got = 0;
            err = ext2_readlink(&w->fs, &in, target, sizeof(target), &got);
            h = crc32(h, (const uint8_t *)target, err ? 0 : got);
        } else if (fmt == EXT2_S_IFDIR) {
            kind = "dir";
        }
        if (err)
            w->errors++;
        if (w->print) {
            printf("%s\t%s\t%o\t%u\t%u\t%llu\t%u\t%u\t", path + 1, kind, in.mode & 07777u, in.uid, in.gid,
                   (unsigned long long)(fmt == EXT2_S_IFDIR ? 0 : in.size), in.links, in.mtime);
            if (fmt == EXT2_S_IFDIR)
                printf("-\n");
            else
                printf("%08x\n", h);
        }
        if (fmt == EXT2_S_IFDIR && !(nlen == 10 && memcmp(name, "lost+found", 10) == 0 && depth == 0))
            walk_dir(w, e, path, plen + 1 + nlen, depth + 1);
        path[plen] = 0;
    }
    if (r < 0)
        w->errors++;
}

/* ---- ops ---- */

static struct ext2_fs wfs;
static struct { uint32_t ino; struct ext2_inode in; } slots[16];

/* The directory holding the last component of path, and that component. */
static int parent_of(char *path, struct ext2_inode *dir, const char **name, uint32_t *len)
{
    int err = ext2_inode(&wfs, EXT2_ROOT_INO, dir);
    char *p = path;
    while (!err) {
        while (*p == '/')
            p++;
        char *end = strchr(p, '/');
        if (!end || !end[strspn(end, "/")]) {
            *name = p;
            *len = end ? (uint32_t)(end - p) : (uint32_t)strlen(p);
            return (dir->mode & EXT2_S_IFMT) == EXT2_S_IFDIR ? 0 : -EXT2_ENOTDIR;  /* (as a path walk) */
        }
        uint32_t ino;
        err = ext2_lookup(&wfs, dir, p, (uint32_t)(end - p), &ino);
        if (!err)
            err = ext2_inode(&wfs, ino, dir);
        p = end;
    }
    return err;
}

static int resolve(char *path, struct ext2_inode *out)
{
    struct ext2_inode dir;
    const char *name;
    uint32_t len, ino;
    int err = parent_of(path, &dir, &name, &len);
    if (!err && !len) {
        *out = dir;
        return 0;
    }
    if (!err)
        err = ext2_lookup(&wfs, &dir, name, len, &ino);
    return err ? err : ext2_inode(&wfs, ino, out);
}

static int slot_of(uint32_t ino)
{
    for (int i = 0; i < 16; i++)
        if (slots[i].ino == ino)
            return i;
    return -1;
}

/* An inode that lost its last link: released, or an orphan while open. */
static int let_go(struct ext2_inode *v)
{
    if (!v->ino || v->links)
        return 0;
    int s = slot_of(v->ino);
    if (s < 0)
        return ext2_release(&wfs, v);
    slots[s].in = *v;
    return ext2_orphan_add(&wfs, v);
}

static int pattern_write(struct ext2_inode *in, uint64_t off, uint64_t len, unsigned seed)
{
    static uint8_t buf[65536];
    for (uint64_t done = 0; done < len;) {
        uint32_t n = len - done < sizeof(buf) ? (uint32_t)(len - done) : (uint32_t)sizeof(buf), put;
        for (uint32_t i = 0; i < n; i++)
            buf[i] = (uint8_t)(((off + done + i) * 31 + seed) % 251);
        int err = ext2_write(&wfs, in, off + done, buf, n, &put);
        if (err)
            return err;
        if (put < n)
            return -EXT2_ENOSPC;
        done += n;
    }
    return 0;
}

static int op(struct image *im, char *line, long *value)
{
    char *w[6] = { 0 };
    int n = 0;
    for (char *t = strtok(line, " \n"); t && n < 6; t = strtok(NULL, " \n"))
        w[n++] = t;
    if (!n)
        return 0;
    struct ext2_inode dir, in, victim = { 0 };
    const char *name;
    uint32_t len;
    int err;
    wfs.now++;
    if (!strcmp(w[0], "mkdir") || !strcmp(w[0], "create") || !strcmp(w[0], "mknod")) {
        uint32_t mode = (uint32_t)strtoul(w[2], NULL, 8);
        if (!strcmp(w[0], "mkdir"))
            mode = (mode & 01777u) | EXT2_S_IFDIR;     /* (the VFS keeps no set-id bits of mkdir's mode) */
        else if (!strcmp(w[0], "create"))
            mode = (mode & 07777u) | EXT2_S_IFREG;
        err = parent_of(w[1], &dir, &name, &len);
        return err ? err : ext2_create(&wfs, &dir, name, len, mode, 0, 0, w[3] ? (uint32_t)strtoul(w[3], NULL, 0) : 0,
                                       &in);
    }
    if (!strcmp(w[0], "symlink")) {
        err = parent_of(w[2], &dir, &name, &len);
        return err ? err : ext2_symlink(&wfs, &dir, name, len, w[1], (uint32_t)strlen(w[1]), 0, 0, &in);
    }
    if (!strcmp(w[0], "write") || !strcmp(w[0], "wfd")) {
        if (w[0][0] == 'w' && w[0][1] == 'f') {
            int s = atoi(w[1]);
            if (s < 0 || s >= 16 || !slots[s].ino)
                return -EXT2_EINVAL;
            if ((err = ext2_inode(&wfs, slots[s].ino, &in)) == -EXT2_ENOENT)
                in = slots[s].in;                       /* (an orphan: only the slot knows it) */
            else if (err)
                return err;
        } else if ((err = resolve(w[1], &in)) != 0) {
            return err;
        }
        err = pattern_write(&in, strtoull(w[2], NULL, 0), strtoull(w[3], NULL, 0), (unsigned)atoi(w[4]));
        int s = slot_of(in.ino);
        if (s >= 0)
            slots[s].in = in;
        return err;
    }
    if (!strcmp(w[0], "append")) {
        if ((err = resolve(w[1], &in)) != 0)
            return err;
        return pattern_write(&in, in.size, strtoull(w[2], NULL, 0), (unsigned)atoi(w[3]));
    }
    if (!strcmp(w[0], "trunc")) {
        err = resolve(w[1], &in);
        return err ? err : ext2_truncate(&wfs, &in, strtoull(w[2], NULL, 0));
    }
    if (!strcmp(w[0], "chmod")) {
        if ((err = resolve(w[1], &in)) != 0)
            return err;
        in.mode = (uint16_t)((in.mode & EXT2_S_IFMT) | (strtoul(w[2], NULL, 8) & 07777u));
        in.ctime = wfs.now;
        return ext2_inode_write(&wfs, &in);
    }
    if (!strcmp(w[0], "unlink")) {
        err = parent_of(w[1], &dir, &name, &len);
        err = err ? err : ext2_unlink(&wfs, &dir, name, len, &victim);
        return err ? err : let_go(&victim);
    }
    if (!strcmp(w[0], "rmdir")) {
        err = parent_of(w[1], &dir, &name, &len);
        return err ? err : ext2_rmdir(&wfs, &dir, name, len);
    }
    if (!strcmp(w[0], "link")) {
        if ((err = resolve(w[1], &in)) != 0 || (err = parent_of(w[2], &dir, &name, &len)) != 0)
            return err;
        return ext2_link(&wfs, &dir, name, len, &in);
    }
    if (!strcmp(w[0], "rename")) {
        struct ext2_inode nd;
        const char *nn;
        uint32_t nl;
        if ((err = parent_of(w[1], &dir, &name, &len)) != 0 || (err = parent_of(w[2], &nd, &nn, &nl)) != 0)
            return err;
        err = ext2_rename(&wfs, &dir, name, len, &nd, nn, nl, &victim);
        return err ? err : let_go(&victim);
    }
    if (!strcmp(w[0], "open")) {
        if ((err = resolve(w[1], &in)) != 0)
            return err;
        int s = slot_of(0);
        if (s < 0)
            return -EXT2_EINVAL;
        slots[s].ino = in.ino;
        slots[s].in = in;
        *value = s;
        return 0;
    }
    if (!strcmp(w[0], "close")) {
        int s = atoi(w[1]);
        if (s < 0 || s >= 16 || !slots[s].ino)
            return -EXT2_EINVAL;
        in = slots[s].in;
        slots[s].ino = 0;
        if ((err = ext2_inode(&wfs, in.ino, &in)) != -EXT2_ENOENT)
            return err;                                 /* (0: it has a name still) */
        if ((err = ext2_orphan_del(&wfs, &in)) != 0)
            return err;
        return ext2_release(&wfs, &in);
    }
    if (!strcmp(w[0], "remount")) {
        struct ext2_io io = { im, image_read, image_write };
        uint32_t now = wfs.now;
        if ((err = ext2_unmount(&wfs)) != 0 || (err = ext2_mount(&wfs, &io)) != 0)
            return err;
        wfs.now = now;
        return ext2_mount_rw(&wfs);
    }
    if (!strcmp(w[0], "full")) {
        if ((err = parent_of(w[1], &dir, &name, &len)) != 0 ||
            (err = ext2_create(&wfs, &dir, name, len, EXT2_S_IFREG | 0644, 0, 0, 0, &in)) != 0)
            return err;
        err = pattern_write(&in, 0, (uint64_t)wfs.blocks_count * wfs.block_size, 1);
        *value = (long)in.size;
        return err == -EXT2_ENOSPC ? 0 : err ? err : -EXT2_EIO;
    }
    return -EXT2_EINVAL;
}

static int ops(struct image *im, uint64_t seed)
{
    struct ext2_io io = { im, image_read, image_write };
    int err = ext2_mount(&wfs, &io);
    wfs.now = 1700000000;
    if (err || (err = ext2_mount_rw(&wfs)) != 0) {
        printf("mount: %d %s\n", err, wfs.why ? wfs.why : "");
        return 1;
    }
    static char line[8192], copy[8192];
    int crash = 0;
    int retrying = seed != 0;
    again.on = retrying;
    again.cached = calloc(im->size / 4096 + 1, 1);
    while (fgets(line, sizeof(line), stdin)) {
        if (!strncmp(line, "crash", 5)) {
            crash = 1;
            break;
        }
        long value = -1;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        if (again.on && (seed >> 60) < 4)
            memset(again.cached, 0, im->size / 4096 + 1);       /* (now and then the cache starts empty) */
        struct ext2_fs fs0 = wfs;
        __typeof__(slots) slots0;
        memcpy(slots0, slots, sizeof(slots));
        for (;;) {
            memcpy(copy, line, sizeof(copy));
            err = op(im, copy, &value);
            log_end(im, err == -EXT2_EAGAIN);
            if (err != -EXT2_EAGAIN)
                break;
            wfs = fs0;                                  /* (the call taken back: asked again) */
            memcpy(slots, slots0, sizeof(slots));
            again.retries++;
        }
        if (err)
            printf("err %d\n", -err);
        else if (value >= 0)
            printf("ok %ld\n", value);
        else
            printf("ok\n");
    }
    again.on = 0;
    if (!crash && (err = ext2_unmount(&wfs)) != 0)
        printf("unmount: %d\n", err);
    if (retrying)
        fprintf(stderr, "retries %lu\n", again.retries);
    free(again.cached);
    free(again.log);
    return 0;
}

/* The image mapped: shared (what is written reaches the file at once, as
 * the machine's disk would have it if it stopped) for ops, private else. */
static int load(const char *file, struct image *im, int shared)
{
    int fd = open(file, shared ? O_RDWR : O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !st.st_size)
        return -1;
    im->size = (uint64_t)st.st_size;
    im->data = mmap(NULL, im->size, PROT_READ | PROT_WRITE, shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
    close(fd);
    return im->data == MAP_FAILED ? -1 : 0;
}

int main(int argc, char **argv)
{
    struct image im = { 0 };
    if (argc < 3 || load(argv[1], &im, strcmp(argv[2], "ops") == 0)) {
        fprintf(stderr, "usage: ext2drive IMAGE tree | ops | fuzz N SEED SPAN\n");
        return 2;
    }
    struct ext2_io io = { &im, image_read, NULL };
    static char path[4097];
    if (strcmp(argv[2], "cat") == 0 && argc == 4) {
        struct ext2_inode in;
        static uint8_t buf[65536];
        int err = ext2_mount(&wfs, &io);
        err = err ? err : resolve(argv[3], &in);
        for (uint64_t off = 0; !err && off < in.size; off += sizeof(buf)) {
            uint32_t got = 0;
            if ((err = ext2_read(&wfs, &in, off, buf, sizeof(buf), &got)) == 0)
                fwrite(buf, 1, got, stdout);
        }
        munmap(im.data, im.size);
        if (err)
            fprintf(stderr, "cat %s: %d\n", argv[3], err);
        return err ? 1 : 0;
    }
    if (strcmp(argv[2], "ops") == 0) {
        int r = ops(&im, argc > 4 && !strcmp(argv[3], "again") ? strtoull(argv[4], NULL, 0) | 1 : 0);
        munmap(im.data, im.size);
        return r;
    }
    if (strcmp(argv[2], "tree") == 0) {
        struct walk w = { .print = 1 };
        int err = ext2_mount(&w.fs, &io);
        if (err) {
            printf("mount: %d %s\n", err, w.fs.why ? w.fs.why : "");
            munmap(im.data, im.size);
            return 1;
        }
        printf("# block %u blocks %u inodes %u groups %u label %s\n", w.fs.block_size, w.fs.blocks_count,
               w.fs.inodes_count, w.fs.groups, w.fs.label);
        path[0] = 0;
        walk_dir(&w, EXT2_ROOT_INO, path, 0, 0);
        printf("# entries %u errors %u\n", w.entries, w.errors);
        munmap(im.data, im.size);
        return w.errors ? 1 : 0;
    }
    int writing = strcmp(argv[2], "wfuzz") == 0;
    if ((writing || strcmp(argv[2], "fuzz") == 0) && argc == 6) {
        static const char *script[] = {
            "create new 644", "write new 0 30000 3", "mkdir dir/sub 755", "rename new dir/sub/new",
            "link dir/sub/new again", "write size-4097 100000 5000 4", "trunc size-4097 10", "unlink one",
            "symlink tttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttt dir/l", "rename dir d2",
            "rmdir d2/sub", "unlink again", "unlink d2/sub/new", "rmdir d2/sub", "remount",
        };
        unsigned wrote = 0, wfailed = 0, wrefused = 0;
        unsigned n = (unsigned)strtoul(argv[3], NULL, 0);
        uint64_t seed = strtoull(argv[4], NULL, 0), span = strtoull(argv[5], NULL, 0);
        span = span && span < im.size ? span : im.size;
        uint8_t *pristine = malloc(im.size);
        memcpy(pristine, im.data, im.size);
        /* Where the bytes that matter are, from the image as it was: the
         * superblock's fields, the group descriptors, group 0's first
         * inodes and the root directory's first block; half the changes
         * go there, half anywhere in SPAN. */
        struct ext2_fs fs0;
        uint64_t hot[4][2] = { { 1024, 128 } };
        unsigned nhot = 1;
        if (ext2_mount(&fs0, &io) == 0) {
            uint8_t gd[32];
            struct ext2_inode root;
            uint32_t pb = 0;
            hot[nhot][0] = fs0.gdt_offset, hot[nhot++][1] = 32ull * fs0.groups;
            if (image_read(&im, fs0.gdt_offset, gd, 32) == 0) {
                uint32_t table = gd[8] | gd[9] << 8 | gd[10] << 16 | (uint32_t)gd[11] << 24;
                hot[nhot][0] = (uint64_t)table * fs0.block_size, hot[nhot++][1] = 64ull * fs0.inode_size;
            }
            if (ext2_inode(&fs0, EXT2_ROOT_INO, &root) == 0 && ext2_bmap(&fs0, &root, 0, &pb) == 0 && pb)
                hot[nhot][0] = (uint64_t)pb * fs0.block_size, hot[nhot++][1] = fs0.block_size;
        }
        unsigned refused = 0, erred = 0, clean = 0;
        for (unsigned i = 0; i < n; i++) {
            memcpy(im.data, pristine, im.size);
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            unsigned k = 1 + (unsigned)(seed >> 61);
            for (unsigned j = 0; j < k; j++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                uint64_t pick = (seed >> 33) % (2 * nhot), at = (seed >> 20) % span;
                if (pick < nhot && hot[pick][0] + hot[pick][1] <= im.size)
                    at = hot[pick][0] + (seed >> 20) % hot[pick][1];
                im.data[at] = (uint8_t)(seed >> 8) ? (uint8_t)(seed >> 8) : 0xff;
            }
            struct walk w = { .print = 0 };
            if (ext2_mount(&w.fs, &io)) {
                refused++;
                continue;
            }
            path[0] = 0;
            walk_dir(&w, EXT2_ROOT_INO, path, 0, 0);
            if (w.errors)
                erred++;
            else
                clean++;
            if (!writing)
                continue;
            /* Then the writing calls on it, and a walk of what they left. */
            struct ext2_io wio = { &im, image_read, image_write };
            memset(slots, 0, sizeof(slots));
            if (ext2_mount(&wfs, &wio) || ext2_mount_rw(&wfs)) {
                wrefused++;
                continue;
            }
            for (unsigned j = 0; j < sizeof(script) / sizeof(script[0]); j++) {
                static char line[256];
                long value = -1;
                snprintf(line, sizeof(line), "%s", script[j]);
                if (op(&im, line, &value))
                    wfailed++;
                else
                    wrote++;
            }
            ext2_unmount(&wfs);
            struct walk w2 = { .print = 0 };
            if (ext2_mount(&w2.fs, &io) == 0)
                walk_dir(&w2, EXT2_ROOT_INO, path, 0, 0);
        }
        printf("fuzz %u: refused %u, errors %u, clean %u\n", n, refused, erred, clean);
        if (writing)
            printf("writes: refused %u, done %u, failed %u\n", wrefused, wrote, wfailed);
        free(pristine);
        munmap(im.data, im.size);
        return 0;
    }
    fprintf(stderr, "usage: ext2drive IMAGE tree | ops | fuzz N SEED SPAN | wfuzz N SEED SPAN\n");
    munmap(im.data, im.size);
    return 2;
}
