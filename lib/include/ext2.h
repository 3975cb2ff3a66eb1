/*
 * Reading an ext2 file system (revision 0 or 1, as `mke2fs -t ext2` makes
 * it: sparse superblocks, large files, file types in directory entries;
 * blocks of 1 to 64 KiB), kept apart from any service so that it can be
 * checked on the host against e2fsprogs' own images and against corrupted
 * ones (tests/host/test_ext2.py). Integer arithmetic and no allocation:
 * the file system service may run inside the kernel.
 *
 * The image is reached through one callback, read(ctx, offset, buf, len),
 * answering 0 or a negated error; a service whose disk cache lacks a block
 * answers -E_AGAIN, which every function here passes up unchanged, having
 * changed nothing: the caller asks again once the block is in. Everything
 * read from the image is checked before it is used: a corrupted image
 * gives -E_BADFORMAT (with a reason in fs->why for mount), never a read
 * outside the file system or a loop without end.
 */
#ifndef PETREL_EXT2_H
#define PETREL_EXT2_H

#include <stdint.h>
#include <stddef.h>

#define EXT2_ROOT_INO       2u
#define EXT2_NAME_MAX       255u
#define EXT2_N_BLOCKS       15u

/* i_mode's type bits (as Linux's S_IF*). */
#define EXT2_S_IFMT         0170000u
#define EXT2_S_IFSOCK       0140000u
#define EXT2_S_IFLNK        0120000u
#define EXT2_S_IFREG        0100000u
#define EXT2_S_IFBLK        0060000u
#define EXT2_S_IFDIR        0040000u
#define EXT2_S_IFCHR        0020000u
#define EXT2_S_IFIFO        0010000u

struct ext2_io {
    void *ctx;
    int (*read)(void *ctx, uint64_t offset, void *buf, uint32_t len);
};

struct ext2_fs {
    struct ext2_io io;
    uint32_t block_size;
    uint32_t inodes_count, blocks_count, free_blocks, free_inodes, reserved_blocks;
    uint32_t first_data_block, blocks_per_group, inodes_per_group, groups;
    uint32_t inode_size, first_ino, rev;
    uint32_t feature_compat, feature_incompat, feature_ro_compat;
    uint32_t read_only;                 /* features this code may read but must not write (ro_compat) */
    uint64_t gdt_offset;                /* the group descriptors' byte offset */
    uint8_t uuid[16];
    char label[17];
    const char *why;                    /* why ext2_mount refused the image */
};

struct ext2_inode {
    uint32_t ino;
    uint16_t mode, links;
    uint32_t uid, gid;
    uint64_t size;
    uint32_t atime, ctime, mtime, dtime;
    uint64_t blocks;                    /* 512-byte units it holds (data and indirect blocks) */
    uint32_t flags;
    uint32_t file_acl;                  /* its extended attributes' block (0: none) */
    uint32_t block[EXT2_N_BLOCKS];
};

/* Read and check the superblock and the group descriptors' place. 0, or
 * -E_BADFORMAT (not ext2, or corrupt: fs->why says what), -E_NOSYS (an
 * incompatible feature this code does not read: fs->why names it), or an
 * error of the read callback. */
int ext2_mount(struct ext2_fs *fs, const struct ext2_io *io);
/* Inode `ino` (1 to inodes_count). -E_NOENT: out of range, or free
 * (no links, or deleted); -E_BADFORMAT: its group's descriptor is bad. */
int ext2_inode(const struct ext2_fs *fs, uint32_t ino, struct ext2_inode *out);
/* The block holding byte `lblock` * block_size of the file: *pblock, or 0
 * for a hole. -E_BADFORMAT: a pointer outside the file system. */
int ext2_bmap(const struct ext2_fs *fs, const struct ext2_inode *in, uint64_t lblock, uint32_t *pblock);
/* Up to len bytes of the file from off into buf (holes read as zeros):
 * *got bytes, fewer only at the end of the file. */
int ext2_read(const struct ext2_fs *fs, const struct ext2_inode *in, uint64_t off, void *buf, uint32_t len,
              uint32_t *got);
/* The entry of directory `dir` called name[0..len): *ino. -E_NOENT: none;
 * -E_NOTDIR (as -E_STATE): dir is not a directory. */
int ext2_lookup(const struct ext2_fs *fs, const struct ext2_inode *dir, const char *name, uint32_t len,
                uint32_t *ino);
/* The directory's next entry at or after byte *pos (start with 0): its
 * inode, type (EXT2_FT_*: 0 unknown, 1 file, 2 directory, 3 char, 4 block,
 * 5 fifo, 6 socket, 7 symlink), name (not terminated) and length; *pos
 * moves past it. 1 with an entry, 0 at the end, or an error. */
int ext2_readdir(const struct ext2_fs *fs, const struct ext2_inode *dir, uint64_t *pos, uint32_t *ino,
                 uint8_t *type, char name[EXT2_NAME_MAX], uint32_t *len);
/* A symbolic link's target into buf (size bytes; not terminated): *got. */
int ext2_readlink(const struct ext2_fs *fs, const struct ext2_inode *in, char *buf, uint32_t size, uint32_t *got);

#endif
