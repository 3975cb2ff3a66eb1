/*
 * Reading ext2 (lib/include/ext2.h). The layout is the one of e2fsprogs'
 * lib/ext2fs/ext2_fs.h and Linux's fs/ext2: the superblock at byte 1024,
 * the group descriptors in the block after it, each group's inode table,
 * twelve direct block pointers and three indirect ones an inode, and
 * directories as records of (inode, record length, name length, type).
 * Little-endian on disk, as this machine is; read byte by byte anyway.
 */
#include "ext2_disk.h"
#include "pstring.h"

static int bad(struct ext2_fs *fs, const char *why)
{
    fs->why = why;
    return -EXT2_EUCLEAN;
}

int ext2_mount(struct ext2_fs *fs, const struct ext2_io *io)
{
    uint8_t sb[1024];
    memset(fs, 0, sizeof(*fs));
    fs->io = *io;
    int err = io->read(io->ctx, SB_OFFSET, sb, sizeof(sb));
    if (err)
        return err;
    if (le16(sb + 56) != SB_MAGIC)
        return (fs->why = "no ext2 superblock (magic)"), -EXT2_EINVAL;
    uint32_t log = le32(sb + 24);
    if (log > 6)
        return bad(fs, "block size past 64 KiB");
    fs->block_size = 1024u << log;
    fs->inodes_count = le32(sb + 0);
    fs->blocks_count = le32(sb + 4);
    fs->reserved_blocks = le32(sb + 8);
    fs->free_blocks = le32(sb + 12);
    fs->free_inodes = le32(sb + 16);
    fs->first_data_block = le32(sb + 20);
    fs->blocks_per_group = le32(sb + 32);
    fs->inodes_per_group = le32(sb + 40);
    fs->rev = le32(sb + 76);
    fs->state = le16(sb + SB_STATE);
    if (fs->rev > 1)
        return bad(fs, "revision past 1");
    fs->inode_size = fs->rev ? le16(sb + 88) : 128;
    fs->first_ino = fs->rev ? le32(sb + 84) : 11;
    if (fs->rev) {
        fs->feature_compat = le32(sb + 92);
        fs->feature_incompat = le32(sb + 96);
        fs->feature_ro_compat = le32(sb + 100);
        memcpy(fs->uuid, sb + 104, 16);
        memcpy(fs->label, sb + 120, 16);
        fs->last_orphan = le32(sb + SB_LAST_ORPHAN);
        fs->backup_bgs[0] = le32(sb + SB_BACKUP_BGS);
        fs->backup_bgs[1] = le32(sb + SB_BACKUP_BGS + 4);
        fs->overhead = le32(sb + SB_OVERHEAD);
    }
    if (fs->feature_incompat & INCOMPAT_RECOVER)
        return (fs->why = "its journal needs recovery (an ext3/4 file system not cleanly unmounted)"), -EXT2_EOPNOTSUPP;
    if (fs->feature_incompat & ~INCOMPAT_KNOWN)
        return (fs->why = "incompatible features (ext4's extents, 64bit, flex_bg, meta_bg, ...)"), -EXT2_EOPNOTSUPP;
    fs->read_only = fs->feature_ro_compat & ~RO_KNOWN;
    if (fs->first_data_block != (fs->block_size == 1024 ? 1u : 0u))
        return bad(fs, "first data block");
    if (fs->blocks_count <= fs->first_data_block || fs->inodes_count < EXT2_ROOT_INO)
        return bad(fs, "block or inode count");
    if (!fs->blocks_per_group || fs->blocks_per_group > 8 * fs->block_size)
        return bad(fs, "blocks per group (more than a bitmap block holds)");
    if (!fs->inodes_per_group || fs->inodes_per_group > 8 * fs->block_size)
        return bad(fs, "inodes per group (more than a bitmap block holds)");
    if (fs->inode_size < 128 || fs->inode_size > fs->block_size || (fs->inode_size & (fs->inode_size - 1)))
        return bad(fs, "inode size");
    if (fs->first_ino < 11 || fs->first_ino > fs->inodes_count)
        return bad(fs, "first inode");
    fs->groups = (fs->blocks_count - fs->first_data_block + fs->blocks_per_group - 1) / fs->blocks_per_group;
    if ((uint64_t)fs->groups * fs->inodes_per_group < fs->inodes_count)
        return bad(fs, "inode count against the groups");
    fs->gdt_offset = (uint64_t)(fs->first_data_block + 1) * fs->block_size;
    uint64_t gdt_blocks = ((uint64_t)fs->groups * GD_SIZE + fs->block_size - 1) / fs->block_size;
    fs->gdt_blocks = (uint32_t)gdt_blocks;
    fs->reserved_gdt = fs->rev ? le16(sb + 206) : 0;
    if (fs->first_data_block + 1 + gdt_blocks + fs->reserved_gdt > fs->blocks_count)
        return bad(fs, "group descriptors past the end");
    return 0;
}

