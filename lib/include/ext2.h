/*
 * The ext2 file system (revision 0 or 1, as `mke2fs -t ext2` makes it:
 * sparse superblocks, large files, file types in directory entries; blocks
 * of 1 to 64 KiB), read (lib/ext2.c) and written (lib/ext2_write.c), kept
 * apart from any service so that it can be checked on the host against
 * e2fsprogs: its images, e2fsck and debugfs (tests/host/test_ext2.py).
 * Integer arithmetic, small stacks and no allocation: the file system
 * service may run inside the kernel.
 *
 * The image is reached through callbacks at byte granularity, read(ctx,
 * offset, buf, len) and write(...), answering 0 or a negated error; a
 * service whose disk cache lacks a block answers -EXT2_EAGAIN, which every
 * function passes up unchanged. A read-only operation has then changed
 * nothing and is simply asked again once the block is in; a writing one
 * may have written part of its change, so the service runs it over a log
 * of its writes that it drops on -EXT2_EAGAIN (services/ext2fs says how).
 * Everything read from the image is checked before it is used: a corrupted
 * image gives -EXT2_EUCLEAN (with a reason in fs->why for mount), never a
 * read or write outside the file system or a loop without end.
 *
 * A writing call that answers -EXT2_EAGAIN (or fails otherwise) may have
 * changed *fs and the inodes given to it: the service keeps copies of them
 * to go back to with its log.
 *
 * Errors are negated Linux errno values, as Linux's ext2 gives them. The
 * inode flags chattr sets are kept as Linux's VFS keeps them: an immutable
 * (+i) inode is not written, truncated, removed, renamed or linked, nor
 * are names added to or removed from an immutable directory; an
 * append-only (+a) file is written only at its end and not truncated,
 * removed, renamed or linked, and names are only added to an append-only
 * directory (-EXT2_EPERM). Changing an inode's mode, owner or times is the
 * caller's (ext2_inode_write): Linux refuses it for both flags too.
 */
#ifndef PETREL_EXT2_H
#define PETREL_EXT2_H

#include <stdint.h>
#include <stddef.h>

/* Errors (Linux's errno numbers). */
#define EXT2_EPERM          1
#define EXT2_ENOENT         2
#define EXT2_EIO            5
#define EXT2_EAGAIN         11
#define EXT2_EBUSY          16
#define EXT2_EEXIST         17
#define EXT2_ENOTDIR        20
#define EXT2_EISDIR         21
#define EXT2_EINVAL         22
#define EXT2_EFBIG          27
#define EXT2_ENOSPC         28
#define EXT2_EROFS          30
#define EXT2_EMLINK         31
#define EXT2_ENAMETOOLONG   36
#define EXT2_ENOTEMPTY      39
#define EXT2_ELOOP          40
#define EXT2_EOPNOTSUPP     95
#define EXT2_EUCLEAN        117     /* the image is corrupt (Linux's EFSCORRUPTED) */

#define EXT2_ROOT_INO       2u
#define EXT2_LINK_MAX       32000u
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
    int (*write)(void *ctx, uint64_t offset, const void *buf, uint32_t len);    /* NULL: read only */
    /* NULL, or the bytes [offset, offset + len) where they lie (*at), to
     * read in place until the next call of io (what a change wrote
     * there included): 0, 0 with *at NULL (not in one piece: read them),
     * or an error as read's. */
    int (*map)(void *ctx, uint64_t offset, uint32_t len, const void **at);
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
    uint32_t gdt_blocks, reserved_gdt;  /* their blocks, and those kept after them for growing (resize_inode) */
    uint32_t backup_bgs[2];             /* sparse_super2: the groups holding copies of the superblock */
    uint32_t overhead;                  /* s_overhead_clusters: blocks holding no data (0: not said) */
    uint8_t uuid[16];
    char label[17];
    uint32_t state;                     /* s_state as mounted: 1 clean, 2 errors found */
    uint32_t last_orphan;               /* the first inode of the orphan list (0: none) */
    uint32_t writable;                  /* ext2_mount_rw succeeded: the writing calls may be used */
    uint32_t now;                       /* the time (Unix seconds) the next changes are made at: the caller's to set */
    uint32_t use_reserve;               /* the next allocations may take the blocks reserved for root */
    uint32_t dir_group;                 /* where the last top-level directory went (spreading them) */
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

