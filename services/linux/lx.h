/*
 * The Linux personality's own declarations: processes, open files, the
 * root file system and the system call handlers. See
 * docs/design/personality.md for the design; linux.c for the entry.
 *
 * Everything here is written against svc.h and svc_proc.h only, so the
 * same source can later be placed in the kernel.
 */
#ifndef PETREL_LX_H
#define PETREL_LX_H

#include "linux_if.h"
#include "svc_proc.h"
#include "pstring.h"

/* ---------------------------------------------------------------- errno (Linux's values) */
enum {
    LX_EPERM = 1, LX_ENOENT = 2, LX_ESRCH = 3, LX_EINTR = 4, LX_EIO = 5, LX_E2BIG = 7, LX_ENOEXEC = 8,
    LX_EBADF = 9, LX_ECHILD = 10, LX_EAGAIN = 11, LX_ENOMEM = 12, LX_EACCES = 13, LX_EFAULT = 14,
    LX_EBUSY = 16, LX_EEXIST = 17, LX_ENODEV = 19, LX_ENOTDIR = 20, LX_EISDIR = 21, LX_EINVAL = 22,
    LX_ENFILE = 23, LX_EMFILE = 24, LX_ENOTTY = 25, LX_ESPIPE = 29, LX_EROFS = 30,
    LX_ENAMETOOLONG = 36, LX_ENOSYS = 38, LX_ELOOP = 40, LX_EOVERFLOW = 75,
};

/* ---------------------------------------------------------------- limits of this personality */
#define LX_PROCS        32              /* Linux processes alive (or unwaited) at once */
#define LX_FDS          64              /* descriptors per process (RLIMIT_NOFILE) */
#define LX_OPEN         256             /* open file descriptions in all */
#define LX_REGIONS      64              /* mmap regions per process */
#define LX_PATH_MAX     4096
#define LX_NAME_MAX     255
#define LX_ARG_MAX      (64 * 1024)     /* argv + envp strings and the start tables */

/* ---------------------------------------------------------------- the address space of a Linux process */
#define LX_PAGE         4096ull
#define LX_PIE_BASE     0x0000000555550000ull   /* where a static-PIE program is placed (below the mmap area) */
#define LX_STACK_TOP    0x0000007ff0000000ull
#define LX_STACK_SIZE   (8ull << 20)            /* RLIMIT_STACK: 8 MiB, filled on touch */
#define LX_MMAP_TOP     (LX_STACK_TOP - LX_STACK_SIZE - (1ull << 30))   /* mmaps go down from here */
#define LX_MMAP_BOTTOM  0x0000001000000000ull
#define LX_BRK_MAX      (1ull << 30)            /* the heap may grow this far past the program */
#define LX_UTCB_VA      0x0000007ffffff000ull   /* the kernel's control page of the thread */
#define LX_TASK_SIZE    (1ull << 48)            /* Linux's end of user space: munmap past it is EINVAL */
#define LX_USER_END     (1ull << 39)            /* the end of a Petrel address space: past it, EFAULT
                                                 * (Linux's access_ok, with Petrel's 39-bit limit) */

static inline uint64_t lx_page_up(uint64_t x) { return (x + LX_PAGE - 1) & ~(LX_PAGE - 1); }

/* ---------------------------------------------------------------- the root file system */
/* File types as st_mode has them. */
#define LX_S_IFMT   0170000
#define LX_S_IFDIR  0040000
#define LX_S_IFCHR  0020000
#define LX_S_IFREG  0100000
#define LX_S_IFLNK  0120000

/* What a node is beyond its mode. */
enum { LX_DEV_NONE, LX_DEV_NULL, LX_DEV_ZERO, LX_DEV_CONSOLE };

struct lx_node {
    const char *name;           /* in place in the archive (or a constant); not NUL-terminated */
    uint32_t name_len;
    int32_t parent;             /* node index; the root is its own parent */
    uint32_t mode;              /* type and permissions */
    uint32_t dev;               /* LX_DEV_* for character devices */
    uint64_t size;
    uint64_t data_off;          /* offset of the contents in the archive */
    uint64_t mtime;
    int32_t first_child, next_sibling;      /* -1: none */
};

/* Load the root archive (boot image file `name`); 0 or a negated errno. */
int lx_fs_init(const char *name);
/* The node count and one node. */
struct lx_node *lx_node(int32_t n);
/* The archive's bytes (in place) and its memory object (for mapping file pages). */
const uint8_t *lx_fs_data(void);
svc_handle lx_fs_object(void);
/* Resolve `path` (absolute, or relative to directory `dir`); follow a
 * final symbolic link when `follow`. A node index or a negated errno. */
int32_t lx_lookup(int32_t dir, const char *path, int follow);
#define LX_ROOT 0

/* ---------------------------------------------------------------- open files */
struct lx_file {
    uint32_t refs;              /* descriptors naming it; 0: free */
    int32_t node;
    uint32_t flags;             /* O_ACCMODE, O_APPEND, ... as opened */
    uint64_t pos;
};