int ext2_inode_offset(const struct ext2_fs *fs, uint32_t ino, uint64_t *off)
{
    if (ino < 1 || ino > fs->inodes_count)
        return -EXT2_ENOENT;
    uint32_t g = (ino - 1) / fs->inodes_per_group, i = (ino - 1) % fs->inodes_per_group;
    uint8_t gd[GD_SIZE];
    int err = fs->io.read(fs->io.ctx, fs->gdt_offset + (uint64_t)g * GD_SIZE, gd, GD_SIZE);
    if (err)
        return err;
    uint32_t t = le32(gd + GD_INODE_TABLE);
    uint64_t table_blocks = ((uint64_t)fs->inodes_per_group * fs->inode_size + fs->block_size - 1) / fs->block_size;
    if (t <= fs->first_data_block || t + table_blocks > fs->blocks_count)
        return -EXT2_EUCLEAN;
    *off = (uint64_t)t * fs->block_size + (uint64_t)i * fs->inode_size;
    return 0;
}

void ext2_inode_decode(const uint8_t *r, uint32_t ino, struct ext2_inode *out)
{
    memset(out, 0, sizeof(*out));
    out->ino = ino;
    out->mode = (uint16_t)le16(r + IN_MODE);
    out->uid = le16(r + IN_UID) | le16(r + IN_UID_HIGH) << 16;
    out->size = le32(r + IN_SIZE);
    out->atime = le32(r + IN_ATIME);
    out->ctime = le32(r + IN_CTIME);
    out->mtime = le32(r + IN_MTIME);
    out->dtime = le32(r + IN_DTIME);
    out->gid = le16(r + IN_GID) | le16(r + IN_GID_HIGH) << 16;
    out->links = (uint16_t)le16(r + IN_LINKS);
    out->blocks = le32(r + IN_BLOCKS) | (uint64_t)le16(r + IN_BLOCKS_HIGH) << 32;
    out->flags = le32(r + IN_FLAGS);
    out->file_acl = le32(r + IN_FILE_ACL);
    for (unsigned k = 0; k < EXT2_N_BLOCKS; k++)
        out->block[k] = le32(r + IN_BLOCK + 4 * k);
    if ((out->mode & EXT2_S_IFMT) == EXT2_S_IFREG)
        out->size |= (uint64_t)le32(r + IN_SIZE_HIGH) << 32;   /* (i_size_high: large files) */
}

/* (ext2.h) What three levels of pointers reach, unless a dense file that large
 * would hold more 512-byte sectors, its indirect blocks included, than
 * i_blocks counts in 32 bits (no huge_file here); then the most that fit. */
uint64_t ext2_max_size(const struct ext2_fs *fs)
{
    uint64_t per = fs->block_size / 4, sectors_per = fs->block_size / 512;
    uint64_t reach = 12 + per + per * per + per * per * per, meta = 3 + 2 * per + per * per;
    uint64_t limit = 0xffffffffull / sectors_per;       /* (blocks of the file, indirect ones too) */
    if (reach + meta <= limit)
        return reach * fs->block_size;
    uint64_t rest = limit - 12 - per, blocks;          /* (past the direct and single indirect ones) */
    if (rest < per * per)
        blocks = limit - (1 + 1 + (rest + per - 1) / per);
    else
        rest -= per * per, blocks = limit - (1 + 1 + per + 1 + (rest + per - 1) / per + (rest + per * per - 1) / (per * per));
    return blocks * fs->block_size;
}

/* An inode's size that no file of this file system can have: past the
 * largest, or a directory's not a whole number of blocks or larger than
 * what it holds (a directory has no holes). */
static int bad_size(const struct ext2_fs *fs, const struct ext2_inode *in)
{
    if ((in->mode & EXT2_S_IFMT) == EXT2_S_IFDIR)
        return in->size % fs->block_size || in->size > in->blocks * 512;
    return in->size > ext2_max_size(fs);
}

/* Inode ino as it is on the disk, whatever it holds. */
static int inode_raw(const struct ext2_fs *fs, uint32_t ino, struct ext2_inode *out)
{
    uint64_t off;
    int err = ext2_inode_offset(fs, ino, &off);
    if (err)
        return err;
    uint8_t r[IN_BASE];
    if ((err = fs->io.read(fs->io.ctx, off, r, sizeof(r))) != 0)
        return err;
    ext2_inode_decode(r, ino, out);
    return 0;
}

int ext2_inode(const struct ext2_fs *fs, uint32_t ino, struct ext2_inode *out)
{
    int err = inode_raw(fs, ino, out);
    if (err)
        return err;
    if (!out->links || out->dtime || !out->mode)
        return -EXT2_ENOENT;                            /* free, or deleted */
    return bad_size(fs, out) ? -EXT2_EUCLEAN : 0;
}

