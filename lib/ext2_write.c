/*
 * Writing ext2 (lib/include/ext2.h), as Linux's fs/ext2 does it: blocks and
 * inodes taken from the groups' bitmaps (a file's blocks near its inode and
 * near each other, top-level directories spread over the groups), the
 * group descriptors' and the superblock's counts kept with them, directory
 * records split and merged in place, the block tree of a file grown and cut
 * back a pointer at a time. Metadata is read and written in small pieces
 * through the io callbacks (no block-sized buffers: the stack stays small
 * in the kernel). Every block number taken from the image is checked
 * against the file system's size and its metadata before it is written.
 */
#include "ext2_disk.h"
#include "pstring.h"

#define INDEX_FL            0x1000u     /* a hashed (dir_index) directory: the index goes stale when written here */
#define IMMUTABLE_FL        0x10u       /* chattr +i: nothing changes it, nor the names in it */
#define APPEND_FL           0x20u       /* chattr +a: written only at its end; a directory's names only added */
#define EA_MAGIC            0xea020000u

static const uint8_t zeros[4096];       /* (a 4 KiB block zeroed in one write: a cache of 4 KiB pages
                                         * then need not read what it replaces) */

static int rd(const struct ext2_fs *fs, uint64_t off, void *buf, uint32_t len)
{
    return fs->io.read(fs->io.ctx, off, buf, len);
}

static int wr(struct ext2_fs *fs, uint64_t off, const void *buf, uint32_t len)
{
    return fs->io.write(fs->io.ctx, off, buf, len);
}

static int rd32(const struct ext2_fs *fs, uint64_t off, uint32_t *v)
{
    uint8_t b[4];
    int err = rd(fs, off, b, 4);
    *v = err ? 0 : le32(b);
    return err;
}

static int wr32(struct ext2_fs *fs, uint64_t off, uint32_t v)
{
    uint8_t b[4];
    put32(b, v);
    return wr(fs, off, b, 4);
}

static int zero(struct ext2_fs *fs, uint64_t off, uint32_t len)
{
    for (uint32_t done = 0; done < len;) {
        uint32_t n = len - done < sizeof(zeros) ? len - done : (uint32_t)sizeof(zeros);
        int err = wr(fs, off + done, zeros, n);
        if (err)
            return err;
        done += n;
    }
    return 0;
}

static uint64_t boff(const struct ext2_fs *fs, uint32_t b) { return (uint64_t)b * fs->block_size; }
/* chattr's +i or +a: no truncating, no removing or linking it (Linux's -EPERM). */
static int fixed(const struct ext2_inode *in) { return (in->flags & (IMMUTABLE_FL | APPEND_FL)) != 0; }
static uint32_t sectors(const struct ext2_fs *fs) { return fs->block_size / 512; }
static uint32_t kind(const struct ext2_inode *in) { return in->mode & EXT2_S_IFMT; }

/* ---- Groups ---------------------------------------------------------- */

struct group {
    uint32_t block_bitmap, inode_bitmap, inode_table;
    uint32_t free_blocks, free_inodes;
    uint32_t first, count;          /* its blocks */
};

/* Whether group g holds a copy of the superblock (all do without sparse_super). */
static int has_super(const struct ext2_fs *fs, uint32_t g)
{
    if (fs->feature_compat & COMPAT_SPARSE_SUPER2)
        return g == 0 || g == fs->backup_bgs[0] || g == fs->backup_bgs[1];     /* (the two it names) */
    if (g <= 1 || !(fs->feature_ro_compat & RO_SPARSE_SUPER))
        return 1;
    for (uint32_t p = 3; p <= 7; p += 2) {
        uint32_t x = g;
        while (x % p == 0)
            x /= p;
        if (x == 1)
            return 1;
    }
    return 0;
}

static uint32_t table_blocks(const struct ext2_fs *fs)
{
    return (uint32_t)(((uint64_t)fs->inodes_per_group * fs->inode_size + fs->block_size - 1) / fs->block_size);
}

void ext2_statfs(const struct ext2_fs *fs, struct ext2_statfs *st)
{
    uint64_t overhead = fs->overhead;
    if (!overhead) {                            /* (Linux's count_overhead, no flex_bg nor meta_bg) */
        overhead = fs->first_data_block;
        for (uint32_t g = 0; g < fs->groups; g++)
            overhead += (has_super(fs, g) ? 1 + fs->gdt_blocks : 0) + table_blocks(fs) + 2;
    }
    uint64_t lo = le32(fs->uuid) ^ le32(fs->uuid + 8), hi = le32(fs->uuid + 4) ^ le32(fs->uuid + 12);
    st->blocks = fs->blocks_count > overhead ? fs->blocks_count - overhead : 0;
    st->bfree = fs->free_blocks;
    st->bavail = fs->free_blocks > fs->reserved_blocks ? fs->free_blocks - fs->reserved_blocks : 0;
    st->files = fs->inodes_count;
    st->ffree = fs->free_inodes;
    st->fsid = lo | hi << 32;
}

static int group_get(const struct ext2_fs *fs, uint32_t g, struct group *gr)
{
    if (g >= fs->groups)
        return -EXT2_EUCLEAN;
    uint8_t d[GD_SIZE];
    int err = rd(fs, fs->gdt_offset + (uint64_t)g * GD_SIZE, d, GD_SIZE);
    if (err)
        return err;
    gr->block_bitmap = le32(d + GD_BLOCK_BITMAP);
    gr->inode_bitmap = le32(d + GD_INODE_BITMAP);
    gr->inode_table = le32(d + GD_INODE_TABLE);
    gr->free_blocks = le16(d + GD_FREE_BLOCKS);
    gr->free_inodes = le16(d + GD_FREE_INODES);
    gr->first = fs->first_data_block + g * fs->blocks_per_group;
    gr->count = fs->blocks_count - gr->first < fs->blocks_per_group ? fs->blocks_count - gr->first
                                                                     : fs->blocks_per_group;
    uint32_t lo = fs->first_data_block;
    if (gr->block_bitmap <= lo || gr->block_bitmap >= fs->blocks_count || gr->inode_bitmap <= lo ||
        gr->inode_bitmap >= fs->blocks_count || gr->inode_table <= lo ||
        (uint64_t)gr->inode_table + table_blocks(fs) > fs->blocks_count)
        return -EXT2_EUCLEAN;
    return 0;
}

/* Block b is the file system's own: a superblock or descriptor copy, the
 * blocks kept to grow the descriptors, a bitmap or an inode table. */
static int is_meta(const struct ext2_fs *fs, uint32_t b, int *meta)
{
    if (b <= fs->first_data_block || b >= fs->blocks_count) {
        *meta = 1;
        return 0;
    }
    uint32_t g = (b - fs->first_data_block) / fs->blocks_per_group;
    struct group gr;
    int err = group_get(fs, g, &gr);
    if (err)
        return err;
    uint32_t rel = b - gr.first;
    *meta = (has_super(fs, g) && rel < 1 + fs->gdt_blocks + fs->reserved_gdt) || b == gr.block_bitmap ||
            b == gr.inode_bitmap || (b >= gr.inode_table && b < gr.inode_table + table_blocks(fs));
    return 0;
}