/* A record of the ext2fs service's readdir (idl/ext2fs.toml): an entry
 * with its inode, records 8-aligned one after another. */
struct ext2fs_dirent {
    uint64_t pos;                       /* the directory's position after the entry */
    struct ext2_inode in;               /* its inode as read (bad: only ino and a mode of its type) */
    uint16_t reclen;                    /* this record's bytes, its name included: a multiple of 8 */
    uint8_t type, len, bad;             /* the entry's file type; its name's length; its inode is corrupt */
    char name[];
};

/* The file type a directory entry gives an inode of `mode` (1 a regular
 * file ... 7 a symbolic link; 0 unknown). */
uint32_t ext2_file_type(uint32_t mode);

/* Read and check the superblock and the group descriptors' place. 0, or
 * -EXT2_EINVAL (no ext2 superblock), -EXT2_EUCLEAN (corrupt: fs->why says
 * what), -EXT2_EOPNOTSUPP (an incompatible feature this code does not read:
 * fs->why names it), or an error of the read callback. */
int ext2_mount(struct ext2_fs *fs, const struct ext2_io *io);
/* Make a mounted file system writable: -EXT2_EROFS when io has no write or
 * the image has read-only features this code does not know; the superblock
 * is marked "not clean" (and its mount count and time set) until
 * ext2_unmount, so that e2fsck checks it after a crash. Files left on the
 * orphan list by a crash are released (their blocks and inodes freed). */
int ext2_mount_rw(struct ext2_fs *fs);
/* Mark a writable file system clean again (the caller syncs after it). */
int ext2_unmount(struct ext2_fs *fs);
/* Inode `ino` (1 to inodes_count). -EXT2_ENOENT: out of range, or free
 * (no links, or deleted); -EXT2_EUCLEAN: its group's descriptor is bad, or
 * its size is one no file here can have (past ext2_max_size, or a
 * directory's not whole blocks or past the blocks it holds). */
int ext2_inode(const struct ext2_fs *fs, uint32_t ino, struct ext2_inode *out);
/* The largest size a file may have, as Linux's ext2_max_size reckons it:
 * what three levels of pointers reach, unless a dense file that large
 * would hold more 512-byte sectors, its indirect blocks included, than
 * i_blocks counts in 32 bits (no huge_file here); then the most that fit. */
uint64_t ext2_max_size(const struct ext2_fs *fs);
/* Inode `ino` without links: a file unlinked while open (on the orphan
 * list, its dtime the next one's number). -EXT2_ENOENT: it has links, or
 * is free. */
int ext2_inode_orphan(const struct ext2_fs *fs, uint32_t ino, struct ext2_inode *out);
/* The block holding byte `lblock` * block_size of the file: *pblock, or 0
 * for a hole. -EXT2_EUCLEAN: a pointer outside the file system. */
int ext2_bmap(const struct ext2_fs *fs, const struct ext2_inode *in, uint64_t lblock, uint32_t *pblock);
/* Up to len bytes of the file from off into buf (holes read as zeros):
 * *got bytes, fewer only at the end of the file. */
int ext2_read(const struct ext2_fs *fs, const struct ext2_inode *in, uint64_t off, void *buf, uint32_t len,
              uint32_t *got);
/* The entry of directory `dir` called name[0..len): *ino. -EXT2_ENOENT: none;
 * -EXT2_ENOTDIR: dir is not a directory; -EXT2_ENAMETOOLONG. */
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

/* What Linux's statfs says of the file system (its ext4 driver's, which
 * mounts ext2): the blocks that can hold data (all but the superblocks,
 * group descriptors, bitmaps and inode tables, or the superblock's
 * s_overhead_clusters when it says), the free ones, those free to
 * others than root, the inodes and free inodes, and f_fsid (the uuid's
 * halves xored, low word first). */