int ext2_inode_orphan(const struct ext2_fs *fs, uint32_t ino, struct ext2_inode *out)
{
    int err = inode_raw(fs, ino, out);
    if (err)
        return err;
    return out->links || !out->mode ? -EXT2_ENOENT : bad_size(fs, out) ? -EXT2_EUCLEAN : 0;
}

/* Entry k of indirect block `block`. */
static int pointer(const struct ext2_fs *fs, uint32_t block, uint64_t k, uint32_t *out)
{
    if (block <= fs->first_data_block || block >= fs->blocks_count)
        return -EXT2_EUCLEAN;
    uint8_t p[4];
    const void *at = NULL;
    uint64_t off = (uint64_t)block * fs->block_size + 4 * k;
    int err = fs->io.map ? fs->io.map(fs->io.ctx, off, 4, &at) : 0;     /* (in place: no copy) */
    if (!err && !at)
        err = fs->io.read(fs->io.ctx, off, p, 4);
    if (err)
        return err;
    *out = le32(at ? at : p);
    return 0;
}

int ext2_block_path(const struct ext2_fs *fs, uint64_t lblock, uint32_t idx[3], uint32_t *depth)
{
    uint64_t per = fs->block_size / 4;
    if (lblock < 12) {
        *depth = 0;
        return (int)lblock;
    }
    if ((lblock -= 12) < per) {
        *depth = 1, idx[0] = (uint32_t)lblock;
        return 12;
    }
    if ((lblock -= per) < per * per) {
        *depth = 2, idx[0] = (uint32_t)(lblock / per), idx[1] = (uint32_t)(lblock % per);
        return 13;
    }
    if ((lblock -= per * per) < per * per * per) {
        *depth = 3;
        idx[0] = (uint32_t)(lblock / (per * per)), idx[1] = (uint32_t)(lblock / per % per);
        idx[2] = (uint32_t)(lblock % per);
        return 14;
    }
    return -1;
}

int ext2_bmap(const struct ext2_fs *fs, const struct ext2_inode *in, uint64_t lblock, uint32_t *pblock)
{
    uint32_t idx[3], depth;
    int slot = ext2_block_path(fs, lblock, idx, &depth);
    if (slot < 0)
        return -EXT2_EUCLEAN;                           /* past what three levels address */
    uint32_t b = in->block[slot];
    for (uint32_t level = 0; level < depth && b; level++) {
        int err = pointer(fs, b, idx[level], &b);
        if (err)
            return err;
    }
    if (b && (b <= fs->first_data_block || b >= fs->blocks_count))
        return -EXT2_EUCLEAN;
    *pblock = b;
    return 0;
}

int ext2_read(const struct ext2_fs *fs, const struct ext2_inode *in, uint64_t off, void *buf, uint32_t len,
              uint32_t *got)
{
    uint8_t *out = buf;
    uint32_t done = 0;
    if (off >= in->size)
        len = 0;
    else if (len > in->size - off)
        len = (uint32_t)(in->size - off);
    while (done < len) {
        uint64_t at = off + done, lb = at / fs->block_size;
        uint32_t from = (uint32_t)(at % fs->block_size), n = fs->block_size - from, pb;
        n = n < len - done ? n : len - done;
        int err = ext2_bmap(fs, in, lb, &pb);
        if (err)
            return err;
        if (!pb)
            memset(out + done, 0, n);                   /* a hole */
        else if ((err = fs->io.read(fs->io.ctx, (uint64_t)pb * fs->block_size + from, out + done, n)) != 0)
            return err;
        done += n;
    }
    *got = done;
    return 0;
}

int ext2_rec_read(const struct ext2_fs *fs, uint32_t pb, uint32_t at, uint32_t *ino, uint32_t *rec, uint32_t *nlen,
                  uint8_t *type)
{
    uint8_t h[8];
    if (at + 8 > fs->block_size)
        return -EXT2_EUCLEAN;
    int err = fs->io.read(fs->io.ctx, (uint64_t)pb * fs->block_size + at, h, 8);
    return err ? err : ext2_rec_parse(fs, h, at, ino, rec, nlen, type);
}