/* A data or indirect block pointer read from the image: in range and not metadata. */
static int check_block(const struct ext2_fs *fs, uint32_t b)
{
    int meta, err = is_meta(fs, b, &meta);
    return err ? err : meta ? -EXT2_EUCLEAN : 0;
}

static int sb_counts(struct ext2_fs *fs)
{
    uint8_t b[8];
    put32(b, fs->free_blocks);
    put32(b + 4, fs->free_inodes);
    return wr(fs, SB_OFFSET + SB_FREE_BLOCKS, b, 8);
}

/* Add to group g's free block, free inode and directory counts, and to the superblock's. */
static int group_add(struct ext2_fs *fs, uint32_t g, int blocks, int inodes, int dirs)
{
    uint64_t at = fs->gdt_offset + (uint64_t)g * GD_SIZE + GD_FREE_BLOCKS;
    uint8_t d[6];
    int err = rd(fs, at, d, 6);
    if (err)
        return err;
    int64_t fb = (int64_t)le16(d) + blocks, fi = (int64_t)le16(d + 2) + inodes, nd = (int64_t)le16(d + 4) + dirs;
    int64_t sb = (int64_t)fs->free_blocks + blocks, si = (int64_t)fs->free_inodes + inodes;
    if (fb < 0 || fb > 0xffff || fi < 0 || fi > 0xffff || nd < 0 || nd > 0xffff || sb < 0 || si < 0 ||
        sb > fs->blocks_count || si > fs->inodes_count)
        return -EXT2_EUCLEAN;
    put16(d, (uint32_t)fb);
    put16(d + 2, (uint32_t)fi);
    put16(d + 4, (uint32_t)nd);
    if ((err = wr(fs, at, d, 6)) != 0)
        return err;
    fs->free_blocks = (uint32_t)sb;
    fs->free_inodes = (uint32_t)si;
    return sb_counts(fs);
}

/* The first clear bit of the bitmap at `map` in [from, count): 1 and *bit, or 0. */
static int find_clear(const struct ext2_fs *fs, uint64_t map, uint32_t from, uint32_t count, uint32_t *bit)
{
    uint8_t chunk[64];
    for (uint32_t byte = from / 8; byte * 8 < count;) {
        uint32_t n = (count + 7) / 8 - byte;
        n = n < sizeof(chunk) ? n : (uint32_t)sizeof(chunk);
        int err = rd(fs, map + byte, chunk, n);
        if (err)
            return err;
        for (uint32_t i = 0; i < n; i++) {
            if (chunk[i] == 0xff)
                continue;
            for (uint32_t k = 0; k < 8; k++) {
                uint32_t x = (byte + i) * 8 + k;
                if (x >= from && x < count && !(chunk[i] >> k & 1)) {
                    *bit = x;
                    return 1;
                }
            }
        }
        byte += n;
    }
    return 0;
}

/* Set (on) or clear a bit that must be in the other state (else the bitmap is corrupt). */
static int flip(struct ext2_fs *fs, uint64_t map, uint32_t bit, int on)
{
    uint8_t b;
    int err = rd(fs, map + bit / 8, &b, 1);
    if (err)
        return err;
    uint8_t m = (uint8_t)(1u << (bit % 8));
    if (!(b & m) != !!on)
        return -EXT2_EUCLEAN;
    b = on ? (uint8_t)(b | m) : (uint8_t)(b & ~m);
    return wr(fs, map + bit / 8, &b, 1);
}

/* ---- Blocks ---------------------------------------------------------- */

/* A free block, as near after `goal` as there is one: marked used, counted,
 * and zeroed unless the caller fills it all. */
static int alloc_block(struct ext2_fs *fs, uint32_t goal, int fill, uint32_t *out)
{
    uint32_t reserve = fs->use_reserve ? 0 : fs->reserved_blocks;
    if (fs->free_blocks <= reserve)
        return -EXT2_ENOSPC;
    if (goal <= fs->first_data_block || goal >= fs->blocks_count)
        goal = fs->first_data_block;
    uint32_t g0 = (goal - fs->first_data_block) / fs->blocks_per_group;
    for (uint32_t k = 0; k <= fs->groups; k++) {
        uint32_t g = (g0 + k) % fs->groups, bit;
        struct group gr;
        int err = group_get(fs, g, &gr);
        if (err)
            return err;
        if (!gr.free_blocks)
            continue;
        /* The goal's group from the goal on first, the rest of it last. */
        uint32_t from = k == 0 ? goal - gr.first : 0, to = k == fs->groups ? goal - gr.first : gr.count;
        int found = find_clear(fs, boff(fs, gr.block_bitmap), from, to, &bit);
        if (found < 0)
            return found;
        if (!found)
            continue;
        uint32_t b = gr.first + bit;
        if ((err = check_block(fs, b)) != 0)
            return err;                                 /* (the bitmap offers metadata) */
        if ((err = flip(fs, boff(fs, gr.block_bitmap), bit, 1)) != 0 ||
            (err = group_add(fs, g, -1, 0, 0)) != 0 || (!fill && (err = zero(fs, boff(fs, b), fs->block_size))))
            return err;
        *out = b;
        return 0;
    }
    return -EXT2_ENOSPC;
}

static int free_block(struct ext2_fs *fs, uint32_t b)
{
    int err = check_block(fs, b);
    if (err)
        return err;
    uint32_t g = (b - fs->first_data_block) / fs->blocks_per_group;
    struct group gr;
    if ((err = group_get(fs, g, &gr)) != 0 || (err = flip(fs, boff(fs, gr.block_bitmap), b - gr.first, 0)) != 0)
        return err;
    return group_add(fs, g, 1, 0, 0);
}

/* The block of the file's logical block lb (0: a hole), made with the
 * indirect blocks over it when `make` (fill: the caller writes all of it).
 * *goal is where to look for free blocks, and moves past what was taken. */
static int map_block(struct ext2_fs *fs, struct ext2_inode *in, uint64_t lb, int make, int fill, uint32_t *goal,
                     uint32_t *pb)
{
    uint32_t idx[3], depth;
    int k = ext2_block_path(fs, lb, idx, &depth);
    if (k < 0)
        return -EXT2_EFBIG;
    uint32_t *slot = &in->block[k], b = *slot;
    int err;
    for (uint32_t level = 0;; level++) {
        if (!b) {
            if (!make) {
                *pb = 0;
                return 0;
            }
            if (in->blocks + sectors(fs) > 0xffffffffull)
                return -EXT2_EFBIG;
            if ((err = alloc_block(fs, *goal, level == depth && fill, &b)) != 0)
                return err;
            *goal = b + 1;
            in->blocks += sectors(fs);
            if (level == 0)
                *slot = b;
            else if ((err = wr32(fs, boff(fs, *pb) + 4ull * idx[level - 1], b)) != 0)
                return err;
        } else if ((err = check_block(fs, b)) != 0) {
            return err;
        }
        if (level == depth)
            break;
        *pb = b;                                        /* (the indirect block the next pointer is in) */
        if ((err = rd32(fs, boff(fs, b) + 4ull * idx[level], &b)) != 0)
            return err;
    }
    *pb = b;
    return 0;
}