/* ---------------------------------------------------------------- processes */
struct lx_region { uint64_t start, end; };  /* an mmap region, [start, end) */

struct lx_proc {
    int used;
    int pid, ppid;
    svc_handle space, thread;
    char comm[16];              /* the program's name (its file name, cut) */
    uint64_t brk_start, brk;    /* the heap: [brk_start, brk); mapped to lx_page_up(brk) */
    uint64_t tid_address;       /* set_tid_address */
    struct lx_file *fds[LX_FDS];
    uint8_t cloexec[LX_FDS];
    struct lx_region regions[LX_REGIONS];
    unsigned nregions;
    int ended, status;          /* ended: the Linux wait status is set */
    svc_token waiter;           /* a native wait(pid) in progress */
};

/* The process behind a fault's badge, or NULL. */
struct lx_proc *lx_proc_of_pid(int pid);
/* Start a process from argv/envp (NUL-separated strings); its pid or a negated errno. */
int lx_exec(char *const argv[], int argc, char *const envp[], int envc);
/* End a process with Linux wait status `status`: kill its space, tell its waiter. */
void lx_proc_end(struct lx_proc *p, int status);

/* Load the ELF of node `node` into a new space of process p and build its
 * stack; the entry pc and initial sp in *pc, *sp. 0 or a negated errno. */
int lx_load(struct lx_proc *p, int32_t node, const char *execfn, char *const argv[], int argc,
            char *const envp[], int envc, uint64_t *pc, uint64_t *sp);

/* ---------------------------------------------------------------- system calls */
/* The state of one system call: the process, its call (to reach its memory). */
struct lx_ctx {
    struct lx_proc *p;
    struct svc_call *call;
};

#define LX_NORETURN     (-4096 - 1)     /* the process ended: no reply */

/* Handle system call `nr` with args a[0..5]; the value for x0, or LX_NORETURN. */
int64_t lx_syscall(struct lx_ctx *c, uint64_t nr, const uint64_t *a);

/* Copy from / to the calling process; 0 or -LX_EFAULT. */
int lx_copy_in(struct lx_ctx *c, void *dst, uint64_t src, uint64_t len);
int lx_copy_out(struct lx_ctx *c, uint64_t dst, const void *src, uint64_t len);
/* Copy out page by page up to the first page the process cannot write:
 * how many bytes went (Linux's partial reads). */
uint64_t lx_copy_out_some(struct lx_ctx *c, uint64_t dst, const void *src, uint64_t len);
/* Copy a NUL-terminated string of at most max-1 bytes; its length or a
 * negated errno (EFAULT; ENAMETOOLONG when it does not fit). */
int64_t lx_copy_str(struct lx_ctx *c, char *dst, uint64_t src, uint64_t max);
/* Is [p, p + n) inside Linux's user address range (what access_ok checks)? */
static inline int lx_range_ok(uint64_t p, uint64_t n) { return p + n >= p && p + n <= LX_USER_END; }

/* File system calls (files.c) and memory calls (memory.c). */
int64_t lx_sys_openat(struct lx_ctx *c, int64_t dirfd, uint64_t path, uint64_t flags, uint64_t mode);
int64_t lx_sys_close(struct lx_ctx *c, uint64_t fd);
int64_t lx_sys_read(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len);
int64_t lx_sys_pread(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len, int64_t off);
int64_t lx_sys_write(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len);
int64_t lx_sys_readv(struct lx_ctx *c, uint64_t fd, uint64_t iov, uint64_t cnt, int writing);
int64_t lx_sys_lseek(struct lx_ctx *c, uint64_t fd, int64_t off, uint64_t whence);
int64_t lx_sys_fstat(struct lx_ctx *c, uint64_t fd, uint64_t buf);
int64_t lx_sys_newfstatat(struct lx_ctx *c, int64_t dirfd, uint64_t path, uint64_t buf, uint64_t flags);
int64_t lx_sys_getdents64(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len);
int64_t lx_sys_ioctl(struct lx_ctx *c, uint64_t fd, uint64_t req, uint64_t arg);
/* The console descriptors 0, 1 and 2 of a new process; 0 or a negated errno. */
int lx_files_init(struct lx_proc *p);
/* Close every descriptor of p. */
void lx_files_drop(struct lx_proc *p);

int64_t lx_sys_brk(struct lx_ctx *c, uint64_t addr);
int64_t lx_sys_mmap(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags, int64_t fd,
                    uint64_t off);
int64_t lx_sys_munmap(struct lx_ctx *c, uint64_t addr, uint64_t len);

/* Random bytes (a generator seeded from the system counter: not for keys). */
void lx_random(void *buf, uint64_t len);
/* Write a line to the console, marked as the personality's own
 * ("petrel-linux: ..."), so that tests can tell it from program output. */
void lx_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