int ext2_rec_parse(const struct ext2_fs *fs, const uint8_t *h, uint32_t at, uint32_t *ino, uint32_t *rec,
                   uint32_t *nlen, uint8_t *type)
{
    if (at + 8 > fs->block_size)
        return -EXT2_EUCLEAN;
    *ino = le32(h), *rec = le16(h + 4), *nlen = h[6];
    *type = (fs->feature_incompat & INCOMPAT_FILETYPE) ? h[7] : 0;
    if (fs->block_size == 65536 && (*rec == 65535 || *rec == 0))
        *rec = 65536;                                   /* (a whole 64 KiB block: Linux's ext2_rec_len_from_disk) */
    if (!(fs->feature_incompat & INCOMPAT_FILETYPE))
        *nlen |= (uint32_t)h[7] << 8;                   /* (revision 0: a 16-bit name length) */
    /* A record: at least its header, 4-aligned, inside its block, its
     * name inside it. Anything else ends a walk: no loop, no overrun. */
    if (*rec < 8 || *rec % 4 || at + *rec > fs->block_size || 8 + *nlen > *rec || *nlen > EXT2_NAME_MAX)
        return -EXT2_EUCLEAN;
    return 0;
}

int ext2_readdir(const struct ext2_fs *fs, const struct ext2_inode *dir, uint64_t *pos, uint32_t *ino,
                 uint8_t *type, char name[EXT2_NAME_MAX], uint32_t *len)
{
    if ((dir->mode & EXT2_S_IFMT) != EXT2_S_IFDIR)
        return -EXT2_ENOTDIR;
    if (dir->size % fs->block_size || dir->size > dir->blocks * 512 ||
        dir->size > (uint64_t)fs->blocks_count * fs->block_size)
        return -EXT2_EUCLEAN;                            /* (a directory is whole blocks, all of them held) */
    while (*pos < dir->size) {
        uint64_t at = *pos;
        uint32_t in_block = (uint32_t)(at % fs->block_size), pb;
        int err = ext2_bmap(fs, dir, at / fs->block_size, &pb);
        if (err)
            return err;
        if (!pb)
            return -EXT2_EUCLEAN;                        /* (no holes in a directory) */
        uint32_t e_ino, rec, nlen;
        uint8_t e_type;
        const uint8_t *blk = NULL;                      /* the block in place, when io can say where */
        if (fs->io.map && (err = fs->io.map(fs->io.ctx, (uint64_t)pb * fs->block_size, fs->block_size,
                                            (const void **)&blk)) != 0)
            return err;
        if ((err = blk ? ext2_rec_parse(fs, blk + in_block, in_block, &e_ino, &rec, &nlen, &e_type) :
                         ext2_rec_read(fs, pb, in_block, &e_ino, &rec, &nlen, &e_type)) != 0)
            return err;
        *pos = at + rec;
        if (!e_ino || !nlen)
            continue;                                   /* an empty record (a block's first, or removed) */
        if (e_ino > fs->inodes_count)
            return -EXT2_EUCLEAN;
        if (blk) {
            memcpy(name, blk + in_block + 8, nlen);
        } else if ((err = fs->io.read(fs->io.ctx, (uint64_t)pb * fs->block_size + in_block + 8, name, nlen)) != 0) {
            *pos = at;
            return err;
        }
        *ino = e_ino;
        *type = e_type;
        *len = nlen;
        return 1;
    }
    return 0;
}

int ext2_lookup(const struct ext2_fs *fs, const struct ext2_inode *dir, const char *name, uint32_t len,
                uint32_t *ino)
{
    if (!len || len > EXT2_NAME_MAX)
        return len ? -EXT2_ENAMETOOLONG : -EXT2_ENOENT;
    uint64_t pos = 0;
    char n[EXT2_NAME_MAX];
    uint32_t e, nlen;
    uint8_t type;
    int r;
    while ((r = ext2_readdir(fs, dir, &pos, &e, &type, n, &nlen)) == 1) {
        if (nlen == len && memcmp(n, name, len) == 0) {
            *ino = e;
            return 0;
        }
    }
    return r ? r : -EXT2_ENOENT;
}

int ext2_readlink(const struct ext2_fs *fs, const struct ext2_inode *in, char *buf, uint32_t size, uint32_t *got)
{
    if ((in->mode & EXT2_S_IFMT) != EXT2_S_IFLNK)
        return -EXT2_EINVAL;
    if (in->size > fs->block_size || in->size == 0)
        return -EXT2_EUCLEAN;
    uint32_t n = (uint32_t)in->size < size ? (uint32_t)in->size : size;
    /* A target under 60 bytes lives in i_block itself (a "fast" link),
     * unless the inode holds a block for it (its extended attributes'
     * block aside), as Linux's ext2_inode_is_fast_symlink decides. */
    uint64_t ea = in->file_acl ? fs->block_size / 512 : 0;
    if (in->size < 60 && in->blocks == ea) {
        uint8_t b[60];
        for (unsigned k = 0; k < EXT2_N_BLOCKS; k++)
            for (unsigned j = 0; j < 4; j++)
                b[4 * k + j] = (uint8_t)(in->block[k] >> (8 * j));
        memcpy(buf, b, n);
        *got = n;
        return 0;
    }
    return ext2_read(fs, in, 0, buf, n, got);
}