/* Free the blocks of the tree under indirect block b (`depth` levels above
 * the data; the tree's first logical block `base`) that map logical blocks
 * at or past `keep`, and b itself when all of it goes. */
static int free_tree(struct ext2_fs *fs, struct ext2_inode *in, uint32_t b, uint32_t depth, uint64_t base,
                     uint64_t keep)
{
    uint64_t per = fs->block_size / 4, span = 1;
    for (uint32_t i = 1; i < depth; i++)
        span *= per;
    int err = check_block(fs, b);
    if (err)
        return err;
    uint8_t chunk[64];
    for (uint64_t k = 0; k < per; k += sizeof(chunk) / 4) {
        if (base + (k + sizeof(chunk) / 4) * span <= keep)
            continue;                                   /* (all of these kept) */
        if ((err = rd(fs, boff(fs, b) + 4 * k, chunk, sizeof(chunk))) != 0)
            return err;
        for (uint32_t j = 0; j < sizeof(chunk) / 4; j++) {
            uint32_t c = le32(chunk + 4 * j);
            uint64_t cbase = base + (k + j) * span;
            if (!c || cbase + span <= keep)
                continue;
            err = depth > 1 ? free_tree(fs, in, c, depth - 1, cbase, keep) : free_block(fs, c);
            if (err)
                return err;
            if (cbase >= keep) {
                if (depth == 1)
                    in->blocks -= in->blocks >= sectors(fs) ? sectors(fs) : in->blocks;
                if (base < keep && (err = wr32(fs, boff(fs, b) + 4 * (k + j), 0)) != 0)
                    return err;                         /* (b stays: clear its pointer) */
            }
        }
    }
    if (base >= keep) {
        if ((err = free_block(fs, b)) != 0)
            return err;
        in->blocks -= in->blocks >= sectors(fs) ? sectors(fs) : in->blocks;
    }
    return 0;
}

/* Free every block of the file from logical block `keep` on. */
static int free_from(struct ext2_fs *fs, struct ext2_inode *in, uint64_t keep)
{
    uint64_t per = fs->block_size / 4, base[3] = { 12, 12 + per, 12 + per + per * per };
    int err;
    for (uint32_t k = 0; k < 12; k++) {
        if (k < keep || !in->block[k])
            continue;
        if ((err = free_block(fs, in->block[k])) != 0)
            return err;
        in->block[k] = 0;
        in->blocks -= in->blocks >= sectors(fs) ? sectors(fs) : in->blocks;
    }
    for (uint32_t d = 0; d < 3; d++) {
        uint32_t *slot = &in->block[12 + d];
        if (!*slot)
            continue;
        if ((err = free_tree(fs, in, *slot, d + 1, base[d], keep)) != 0)
            return err;
        if (base[d] >= keep)
            *slot = 0;
    }
    return 0;
}

/* ---- Inodes ---------------------------------------------------------- */

/* A revision 0 file system made revision 1, so that it may have features
 * (Linux's ext2_update_dynamic_rev): 128-byte inodes, first inode 11. */
static int dynamic_rev(struct ext2_fs *fs)
{
    int err = wr32(fs, SB_OFFSET + SB_REV, 1);
    if (err || (err = wr32(fs, SB_OFFSET + SB_FIRST_INO, 11)) != 0)
        return err;
    uint8_t b[2];
    put16(b, IN_BASE);
    if ((err = wr(fs, SB_OFFSET + SB_INODE_SIZE, b, 2)) != 0)
        return err;
    fs->rev = 1;
    return 0;
}

int ext2_inode_write(struct ext2_fs *fs, const struct ext2_inode *in)
{
    if (!fs->writable)
        return -EXT2_EROFS;
    uint64_t off;
    uint8_t r[IN_BASE];
    int err = ext2_inode_offset(fs, in->ino, &off);
    if (err || (err = rd(fs, off, r, sizeof(r))) != 0)
        return err;
    /* i_dtime is not written here: it chains the orphan list while the
     * inode has no links (ext2_orphan_add, ext2_release). */
    put16(r + IN_MODE, in->mode);
    put16(r + IN_UID, in->uid & 0xffffu);
    put16(r + IN_UID_HIGH, in->uid >> 16);
    put16(r + IN_GID, in->gid & 0xffffu);
    put16(r + IN_GID_HIGH, in->gid >> 16);
    put32(r + IN_SIZE, (uint32_t)in->size);
    put32(r + IN_SIZE_HIGH, kind(in) == EXT2_S_IFREG ? (uint32_t)(in->size >> 32) : 0);
    put32(r + IN_ATIME, in->atime);
    put32(r + IN_CTIME, in->ctime);
    put32(r + IN_MTIME, in->mtime);
    put16(r + IN_LINKS, in->links);
    put32(r + IN_BLOCKS, (uint32_t)in->blocks);
    put16(r + IN_BLOCKS_HIGH, 0);
    put32(r + IN_FLAGS, in->flags);
    put32(r + IN_FILE_ACL, in->file_acl);
    for (unsigned k = 0; k < EXT2_N_BLOCKS; k++)
        put32(r + IN_BLOCK + 4 * k, in->block[k]);
    if ((err = wr(fs, off, r, sizeof(r))) != 0)
        return err;
    if (kind(in) == EXT2_S_IFREG && in->size > 0x7fffffffu && !(fs->feature_ro_compat & RO_LARGE_FILE)) {
        if (!fs->rev && (err = dynamic_rev(fs)) != 0)
            return err;
        fs->feature_ro_compat |= RO_LARGE_FILE;         /* (a file of 2 GiB or more: as Linux, say so) */
        return wr32(fs, SB_OFFSET + SB_RO_COMPAT, fs->feature_ro_compat);
    }
    return 0;
}

/* A free inode for a child of `parent`: a file in its parent's group when
 * that has room, a top-level directory in the next group in turn. */
