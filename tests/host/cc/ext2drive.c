/* Drives lib/ext2.c on the host for tests/host/test_ext2.py.
 *   ext2drive IMAGE tree
 *       mount IMAGE and print every file below the root, a line each:
 *       path, type, mode (octal), uid, gid, size, links, mtime, and the
 *       FNV-1a hash of a file's bytes or a link's target (directories: -)
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
#include "ext2.h"
#include "petrel_abi.h"

struct image {
    uint8_t *data;
    uint64_t size;
    uint64_t reads;
};

static int image_read(void *ctx, uint64_t off, void *buf, uint32_t len)
{
    struct image *im = ctx;
    im->reads++;
    if (off > im->size || len > im->size - off)
        return -E_RANGE;                        /* (past the disk's end, as the block service says) */
    memcpy(buf, im->data + off, len);
    return 0;
}

static uint64_t fnv(uint64_t h, const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
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
        uint64_t h = 0xcbf29ce484222325ull;
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
                h = fnv(h, buf, got);
                if (!err && !got)
                    break;
            }
        } else if (fmt == EXT2_S_IFLNK) {
            kind = "link";
            uint32_t got = 0;
            err = ext2_readlink(&w->fs, &in, target, sizeof(target), &got);
            h = fnv(h, (const uint8_t *)target, err ? 0 : got);
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
                printf("%016llx\n", (unsigned long long)h);
        }
        if (fmt == EXT2_S_IFDIR && !(nlen == 10 && memcmp(name, "lost+found", 10) == 0 && depth == 0))
            walk_dir(w, e, path, plen + 1 + nlen, depth + 1);
        path[plen] = 0;
    }
    if (r < 0)
        w->errors++;
}

static int load(const char *file, struct image *im)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    im->size = (uint64_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    im->data = malloc(im->size ? im->size : 1);
    int ok = im->data && fread(im->data, 1, im->size, f) == im->size;
    fclose(f);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct image im = { 0 };
    if (argc < 3 || load(argv[1], &im)) {
        fprintf(stderr, "usage: ext2drive IMAGE tree | fuzz N SEED SPAN\n");
        return 2;
    }
    struct ext2_io io = { &im, image_read };
    static char path[4097];
    if (strcmp(argv[2], "tree") == 0) {
        struct walk w = { .print = 1 };
        int err = ext2_mount(&w.fs, &io);
        if (err) {
            printf("mount: %d %s\n", err, w.fs.why ? w.fs.why : "");
            free(im.data);
            return 1;
        }
        printf("# block %u blocks %u inodes %u groups %u label %s\n", w.fs.block_size, w.fs.blocks_count,
               w.fs.inodes_count, w.fs.groups, w.fs.label);
        path[0] = 0;
        walk_dir(&w, EXT2_ROOT_INO, path, 0, 0);
        printf("# entries %u errors %u\n", w.entries, w.errors);
        free(im.data);
        return w.errors ? 1 : 0;
    }
    if (strcmp(argv[2], "fuzz") == 0 && argc == 6) {
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
        }
        printf("fuzz %u: refused %u, errors %u, clean %u\n", n, refused, erred, clean);
        free(pristine);
        free(im.data);
        return 0;
    }
    fprintf(stderr, "usage: ext2drive IMAGE tree | fuzz N SEED SPAN\n");
    free(im.data);
    return 2;
}
