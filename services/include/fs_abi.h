/* Constants of the file service's interface (idl/fs.toml). */
#ifndef PETREL_FS_ABI_H
#define PETREL_FS_ABI_H

#define FS_O_READ     1u
#define FS_O_WRITE    2u
#define FS_O_CREATE   4u
#define FS_O_TRUNC    8u
#define FS_O_APPEND   16u
#define FS_O_SHARED   32u     /* with FS_O_CREATE: other clients may read the new file */

#define FS_KIND_FILE     1u
#define FS_KIND_DIR      2u

/* Each client's quotas (a quarter of the service's tables): open files,
 * inodes it created (files and directories), 4 KiB blocks in its files. */
#define FS_CLIENT_OPEN      16
#define FS_CLIENT_INODES    32
#define FS_CLIENT_BLOCKS    64

#endif