static int alloc_inode(struct ext2_fs *fs, uint32_t parent, int dir, uint32_t *out)
{
    if (!fs->free_inodes)
        return -EXT2_ENOSPC;
    uint32_t start = (parent - 1) / fs->inodes_per_group;
    if (dir && parent == EXT2_ROOT_INO)
        start = fs->dir_group = (fs->dir_group + 1) % fs->groups;
    for (uint32_t k = 0; k < fs->groups; k++) {
        uint32_t g = (start + k) % fs->groups, bit;
        struct group gr;
        int err = group_get(fs, g, &gr);
        if (err)
            return err;
        if (!gr.free_inodes)
            continue;
        if ((uint64_t)g * fs->inodes_per_group >= fs->inodes_count)
            continue;                                   /* (groups past the inode count hold none) */
        uint32_t count = fs->inodes_count - g * fs->inodes_per_group;
        count = count < fs->inodes_per_group ? count : fs->inodes_per_group;
        uint32_t from = g == 0 ? fs->first_ino - 1 : 0;
        int found = find_clear(fs, boff(fs, gr.inode_bitmap), from, count, &bit);
        if (found < 0)
            return found;
        if (!found)
            continue;
        uint32_t ino = g * fs->inodes_per_group + bit + 1;
        uint64_t off;
        uint8_t r[IN_BASE];
        if ((err = ext2_inode_offset(fs, ino, &off)) != 0 || (err = rd(fs, off, r, sizeof(r))) != 0)
            return err;
        if (le16(r + IN_LINKS) && !le32(r + IN_DTIME) && le16(r + IN_MODE))
            return -EXT2_EUCLEAN;                       /* (the bitmap frees an inode in use) */
        if ((err = flip(fs, boff(fs, gr.inode_bitmap), bit, 1)) != 0 || (err = group_add(fs, g, 0, -1, dir)) != 0)
            return err;
        *out = ino;
        return 0;
    }
    return -EXT2_ENOSPC;
}

/* Inode ino made new: zeroed (a large inode with e2fsprogs' extra size),
 * one link, the times now. */
static int inode_new(struct ext2_fs *fs, uint32_t ino, uint32_t mode, uint32_t uid, uint32_t gid,
                     struct ext2_inode *in)
{
    uint64_t off;
    int err = ext2_inode_offset(fs, ino, &off);
    if (err || (err = zero(fs, off, fs->inode_size)) != 0)
        return err;
    if (fs->inode_size >= IN_BASE + IN_EXTRA) {
        uint8_t x[2];
        put16(x, IN_EXTRA);
        if ((err = wr(fs, off + IN_BASE, x, 2)) != 0)
            return err;
    }
    if ((err = wr32(fs, off + IN_GENERATION, fs->now * 2654435761u ^ ino)) != 0)
        return err;
    memset(in, 0, sizeof(*in));
    in->ino = ino;
    in->mode = (uint16_t)mode;
    in->uid = uid;
    in->gid = gid;
    in->links = 1;
    in->atime = in->ctime = in->mtime = fs->now;
    return 0;
}

/* The first block to look for a file's blocks from: its group's. */
static uint32_t goal_of(const struct ext2_fs *fs, const struct ext2_inode *in)
{
    return fs->first_data_block + (in->ino - 1) / fs->inodes_per_group * fs->blocks_per_group;
}

int ext2_write(struct ext2_fs *fs, struct ext2_inode *in, uint64_t off, const void *buf, uint32_t len,
               uint32_t *put)
{
    *put = 0;
    if (!fs->writable)
        return -EXT2_EROFS;
    if (kind(in) != EXT2_S_IFREG)
        return kind(in) == EXT2_S_IFDIR ? -EXT2_EISDIR : -EXT2_EINVAL;
    if ((in->flags & IMMUTABLE_FL) || ((in->flags & APPEND_FL) && off != in->size))
        return -EXT2_EPERM;
    uint64_t most = ext2_max_size(fs);
    if (len && off >= most)
        return -EXT2_EFBIG;
    if (len > most - off)
        len = (uint32_t)(most - off);
    const uint8_t *src = buf;
    uint32_t done = 0, goal = goal_of(fs, in), pb;
    uint64_t blocks = in->blocks;
    int err = 0;
    while (done < len) {
        uint64_t at = off + done;
        uint32_t from = (uint32_t)(at % fs->block_size), n = fs->block_size - from;
        n = n < len - done ? n : len - done;
        if (done == 0 && at / fs->block_size) {
            uint32_t prev;                              /* (look for blocks after the one before) */
            if ((err = map_block(fs, in, at / fs->block_size - 1, 0, 0, &goal, &prev)) != 0)
                break;
            goal = prev ? prev + 1 : goal;
        }
        if ((err = map_block(fs, in, at / fs->block_size, 1, n == fs->block_size, &goal, &pb)) != 0 ||
            (err = wr(fs, boff(fs, pb) + from, src + done, n)) != 0)
            break;
        done += n;
    }
    if (err == -EXT2_EAGAIN)
        return err;
    if (done || in->blocks != blocks) {
        if (off + done > in->size)
            in->size = off + done;
        if (done)
            in->mtime = in->ctime = fs->now;
        int werr = ext2_inode_write(fs, in);
        if (werr)
            return werr;
    }
    *put = done;
    return done ? 0 : err;
}

int ext2_truncate(struct ext2_fs *fs, struct ext2_inode *in, uint64_t size)
{
    if (!fs->writable)
        return -EXT2_EROFS;
    if (kind(in) != EXT2_S_IFREG)
        return kind(in) == EXT2_S_IFDIR ? -EXT2_EISDIR : -EXT2_EINVAL;
    if (fixed(in))
        return -EXT2_EPERM;
    if (size > ext2_max_size(fs))
        return -EXT2_EFBIG;
    int err;
    if (size < in->size) {
        uint32_t part = (uint32_t)(size % fs->block_size), goal = 0, pb;
        if (part) {
            if ((err = map_block(fs, in, size / fs->block_size, 0, 0, &goal, &pb)) != 0)
                return err;
            if (pb && (err = zero(fs, boff(fs, pb) + part, fs->block_size - part)) != 0)
                return err;
        }
        if ((err = free_from(fs, in, (size + fs->block_size - 1) / fs->block_size)) != 0)
            return err;
    }
    in->size = size;
    in->mtime = in->ctime = fs->now;
    return ext2_inode_write(fs, in);
}

/* ---- Directories ----------------------------------------------------- */

static uint32_t rec_need(uint32_t nlen) { return (8 + nlen + 3) & ~3u; }
/* A record length as the disk has it (a whole 64 KiB block: 65535, Linux's ext2_rec_len_to_disk). */
static uint32_t rec_to_disk(uint32_t rec) { return rec == 65536 ? 65535 : rec; }

uint32_t ext2_file_type(uint32_t mode)
{
    switch (mode & EXT2_S_IFMT) {
    case EXT2_S_IFREG: return 1;
    case EXT2_S_IFDIR: return 2;
    case EXT2_S_IFCHR: return 3;
    case EXT2_S_IFBLK: return 4;
    case EXT2_S_IFIFO: return 5;
    case EXT2_S_IFSOCK: return 6;
    case EXT2_S_IFLNK: return 7;
    default: return 0;
    }
}