struct ext2_statfs { uint64_t blocks, bfree, bavail, files, ffree, fsid; };
void ext2_statfs(const struct ext2_fs *fs, struct ext2_statfs *st);

/* Write back the fields of `in` (mode, owner, size, times, links, blocks,
 * flags and block pointers) into its inode. */
int ext2_inode_write(struct ext2_fs *fs, const struct ext2_inode *in);

/* Write len bytes of buf at off into the file, allocating blocks (and the
 * indirect blocks over them) as needed; the size grows to cover them, the
 * times change and the inode is written. *put bytes, fewer only when the
 * disk filled (-EXT2_ENOSPC if none) or the file reached the largest size
 * (-EXT2_EFBIG if none). */
int ext2_write(struct ext2_fs *fs, struct ext2_inode *in, uint64_t off, const void *buf, uint32_t len,
               uint32_t *put);
/* Give the file `size` bytes: blocks past it are freed, and the rest of
 * its last block zeroed, so that a later extension reads zeros; a larger
 * size leaves a hole. */
int ext2_truncate(struct ext2_fs *fs, struct ext2_inode *in, uint64_t size);

/* A new inode called name[0..len) in directory `dir`: a regular file,
 * directory, FIFO, socket or device (mode's type bits; `rdev` is a
 * device's number as Linux's new_encode_dev makes it). *out is it;
 * directories get "." and "..". -EXT2_EEXIST, -EXT2_ENOTDIR (dir is no
 * directory), -EXT2_ENAMETOOLONG, -EXT2_EINVAL (a name with '/' or NUL,
 * or "." or ".."), -EXT2_EMLINK, -EXT2_ENOSPC. */
int ext2_create(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len, uint32_t mode,
                uint32_t uid, uint32_t gid, uint32_t rdev, struct ext2_inode *out);
/* A symbolic link to target[0..tlen) (1 to block_size - 1 bytes). */
int ext2_symlink(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len, const char *target,
                 uint32_t tlen, uint32_t uid, uint32_t gid, struct ext2_inode *out);
/* A new name for `in` (not a directory: -EXT2_EPERM). */
int ext2_link(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len, struct ext2_inode *in);
/* Remove the name of a non-directory (-EXT2_EISDIR). *victim is its inode
 * after it, its link count one less: when that is 0 the caller releases it
 * (ext2_release) once no one has it open, and puts it on the orphan list
 * (ext2_orphan_add) meanwhile. */
int ext2_unlink(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len,
                struct ext2_inode *victim);
/* Remove an empty directory (-EXT2_ENOTEMPTY, -EXT2_ENOTDIR); it is
 * released at once. */
int ext2_rmdir(struct ext2_fs *fs, struct ext2_inode *dir, const char *name, uint32_t len);
/* Move name `on` of directory `odir` to `nn` of `ndir`, replacing what was
 * there (as Linux's rename: a directory only an empty directory, a
 * non-directory only a non-directory; a directory not into itself or below
 * it, -EXT2_EINVAL; "." or "..", -EXT2_EBUSY). When a name was replaced, *victim is its inode with one
 * link less (victim->ino 0 when none): released as for ext2_unlink. odir and
 * ndir are read again by the caller after it (they may be one inode). */
int ext2_rename(struct ext2_fs *fs, struct ext2_inode *odir, const char *on, uint32_t olen,
                struct ext2_inode *ndir, const char *nn, uint32_t nlen, struct ext2_inode *victim);
/* Free an inode without links and everything it holds. */
int ext2_release(struct ext2_fs *fs, struct ext2_inode *in);
/* The orphan list (s_last_orphan, chained through i_dtime as ext3 and
 * ext4 keep it): inodes without links that are still open, released at the
 * next ext2_mount_rw if the machine stops first. */
int ext2_orphan_add(struct ext2_fs *fs, struct ext2_inode *in);
int ext2_orphan_del(struct ext2_fs *fs, struct ext2_inode *in);

#endif
