/*
 * ext2's on-disk layout as lib/ext2.c and lib/ext2_write.c share it (the
 * fields of e2fsprogs' lib/ext2fs/ext2_fs.h, by byte offset). Private to
 * those two files.
 */
#ifndef PETREL_EXT2_DISK_H
#define PETREL_EXT2_DISK_H

#include "ext2.h"

#define SB_OFFSET           1024u
#define SB_MAGIC            0xef53u
#define GD_SIZE             32u

/* Superblock fields. */
#define SB_FREE_BLOCKS      12u
#define SB_FREE_INODES      16u
#define SB_MTIME            44u
#define SB_WTIME            48u
#define SB_MNT_COUNT        52u
#define SB_STATE            58u
#define SB_REV              76u
#define SB_FIRST_INO        84u
#define SB_INODE_SIZE       88u
#define SB_RO_COMPAT        100u
#define SB_LAST_ORPHAN      232u
#define SB_OVERHEAD         0x248u  /* s_overhead_clusters: the blocks that hold no data (0: not said) */
#define SB_BACKUP_BGS       0x24cu  /* sparse_super2: the two groups with a copy */

#define STATE_VALID         1u      /* cleanly unmounted */
#define STATE_ERRORS        2u

/* Group descriptor fields. */
#define GD_BLOCK_BITMAP     0u
#define GD_INODE_BITMAP     4u
#define GD_INODE_TABLE      8u
#define GD_FREE_BLOCKS      12u
#define GD_FREE_INODES      14u
#define GD_USED_DIRS        16u

/* Inode fields. */
#define IN_MODE             0u
#define IN_UID              2u
#define IN_SIZE             4u
#define IN_ATIME            8u
#define IN_CTIME            12u
#define IN_MTIME            16u
#define IN_DTIME            20u
#define IN_GID              24u
#define IN_LINKS            26u
#define IN_BLOCKS           28u
#define IN_FLAGS            32u
#define IN_BLOCK            40u
#define IN_GENERATION       100u
#define IN_FILE_ACL         104u
#define IN_SIZE_HIGH        108u
#define IN_BLOCKS_HIGH      116u
#define IN_UID_HIGH         120u
#define IN_GID_HIGH         122u
#define IN_BASE             128u    /* the revision 0 inode; a larger one has i_extra_isize next */
#define IN_EXTRA            32u     /* the i_extra_isize e2fsprogs gives a new large inode */

/* Features (s_feature_*). */
#define COMPAT_SPARSE_SUPER2 0x0200u
#define INCOMPAT_FILETYPE   0x0002u
#define INCOMPAT_RECOVER    0x0004u
#define INCOMPAT_META_BG    0x0010u
#define RO_SPARSE_SUPER     0x0001u
#define RO_LARGE_FILE       0x0002u
#define INCOMPAT_KNOWN      INCOMPAT_FILETYPE
#define RO_KNOWN            (RO_SPARSE_SUPER | RO_LARGE_FILE)

static inline uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t le32(const uint8_t *p) { return le16(p) | le16(p + 2) << 16; }
static inline void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void put32(uint8_t *p, uint32_t v) { put16(p, v & 0xffffu); put16(p + 2, v >> 16); }

/* The byte offset of inode `ino` (1 to inodes_count) in the image, its
 * group's inode table checked to lie inside the file system. */
int ext2_inode_offset(const struct ext2_fs *fs, uint32_t ino, uint64_t *off);
/* Where logical block lblock of a file is mapped: the index (0 to 14) of
 * the inode's pointer it starts from, and the entry to follow in each of
 * `depth` indirect blocks; -1 past what three levels address. */
int ext2_block_path(const struct ext2_fs *fs, uint64_t lblock, uint32_t idx[3], uint32_t *depth);
/* The header of the directory record at byte `at` of block pb: its inode,
 * length, name length and file type (0 without filetype), checked to lie
 * inside the block (-EXT2_EUCLEAN). */
int ext2_rec_read(const struct ext2_fs *fs, uint32_t pb, uint32_t at, uint32_t *ino, uint32_t *rec, uint32_t *nlen,
                  uint8_t *type);
/* The same from the 8 bytes of the header at h (at: its offset in its block). */
int ext2_rec_parse(const struct ext2_fs *fs, const uint8_t *h, uint32_t at, uint32_t *ino, uint32_t *rec,
                   uint32_t *nlen, uint8_t *type);
/* Decode a raw inode (the first 128 bytes) into *out. */
void ext2_inode_decode(const uint8_t *r, uint32_t ino, struct ext2_inode *out);

#endif