/* A directory record where it lies. */
struct dent {
    uint32_t pb, at, prev;          /* its block, its offset in it, the offset of the record before (or NONE) */
    uint32_t ino, rec, nlen;
};
#define NONE 0xffffffffu

/* Directory records in order: with name, the one called so (1, or 0 when
 * there is none); without, the first with room for a record of `need`
 * bytes (an empty one, or a live one longer than it needs). */
static int dir_find(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len, uint32_t need,
                    struct dent *e)
{
    if (kind(dir) != EXT2_S_IFDIR)
        return -EXT2_ENOTDIR;
    if (dir->size % fs->block_size || dir->size > (uint64_t)fs->blocks_count * fs->block_size)
        return -EXT2_EUCLEAN;
    uint32_t goal = 0;
    char n[EXT2_NAME_MAX];
    for (uint64_t lb = 0; lb < dir->size / fs->block_size; lb++) {
        uint32_t pb, prev = NONE;
        int err = map_block(fs, dir, lb, 0, 0, &goal, &pb);
        if (err)
            return err;
        if (!pb)
            return -EXT2_EUCLEAN;
        const uint8_t *blk = NULL;                      /* the block in place, when io can say where */
        if (fs->io.map && (err = fs->io.map(fs->io.ctx, boff(fs, pb), fs->block_size, (const void **)&blk)) != 0)
            return err;
        for (uint32_t at = 0; at < fs->block_size;) {
            uint32_t ino, rec, nlen;
            uint8_t type;
            if ((err = blk ? ext2_rec_parse(fs, blk + at, at, &ino, &rec, &nlen, &type) :
                             ext2_rec_read(fs, pb, at, &ino, &rec, &nlen, &type)) != 0)
                return err;
            if (ino > fs->inodes_count)
                return -EXT2_EUCLEAN;
            e->pb = pb, e->at = at, e->prev = prev, e->ino = ino, e->rec = rec, e->nlen = nlen;
            if (name && ino && nlen == len) {
                const char *there = blk ? (const char *)blk + at + 8 : n;
                if (!blk && (err = rd(fs, boff(fs, pb) + at + 8, n, nlen)) != 0)
                    return err;
                if (memcmp(there, name, len) == 0)
                    return 1;
            }
            if (!name && rec - (ino ? rec_need(nlen) : 0) >= need)
                return 1;
            prev = at;
            at += rec;
        }
    }
    return 0;
}

/* A record's header and name at byte `at` of block pb. */
static int rec_write(struct ext2_fs *fs, uint32_t pb, uint32_t at, uint32_t ino, uint32_t rec, const char *name,
                     uint32_t nlen, uint32_t type)
{
    uint8_t h[8];
    put32(h, ino);
    put16(h + 4, rec_to_disk(rec));
    h[6] = (uint8_t)nlen;
    h[7] = (fs->feature_incompat & INCOMPAT_FILETYPE) ? (uint8_t)type : (uint8_t)(nlen >> 8);
    int err = wr(fs, boff(fs, pb) + at, h, 8);
    return err || !nlen ? err : wr(fs, boff(fs, pb) + at + 8, name, nlen);
}

/* A directory changed: its times, and its hash index (if it had one) dropped as stale. */
static int dir_touch(struct ext2_fs *fs, struct ext2_inode *dir)
{
    dir->mtime = dir->ctime = fs->now;
    dir->flags &= ~INDEX_FL;
    return ext2_inode_write(fs, dir);
}

static int dir_add(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len, uint32_t ino,
                   uint32_t type)
{
    uint32_t need = rec_need(len);
    struct dent e;
    int err, r = dir_find(fs, dir, NULL, 0, need, &e);
    if (r < 0)
        return r;
    if (r == 1 && !e.ino) {
        err = rec_write(fs, e.pb, e.at, ino, e.rec, name, len, type);
    } else if (r == 1) {
        uint32_t used = rec_need(e.nlen);               /* (split: the live record keeps what it needs) */
        uint8_t h[2];
        put16(h, used);
        err = wr(fs, boff(fs, e.pb) + e.at + 4, h, 2);
        err = err ? err : rec_write(fs, e.pb, e.at + used, ino, e.rec - used, name, len, type);
    } else {
        uint32_t goal = goal_of(fs, dir), pb;           /* (a new block at the end) */
        uint64_t blocks = dir->blocks;
        if ((err = map_block(fs, dir, dir->size / fs->block_size, 1, 0, &goal, &pb)) != 0) {
            int werr = dir->blocks != blocks ? ext2_inode_write(fs, dir) : 0;
            return werr ? werr : err;                   /* (indirect blocks it did get are the directory's) */
        }
        dir->size += fs->block_size;
        err = rec_write(fs, pb, 0, ino, fs->block_size, name, len, type);
    }
    return err ? err : dir_touch(fs, dir);
}

static int dir_remove(struct ext2_fs *fs, struct ext2_inode *dir, const struct dent *e)
{
    int err;
    if (e->prev == NONE) {
        err = wr32(fs, boff(fs, e->pb) + e->at, 0);     /* (a block's first record: emptied) */
    } else {
        uint8_t h[2];                                   /* (else merged into the one before) */
        uint32_t rec = e->at - e->prev + e->rec;
        put16(h, rec_to_disk(rec));
        err = wr(fs, boff(fs, e->pb) + e->prev + 4, h, 2);
    }
    return err ? err : dir_touch(fs, dir);
}

/* Point a record at another inode; the directory's times change with `touch` (not for a moved directory's ".."). */
static int dir_set(struct ext2_fs *fs, struct ext2_inode *dir, const struct dent *e, uint32_t ino, uint32_t type,
                   int touch)
{
    int err = wr32(fs, boff(fs, e->pb) + e->at, ino);
    if (!err && (fs->feature_incompat & INCOMPAT_FILETYPE)) {
        uint8_t t = (uint8_t)type;
        err = wr(fs, boff(fs, e->pb) + e->at + 7, &t, 1);
    }
    return err || !touch ? err : dir_touch(fs, dir);
}

/* Whether a directory holds nothing but "." and "..": 1, 0, or an error. */
static int dir_empty(const struct ext2_fs *fs, const struct ext2_inode *dir)
{
    uint64_t pos = 0;
    char n[EXT2_NAME_MAX];
    uint32_t ino, len;
    uint8_t type;
    int r;
    while ((r = ext2_readdir(fs, dir, &pos, &ino, &type, n, &len)) == 1)
        if (!(len == 1 && n[0] == '.') && !(len == 2 && n[0] == '.' && n[1] == '.'))
            return 0;
    return r ? r : 1;
}

