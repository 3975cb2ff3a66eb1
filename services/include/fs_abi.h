/* Constants of the file service's interface (idl/fs.toml). */
#ifndef PETREL_FS_ABI_H
#define PETREL_FS_ABI_H

#define FS_O_READ     1u
#define FS_O_WRITE    2u
#define FS_O_CREATE   4u
#define FS_O_TRUNC    8u
#define FS_O_APPEND   16u

#define FS_KIND_FILE     1u
#define FS_KIND_DIR      2u

#endif