static int is_dots(const char *name, uint32_t len)
{
    return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

/* A name a new entry may have. */
static int name_ok(const char *name, uint32_t len)
{
    if (!len)
        return -EXT2_ENOENT;
    if (len > EXT2_NAME_MAX)
        return -EXT2_ENAMETOOLONG;
    for (uint32_t i = 0; i < len; i++)
        if (name[i] == '/' || name[i] == 0)
            return -EXT2_EINVAL;
    return is_dots(name, len) ? -EXT2_EEXIST : 0;
}

/* Checks before a new name goes into dir. */
static int may_add(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len)
{
    if (!fs->writable)
        return -EXT2_EROFS;
    if (kind(dir) != EXT2_S_IFDIR)
        return -EXT2_ENOTDIR;
    if (!dir->links)
        return -EXT2_ENOENT;                            /* (a removed directory takes no names) */
    if (dir->flags & IMMUTABLE_FL)
        return -EXT2_EPERM;
    int err = name_ok(name, len);
    if (err)
        return err;
    struct dent e;
    err = dir_find(fs, dir, name, len, 0, &e);
    return err == 1 ? -EXT2_EEXIST : err;
}

int ext2_release(struct ext2_fs *fs, struct ext2_inode *in)
{
    if (!fs->writable)
        return -EXT2_EROFS;
    if (in->links)
        return -EXT2_EINVAL;
    uint32_t k = kind(in);
    uint64_t ea = in->file_acl ? sectors(fs) : 0;
    int err = 0, fast_link = k == EXT2_S_IFLNK && in->size < 60 && in->blocks == ea;
    if (k == EXT2_S_IFREG || k == EXT2_S_IFDIR || (k == EXT2_S_IFLNK && !fast_link))
        err = free_from(fs, in, 0);
    if (!err && in->file_acl) {
        uint32_t magic, refs;                           /* (an extended attribute block, maybe shared) */
        uint32_t b = in->file_acl;
        if ((err = check_block(fs, b)) != 0 || (err = rd32(fs, boff(fs, b), &magic)) != 0 ||
            (err = rd32(fs, boff(fs, b) + 4, &refs)) != 0)
            return err;
        if (magic != EA_MAGIC || !refs)
            return -EXT2_EUCLEAN;
        err = refs > 1 ? wr32(fs, boff(fs, b) + 4, refs - 1) : free_block(fs, b);
        in->blocks -= in->blocks >= sectors(fs) ? sectors(fs) : in->blocks;
        in->file_acl = 0;
    }
    if (err)
        return err;
    if (k == EXT2_S_IFREG || k == EXT2_S_IFDIR)
        in->size = 0;
    in->dtime = fs->now;
    uint64_t off;
    if ((err = ext2_inode_write(fs, in)) != 0 || (err = ext2_inode_offset(fs, in->ino, &off)) != 0 ||
        (err = wr32(fs, off + IN_DTIME, fs->now ? fs->now : 1)) != 0)
        return err;
    uint32_t g = (in->ino - 1) / fs->inodes_per_group;
    struct group gr;
    if ((err = group_get(fs, g, &gr)) != 0 ||
        (err = flip(fs, boff(fs, gr.inode_bitmap), (in->ino - 1) % fs->inodes_per_group, 0)) != 0)
        return err;
    return group_add(fs, g, 0, 1, k == EXT2_S_IFDIR ? -1 : 0);
}

/* Take back a new inode whose name could not be made. */
static int undo_new(struct ext2_fs *fs, struct ext2_inode *in, int err)
{
    in->links = 0;
    int e2 = ext2_release(fs, in);
    return e2 == -EXT2_EAGAIN ? e2 : err;
}

int ext2_create(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len, uint32_t mode,
                uint32_t uid, uint32_t gid, uint32_t rdev, struct ext2_inode *out)
{
    uint32_t k = mode & EXT2_S_IFMT, ino;
    if (!k)
        k = EXT2_S_IFREG, mode |= k;
    if (k == EXT2_S_IFLNK || ext2_file_type(k) == 0)
        return -EXT2_EINVAL;
    int err = may_add(fs, dir, name, len);
    if (err)
        return err;
    if (k == EXT2_S_IFDIR && dir->links >= EXT2_LINK_MAX)
        return -EXT2_EMLINK;
    if ((err = alloc_inode(fs, dir->ino, k == EXT2_S_IFDIR, &ino)) != 0 ||
        (err = inode_new(fs, ino, mode & 0xffffu, uid, gid, out)) != 0)
        return err;
    if (k == EXT2_S_IFCHR || k == EXT2_S_IFBLK) {
        uint32_t major = (rdev >> 8) & 0xfffu, minor = (rdev & 0xffu) | ((rdev >> 12) & 0xfff00u);
        if (major < 256 && minor < 256)
            out->block[0] = major << 8 | minor;         /* (Linux's old encoding when it fits, else the new) */
        else
            out->block[1] = rdev;
    }
    if (k == EXT2_S_IFDIR) {
        uint32_t goal = goal_of(fs, out), pb;
        if ((err = map_block(fs, out, 0, 1, 0, &goal, &pb)) != 0)
            return undo_new(fs, out, err);
        out->size = fs->block_size;
        out->links = 2;
        if ((err = rec_write(fs, pb, 0, ino, 12, ".", 1, 2)) != 0 ||
            (err = rec_write(fs, pb, 12, dir->ino, fs->block_size - 12, "..", 2, 2)) != 0)
            return err;
    }
    if ((err = ext2_inode_write(fs, out)) != 0)
        return err;
    if ((err = dir_add(fs, dir, name, len, ino, ext2_file_type(k))) != 0)
        return err == -EXT2_EAGAIN ? err : undo_new(fs, out, err);
    if (k == EXT2_S_IFDIR) {
        dir->links++;
        return ext2_inode_write(fs, dir);
    }
    return 0;
}

int ext2_symlink(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len, const char *target,
                 uint32_t tlen, uint32_t uid, uint32_t gid, struct ext2_inode *out)
{
    int err = may_add(fs, dir, name, len);
    if (err)
        return err;
    if (!tlen)
        return -EXT2_ENOENT;
    if (tlen >= fs->block_size)
        return -EXT2_ENAMETOOLONG;
    uint32_t ino;
    if ((err = alloc_inode(fs, dir->ino, 0, &ino)) != 0 ||
        (err = inode_new(fs, ino, EXT2_S_IFLNK | 0777u, uid, gid, out)) != 0)
        return err;
    out->size = tlen;
    if (tlen < 60) {
        uint8_t b[60] = { 0 };                          /* (a fast link: the target in the pointers) */
        memcpy(b, target, tlen);
        for (unsigned k = 0; k < EXT2_N_BLOCKS; k++)
            out->block[k] = le32(b + 4 * k);
    } else {
        uint32_t goal = goal_of(fs, out), pb;
        if ((err = map_block(fs, out, 0, 1, 0, &goal, &pb)) != 0 || (err = wr(fs, boff(fs, pb), target, tlen)) != 0)
            return undo_new(fs, out, err);
    }
    if ((err = ext2_inode_write(fs, out)) != 0)
        return err;
    if ((err = dir_add(fs, dir, name, len, ino, 7)) != 0)
        return err == -EXT2_EAGAIN ? err : undo_new(fs, out, err);
    return 0;
}

int ext2_link(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len, struct ext2_inode *in)
{
    int err = may_add(fs, dir, name, len);
    if (err)
        return err;
    if (kind(in) == EXT2_S_IFDIR || fixed(in))
        return -EXT2_EPERM;
    if (!in->links)
        return -EXT2_ENOENT;
    if (in->links >= EXT2_LINK_MAX)
        return -EXT2_EMLINK;
    if ((err = dir_add(fs, dir, name, len, in->ino, ext2_file_type(in->mode))) != 0)
        return err;
    in->links++;
    in->ctime = fs->now;
    return ext2_inode_write(fs, in);
}

/* The entry `name` of dir and its inode. */
static int entry(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len, struct dent *e,
                 struct ext2_inode *in)
{
    if (!fs->writable)
        return -EXT2_EROFS;
    if (!len)
        return -EXT2_ENOENT;
    if (len > EXT2_NAME_MAX)
        return -EXT2_ENAMETOOLONG;
    int r = dir_find(fs, dir, name, len, 0, e);
    if (r <= 0)
        return r ? r : -EXT2_ENOENT;
    r = ext2_inode(fs, e->ino, in);
    if (r)
        return r == -EXT2_ENOENT ? -EXT2_EUCLEAN : r;   /* (a name of a free inode) */
    return fixed(dir) || fixed(in) ? -EXT2_EPERM : 0;  /* (as Linux's may_delete) */
}

int ext2_unlink(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len,
                struct ext2_inode *victim)
{
    struct dent e;
    if (is_dots(name, len))
        return -EXT2_EISDIR;
    int err = entry(fs, dir, name, len, &e, victim);
    if (err)
        return err;
    if (kind(victim) == EXT2_S_IFDIR)
        return -EXT2_EISDIR;
    if ((err = dir_remove(fs, dir, &e)) != 0)
        return err;
    victim->links--;
    victim->ctime = fs->now;
    return ext2_inode_write(fs, victim);
}

int ext2_rmdir(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len)
{
    struct dent e;
    struct ext2_inode victim;
    if (len == 1 && name[0] == '.')
        return -EXT2_EINVAL;
    if (len == 2 && name[0] == '.' && name[1] == '.')
        return -EXT2_ENOTEMPTY;
    int err = entry(fs, dir, name, len, &e, &victim);
    if (err)
        return err;
    if (kind(&victim) != EXT2_S_IFDIR)
        return -EXT2_ENOTDIR;
    if ((err = dir_empty(fs, &victim)) <= 0)
        return err ? err : -EXT2_ENOTEMPTY;
    if ((err = dir_remove(fs, dir, &e)) != 0)
        return err;
    if (dir->links > 2)
        dir->links--;                                   /* (its ".." is gone) */
    if ((err = ext2_inode_write(fs, dir)) != 0)
        return err;
    victim.links = 0;
    return ext2_release(fs, &victim);
}

/* Whether directory `d` is `anc` or lies below it (following ".."). */
static int below(struct ext2_fs *fs, uint32_t d, uint32_t anc)
{
    for (uint32_t steps = 0; steps <= fs->inodes_count && steps < 65536; steps++) {
        if (d == anc)
            return 1;
        if (d == EXT2_ROOT_INO)
            return 0;
        struct ext2_inode in;
        int err = ext2_inode(fs, d, &in);
        if (err || (err = ext2_lookup(fs, &in, "..", 2, &d)) != 0)
            return err == -EXT2_ENOENT ? -EXT2_EUCLEAN : err;
    }
    return -EXT2_EUCLEAN;                               /* (".." goes round in a loop) */
}

int ext2_rename(struct ext2_fs *fs, struct ext2_inode *odir, const char *on, uint32_t olen,
                struct ext2_inode *ndir, const char *nn, uint32_t nlen, struct ext2_inode *victim)
{
    struct ext2_inode src, *od = odir->ino == ndir->ino ? ndir : odir;
    struct dent es, et;
    victim->ino = 0;
    if (kind(od) != EXT2_S_IFDIR || kind(ndir) != EXT2_S_IFDIR)
        return -EXT2_ENOTDIR;
    if (is_dots(on, olen) || is_dots(nn, nlen))
        return -EXT2_EBUSY;                             /* (as Linux's VFS) */
    if (!ndir->links)
        return -EXT2_ENOENT;                            /* (a removed directory takes no names) */
    int err = entry(fs, od, on, olen, &es, &src);
    if (err)
        return err;
    if ((err = name_ok(nn, nlen)) != 0)
        return err;
    if (ndir->flags & IMMUTABLE_FL)
        return -EXT2_EPERM;
    int is_dir = kind(&src) == EXT2_S_IFDIR, moves = is_dir && od->ino != ndir->ino;
    if (moves && (err = below(fs, ndir->ino, src.ino)) != 0)
        return err < 0 ? err : -EXT2_EINVAL;            /* (not into itself or below it) */
    int r = dir_find(fs, ndir, nn, nlen, 0, &et);
    if (r < 0)
        return r;
    if (r == 1) {
        if (et.ino == src.ino)
            return 0;                                   /* (two names of one file: nothing to do) */
        if ((err = ext2_inode(fs, et.ino, victim)) != 0)
            return err == -EXT2_ENOENT ? -EXT2_EUCLEAN : err;
        if (fixed(ndir) || fixed(victim))
            return -EXT2_EPERM;
        if (kind(victim) == EXT2_S_IFDIR && od->ino != ndir->ino && (err = below(fs, od->ino, victim->ino)) != 0)
            return err < 0 ? err : -EXT2_ENOTEMPTY;     /* (over a directory the source lies below: Linux's "trap") */
        if (is_dir && kind(victim) != EXT2_S_IFDIR)
            return -EXT2_ENOTDIR;
        if (!is_dir && kind(victim) == EXT2_S_IFDIR)
            return -EXT2_EISDIR;
        if (is_dir && (err = dir_empty(fs, victim)) <= 0)
            return err ? err : -EXT2_ENOTEMPTY;
        if ((err = dir_set(fs, ndir, &et, src.ino, ext2_file_type(src.mode), 1)) != 0)
            return err;
        if (kind(victim) == EXT2_S_IFDIR) {
            victim->links = 0;
            if (ndir->links > 2)
                ndir->links--;                          /* (the victim's ".." is gone) */
        } else {
            victim->links--;
        }
        victim->ctime = fs->now;
        if ((err = ext2_inode_write(fs, victim)) != 0)
            return err;
    } else {
        if (moves && ndir->links >= EXT2_LINK_MAX)
            return -EXT2_EMLINK;
        if ((err = dir_add(fs, ndir, nn, nlen, src.ino, ext2_file_type(src.mode))) != 0)
            return err;
    }
    /* The new name is in: now the old one goes (found again: adding may have moved records). */
    if ((r = dir_find(fs, od, on, olen, 0, &es)) <= 0)
        return r ? r : -EXT2_EUCLEAN;
    if ((err = dir_remove(fs, od, &es)) != 0)
        return err;
    src.ctime = fs->now;
    if (moves) {
        if ((r = dir_find(fs, &src, "..", 2, 0, &es)) <= 0)
            return r ? r : -EXT2_EUCLEAN;
        if ((err = dir_set(fs, &src, &es, ndir->ino, 2, 0)) != 0)
            return err;
        if (od->links > 2)
            od->links--;
        ndir->links++;
        if ((err = ext2_inode_write(fs, od)) != 0 || (err = ext2_inode_write(fs, ndir)) != 0)
            return err;
    }
    if ((err = ext2_inode_write(fs, &src)) != 0)
        return err;
    if (od != odir)
        return 0;
    *odir = *ndir;                                      /* (one directory: both the caller's copies as it is) */
    return 0;
}

/* ---- Orphans, mounting ----------------------------------------------- */

static int dtime_of(const struct ext2_fs *fs, uint32_t ino, uint32_t *v)
{
    uint64_t off;
    int err = ext2_inode_offset(fs, ino, &off);
    return err ? err : rd32(fs, off + IN_DTIME, v);
}

static int dtime_set(struct ext2_fs *fs, uint32_t ino, uint32_t v)
{
    uint64_t off;
    int err = ext2_inode_offset(fs, ino, &off);
    return err ? err : wr32(fs, off + IN_DTIME, v);
}

int ext2_orphan_add(struct ext2_fs *fs, struct ext2_inode *in)
{
    if (!fs->writable)
        return -EXT2_EROFS;
    if (in->links)
        return -EXT2_EINVAL;
    if (!fs->rev)
        return 0;                                       /* (revision 0 has no orphan list) */
    int err = dtime_set(fs, in->ino, fs->last_orphan);
    if (err || (err = wr32(fs, SB_OFFSET + SB_LAST_ORPHAN, in->ino)) != 0)
        return err;
    fs->last_orphan = in->ino;
    return 0;
}

int ext2_orphan_del(struct ext2_fs *fs, struct ext2_inode *in)
{
    if (!fs->writable)
        return -EXT2_EROFS;
    if (!fs->rev)
        return 0;                                       /* (never on a list: see ext2_orphan_add) */
    uint32_t prev = 0, cur = fs->last_orphan;
    for (uint32_t steps = 0; cur && steps < fs->inodes_count; steps++) {
        uint32_t next;
        int err = dtime_of(fs, cur, &next);
        if (err)
            return err;
        if (cur == in->ino) {
            if (prev)
                err = dtime_set(fs, prev, next);
            else if ((err = wr32(fs, SB_OFFSET + SB_LAST_ORPHAN, next)) == 0)
                fs->last_orphan = next;
            return err ? err : dtime_set(fs, cur, 0);
        }
        prev = cur;
        cur = next;
    }
    return -EXT2_ENOENT;
}

int ext2_mount_rw(struct ext2_fs *fs)
{
    if (!fs->io.write || fs->read_only)
        return -EXT2_EROFS;
    /* The counts as the groups have them (the superblock's may be stale after a crash). */
    uint64_t fb = 0, fi = 0;
    for (uint32_t g = 0; g < fs->groups; g++) {
        struct group gr;
        int err = group_get(fs, g, &gr);
        if (err)
            return err;
        fb += gr.free_blocks;
        fi += gr.free_inodes;
    }
    if (fb > fs->blocks_count || fi > fs->inodes_count)
        return -EXT2_EUCLEAN;
    uint8_t m[2];
    int err = rd(fs, SB_OFFSET + SB_MNT_COUNT, m, 2);
    if (err)
        return err;
    put16(m, le16(m) + 1);
    uint8_t st[2];
    put16(st, fs->state & ~STATE_VALID);
    fs->writable = 1;
    fs->free_blocks = (uint32_t)fb;
    fs->free_inodes = (uint32_t)fi;
    if ((err = sb_counts(fs)) != 0 || (err = wr(fs, SB_OFFSET + SB_MNT_COUNT, m, 2)) != 0 ||
        (err = wr(fs, SB_OFFSET + SB_STATE, st, 2)) != 0 || (err = wr32(fs, SB_OFFSET + SB_MTIME, fs->now)) != 0) {
        fs->writable = 0;
        return err;
    }
    /* Files unlinked while open when the machine stopped: release them.
     * Anything amiss in the list (a link out of range, an inode with links
     * or free in its bitmap) drops the rest of it, and the file system is
     * marked as having errors: e2fsck finds what the list held. */
    for (uint32_t steps = 0; fs->last_orphan && !err; steps++) {
        uint32_t ino = fs->last_orphan;
        uint64_t off;
        uint8_t r[IN_BASE], bit = 0;
        struct ext2_inode in;
        struct group gr;
        if (steps >= fs->inodes_count || ino > fs->inodes_count) {
            err = -EXT2_EUCLEAN;
            break;
        }
        uint32_t g = (ino - 1) / fs->inodes_per_group, i = (ino - 1) % fs->inodes_per_group;
        if ((err = ext2_inode_offset(fs, ino, &off)) != 0 || (err = rd(fs, off, r, sizeof(r))) != 0 ||
            (err = group_get(fs, g, &gr)) != 0 || (err = rd(fs, boff(fs, gr.inode_bitmap) + i / 8, &bit, 1)) != 0)
            break;
        ext2_inode_decode(r, ino, &in);
        if (in.links || !in.mode || !(bit >> (i % 8) & 1)) {
            err = -EXT2_EUCLEAN;
            break;
        }
        if ((err = wr32(fs, SB_OFFSET + SB_LAST_ORPHAN, in.dtime)) != 0)
            break;
        fs->last_orphan = in.dtime;
        err = ext2_release(fs, &in);
    }
    if (err && err != -EXT2_EAGAIN && err != -EXT2_EIO) {
        fs->last_orphan = 0;
        fs->state |= STATE_ERRORS;
        uint8_t st2[2];
        put16(st2, (fs->state & ~STATE_VALID));
        if ((err = wr32(fs, SB_OFFSET + SB_LAST_ORPHAN, 0)) == 0)
            err = wr(fs, SB_OFFSET + SB_STATE, st2, 2);
    }
    if (err)
        fs->writable = 0;
    return err;
}

int ext2_unmount(struct ext2_fs *fs)
{
    if (!fs->writable)
        return 0;
    uint8_t st[2];
    put16(st, fs->state);
    int err = sb_counts(fs);
    if (err || (err = wr(fs, SB_OFFSET + SB_STATE, st, 2)) != 0 || (err = wr32(fs, SB_OFFSET + SB_WTIME, fs->now)))
        return err;
    fs->writable = 0;
    return 0;
}
