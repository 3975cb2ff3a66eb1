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
#include "vatree.h"

/* ---------------------------------------------------------------- errno (Linux's values) */
enum {
    LX_EPERM = 1, LX_ENOENT = 2, LX_ESRCH = 3, LX_EINTR = 4, LX_EIO = 5, LX_E2BIG = 7, LX_ENOEXEC = 8,
    LX_EBADF = 9, LX_ECHILD = 10, LX_EAGAIN = 11, LX_ENOMEM = 12, LX_EACCES = 13, LX_EFAULT = 14,
    LX_ENOTBLK = 15, LX_EBUSY = 16, LX_EEXIST = 17, LX_ENODEV = 19, LX_ENOTDIR = 20, LX_EISDIR = 21, LX_EINVAL = 22,
    LX_ENFILE = 23, LX_EMFILE = 24, LX_ENOTTY = 25, LX_ESPIPE = 29, LX_EROFS = 30,
    LX_EPIPE = 32, LX_EXDEV = 18, LX_EMLINK = 31, LX_ENOSPC = 28, LX_EFBIG = 27, LX_ENOTEMPTY = 39,
    LX_EOPNOTSUPP = 95, LX_ENXIO = 6, LX_ERANGE = 34, LX_ENAMETOOLONG = 36, LX_ENOSYS = 38, LX_ELOOP = 40,
    LX_EOVERFLOW = 75, LX_EDEADLK = 35, LX_ENOLCK = 37, LX_ELIBBAD = 80, LX_EAFNOSUPPORT = 97, LX_ECANCELED = 125,
    LX_EPROTO = 71,
};

/* ---------------------------------------------------------------- system call numbers (Linux's, AArch64) */
/* Every one (asm-generic/unistd.h as arm64 has it, through Linux 6.6's
 * fchmodat2): docs/reference/linux-syscalls.md lists them with what the
 * personality does with each (tools/petrel/lxsyscalls.py). */
enum {
    NR_io_setup = 0, NR_io_destroy = 1, NR_io_submit = 2, NR_io_cancel = 3, NR_io_getevents = 4, NR_setxattr = 5,
    NR_lsetxattr = 6, NR_fsetxattr = 7, NR_getxattr = 8, NR_lgetxattr = 9, NR_fgetxattr = 10, NR_listxattr = 11,
    NR_llistxattr = 12, NR_flistxattr = 13, NR_removexattr = 14, NR_lremovexattr = 15, NR_fremovexattr = 16,
    NR_getcwd = 17, NR_lookup_dcookie = 18, NR_eventfd2 = 19, NR_epoll_create1 = 20, NR_epoll_ctl = 21,
    NR_epoll_pwait = 22, NR_dup = 23, NR_dup3 = 24, NR_fcntl = 25, NR_inotify_init1 = 26, NR_inotify_add_watch = 27,
    NR_inotify_rm_watch = 28, NR_ioctl = 29, NR_ioprio_set = 30, NR_ioprio_get = 31, NR_flock = 32, NR_mknodat = 33,
    NR_mkdirat = 34, NR_unlinkat = 35, NR_symlinkat = 36, NR_linkat = 37, NR_renameat = 38, NR_umount2 = 39,
    NR_mount = 40, NR_pivot_root = 41, NR_nfsservctl = 42, NR_statfs = 43, NR_fstatfs = 44, NR_truncate = 45,
    NR_ftruncate = 46, NR_fallocate = 47, NR_faccessat = 48, NR_chdir = 49, NR_fchdir = 50, NR_chroot = 51,
    NR_fchmod = 52, NR_fchmodat = 53, NR_fchownat = 54, NR_fchown = 55, NR_openat = 56, NR_close = 57,
    NR_vhangup = 58, NR_pipe2 = 59, NR_quotactl = 60, NR_getdents64 = 61, NR_lseek = 62, NR_read = 63,
    NR_write = 64, NR_readv = 65, NR_writev = 66, NR_pread64 = 67, NR_pwrite64 = 68, NR_preadv = 69,
    NR_pwritev = 70, NR_sendfile = 71, NR_pselect6 = 72, NR_ppoll = 73, NR_signalfd4 = 74, NR_vmsplice = 75,
    NR_splice = 76, NR_tee = 77, NR_readlinkat = 78, NR_newfstatat = 79, NR_fstat = 80, NR_sync = 81, NR_fsync = 82,
    NR_fdatasync = 83, NR_sync_file_range = 84, NR_timerfd_create = 85, NR_timerfd_settime = 86,
    NR_timerfd_gettime = 87, NR_utimensat = 88, NR_acct = 89, NR_capget = 90, NR_capset = 91, NR_personality = 92,
    NR_exit = 93, NR_exit_group = 94, NR_waitid = 95, NR_set_tid_address = 96, NR_unshare = 97, NR_futex = 98,
    NR_set_robust_list = 99, NR_get_robust_list = 100, NR_nanosleep = 101, NR_getitimer = 102, NR_setitimer = 103,
    NR_kexec_load = 104, NR_init_module = 105, NR_delete_module = 106, NR_timer_create = 107,
    NR_timer_gettime = 108, NR_timer_getoverrun = 109, NR_timer_settime = 110, NR_timer_delete = 111,
    NR_clock_settime = 112, NR_clock_gettime = 113, NR_clock_getres = 114, NR_clock_nanosleep = 115,
    NR_syslog = 116, NR_ptrace = 117, NR_sched_setparam = 118, NR_sched_setscheduler = 119,
    NR_sched_getscheduler = 120, NR_sched_getparam = 121, NR_sched_setaffinity = 122, NR_sched_getaffinity = 123,
    NR_sched_yield = 124, NR_sched_get_priority_max = 125, NR_sched_get_priority_min = 126,
    NR_sched_rr_get_interval = 127, NR_restart_syscall = 128, NR_kill = 129, NR_tkill = 130, NR_tgkill = 131,
    NR_sigaltstack = 132, NR_rt_sigsuspend = 133, NR_rt_sigaction = 134, NR_rt_sigprocmask = 135,
    NR_rt_sigpending = 136, NR_rt_sigtimedwait = 137, NR_rt_sigqueueinfo = 138, NR_rt_sigreturn = 139,
    NR_setpriority = 140, NR_getpriority = 141, NR_reboot = 142, NR_setregid = 143, NR_setgid = 144,
    NR_setreuid = 145, NR_setuid = 146, NR_setresuid = 147, NR_getresuid = 148, NR_setresgid = 149,
    NR_getresgid = 150, NR_setfsuid = 151, NR_setfsgid = 152, NR_times = 153, NR_setpgid = 154, NR_getpgid = 155,
    NR_getsid = 156, NR_setsid = 157, NR_getgroups = 158, NR_setgroups = 159, NR_uname = 160, NR_sethostname = 161,
    NR_setdomainname = 162, NR_getrlimit = 163, NR_setrlimit = 164, NR_getrusage = 165, NR_umask = 166,
    NR_prctl = 167, NR_getcpu = 168, NR_gettimeofday = 169, NR_settimeofday = 170, NR_adjtimex = 171,
    NR_getpid = 172, NR_getppid = 173, NR_getuid = 174, NR_geteuid = 175, NR_getgid = 176, NR_getegid = 177,
    NR_gettid = 178, NR_sysinfo = 179, NR_mq_open = 180, NR_mq_unlink = 181, NR_mq_timedsend = 182,
    NR_mq_timedreceive = 183, NR_mq_notify = 184, NR_mq_getsetattr = 185, NR_msgget = 186, NR_msgctl = 187,
    NR_msgrcv = 188, NR_msgsnd = 189, NR_semget = 190, NR_semctl = 191, NR_semtimedop = 192, NR_semop = 193,
    NR_shmget = 194, NR_shmctl = 195, NR_shmat = 196, NR_shmdt = 197, NR_socket = 198, NR_socketpair = 199,
    NR_bind = 200, NR_listen = 201, NR_accept = 202, NR_connect = 203, NR_getsockname = 204, NR_getpeername = 205,
    NR_sendto = 206, NR_recvfrom = 207, NR_setsockopt = 208, NR_getsockopt = 209, NR_shutdown = 210,
    NR_sendmsg = 211, NR_recvmsg = 212, NR_readahead = 213, NR_brk = 214, NR_munmap = 215, NR_mremap = 216,
    NR_add_key = 217, NR_request_key = 218, NR_keyctl = 219, NR_clone = 220, NR_execve = 221, NR_mmap = 222,
    NR_fadvise64 = 223, NR_swapon = 224, NR_swapoff = 225, NR_mprotect = 226, NR_msync = 227, NR_mlock = 228,
    NR_munlock = 229, NR_mlockall = 230, NR_munlockall = 231, NR_mincore = 232, NR_madvise = 233,
    NR_remap_file_pages = 234, NR_mbind = 235, NR_get_mempolicy = 236, NR_set_mempolicy = 237,
    NR_migrate_pages = 238, NR_move_pages = 239, NR_rt_tgsigqueueinfo = 240, NR_perf_event_open = 241,
    NR_accept4 = 242, NR_recvmmsg = 243, NR_wait4 = 260, NR_prlimit64 = 261, NR_fanotify_init = 262,
    NR_fanotify_mark = 263, NR_name_to_handle_at = 264, NR_open_by_handle_at = 265, NR_clock_adjtime = 266,
    NR_syncfs = 267, NR_setns = 268, NR_sendmmsg = 269, NR_process_vm_readv = 270, NR_process_vm_writev = 271,
    NR_kcmp = 272, NR_finit_module = 273, NR_sched_setattr = 274, NR_sched_getattr = 275, NR_renameat2 = 276,
    NR_seccomp = 277, NR_getrandom = 278, NR_memfd_create = 279, NR_bpf = 280, NR_execveat = 281,
    NR_userfaultfd = 282, NR_membarrier = 283, NR_mlock2 = 284, NR_copy_file_range = 285, NR_preadv2 = 286,
    NR_pwritev2 = 287, NR_pkey_mprotect = 288, NR_pkey_alloc = 289, NR_pkey_free = 290, NR_statx = 291,
    NR_io_pgetevents = 292, NR_rseq = 293, NR_kexec_file_load = 294, NR_pidfd_send_signal = 424,
    NR_io_uring_setup = 425, NR_io_uring_enter = 426, NR_io_uring_register = 427, NR_open_tree = 428,
    NR_move_mount = 429, NR_fsopen = 430, NR_fsconfig = 431, NR_fsmount = 432, NR_fspick = 433, NR_pidfd_open = 434,
    NR_clone3 = 435, NR_close_range = 436, NR_openat2 = 437, NR_pidfd_getfd = 438, NR_faccessat2 = 439,
    NR_process_madvise = 440, NR_epoll_pwait2 = 441, NR_mount_setattr = 442, NR_landlock_create_ruleset = 444,
    NR_landlock_add_rule = 445, NR_landlock_restrict_self = 446, NR_memfd_secret = 447, NR_process_mrelease = 448,
    NR_futex_waitv = 449, NR_set_mempolicy_home_node = 450, NR_cachestat = 451, NR_fchmodat2 = 452,
};

/* ---------------------------------------------------------------- signal numbers (Linux's) */
enum {
    LX_SIGHUP = 1, LX_SIGINT, LX_SIGQUIT, LX_SIGILL, LX_SIGTRAP, LX_SIGABRT, LX_SIGBUS, LX_SIGFPE, LX_SIGKILL,
    LX_SIGUSR1, LX_SIGSEGV, LX_SIGUSR2, LX_SIGPIPE, LX_SIGALRM, LX_SIGTERM, LX_SIGSTKFLT, LX_SIGCHLD,
    LX_SIGCONT, LX_SIGSTOP, LX_SIGTSTP, LX_SIGTTIN, LX_SIGTTOU, LX_SIGURG, LX_SIGXCPU, LX_SIGXFSZ,
    LX_SIGVTALRM, LX_SIGPROF, LX_SIGWINCH, LX_SIGIO, LX_SIGPWR, LX_SIGSYS,
};
#define LX_NSIG         64
#define LX_SIGBIT(sig)  (1ull << ((sig) - 1))

/* si_code values the personality sends. */
#define LX_SI_USER      0
#define LX_SI_KERNEL    0x80
#define LX_SI_TKILL     (-6)
#define LX_CLD_EXITED   1
#define LX_CLD_KILLED   2
#define LX_CLD_STOPPED  5
#define LX_CLD_CONTINUED 6

/* struct sigaction as the kernel takes it (AArch64). */
struct lx_sigaction {
    uint64_t handler, flags, restorer, mask;
};

/* What a pending signal's siginfo says besides its number. */
struct lx_sinfo {
    int32_t code, pid, status;  /* status: SIGCHLD's */
    uint64_t addr;              /* a fault's address */
    uint64_t value;             /* si_value of a queued signal (SI_QUEUE) */
    int32_t timer;              /* a POSIX timer's own signal: its id + 1 (rt_sigqueueinfo cannot set it) */
};
#define LX_SI_QUEUE     (-1)
#define LX_SI_TIMER     (-2)    /* a POSIX timer's: pid is the timer's id, status its overruns */
#define LX_SIGRTMIN     32
#define LX_RTQ          64      /* instances of real-time signals queued to a process beyond the first of each */

/* ---------------------------------------------------------------- limits of this personality */
#define LX_PID_MAX      32768           /* pids and tids go up to this, then start again at 300 (Linux's
                                         * pid_max and RESERVED_PIDS); processes and threads are records
                                         * that grow with use, bounded by the system description's
                                         * limits (spaces, threads, memory) */
#define LX_NPROC        8192            /* RLIMIT_NPROC's default: half of the threads the default
                                         * systems allow, as Linux's is half its threads-max (root is
                                         * not held to it) */
#define LX_PROC_THREADS 65535           /* threads of one process: its control pages lie below LX_UTCB_VA,
                                         * above the stack */
#define LX_NOFILE_SOFT  1024            /* RLIMIT_NOFILE of a new process: descriptors 0..1023 ... */
#define LX_NOFILE_HARD  4096            /* ... raised by the process up to this (Linux's defaults, INR_OPEN_*) */
#define LX_NR_OPEN      (1u << 20)      /* the highest RLIMIT_NOFILE there is (Linux's fs.nr_open): descriptor
                                         * tables grow with use up to this size */
#define LX_NR_FILE      (1u << 20)      /* open file descriptions in all (Linux's fs.file-max): the table grows
                                         * with use up to this (ENFILE past it, or when memory runs out) */
#define LX_MAP_COUNT    65530           /* mapped ranges per process (Linux's vm.max_map_count): records
                                         * allocated as needed (lx_alloc), ENOMEM past it */
#define LX_NR_PIPES     (1u << 20)      /* pipes in all (the table grows with use up to this; ENFILE past it,
                                         * or when memory runs out) */
#define LX_LOCKS        256             /* file locks (POSIX, OFD and flock ranges) in all (lock.c) */
#define LX_PROC_LOCKS   (LX_LOCKS / 4)  /* ... set by one process (ENOLCK past either) */
#define LX_PROC_PIPES   1024            /* pipes made by one process and still open with rings of LX_PIPE_BUF;
                                         * past them a new one's is a page (Linux's pipe-user-pages-soft) */
#define LX_PTYS         64              /* pseudo-terminals in all (/dev/pts/0..63; open of /dev/ptmx:
                                         * ENOSPC past it, as past Linux's kernel.pty.max) */
#define LX_PROC_PTYS    (LX_PTYS / 4)   /* ... made by one process and still open (ENOSPC past it) */
#define LX_PIPE_BUF     (64 * 1024)     /* a pipe's capacity */
#define LX_PIPE_ATOMIC  4096            /* writes up to this size are never split (PIPE_BUF) */
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
#define LX_INTERP_BASE  0x0000000f00000000ull   /* where a dynamic program's interpreter is placed */
#define LX_BRK_MAX      (1ull << 30)            /* the heap may grow this far past the program */
#define LX_MEM_TOTAL    (128ull << 20)          /* the memory Linux processes have (the service's
                                                 * limit in systems/linux-*.toml): /proc/meminfo's
                                                 * MemTotal, and the most one call may reserve */
#define LX_HEAP_CHUNK   (8ull << 20)            /* the heap grows through objects of at least this size */
#define LX_UTCB_VA      0x0000007ffffff000ull   /* the kernel's control page of the first thread; the
                                                 * others' go down from it a page each */
#define LX_TASK_SIZE    (1ull << 48)            /* Linux's end of user space: munmap past it is EINVAL */
#define LX_USER_END     (1ull << 39)            /* the end of a Petrel address space: past it, EFAULT
                                                 * (Linux's access_ok, with Petrel's 39-bit limit) */

/* Linux's open flags (AArch64: asm-generic/fcntl.h), as a file's flags keep them. */
#define O_ACCMODE       3
#define O_WRONLY        1
#define O_RDWR          2
#define O_CREAT         0100
#define O_EXCL          0200
#define O_NOCTTY        0400
#define O_TRUNC         01000
#define O_APPEND        02000           /* writes go to the end */
#define O_NONBLOCK      04000           /* (a file's flags, FIONBIO, pipes, the terminal) */
#define O_DSYNC         010000          /* each write on the disk before it returns (O_SYNC has it too) */
#define O_ASYNC         020000
#define O_DIRECTORY     040000
#define O_NOFOLLOW      0100000
#define O_DIRECT        0200000
#define O_LARGEFILE     0400000
#define O_NOATIME       01000000
#define O_CLOEXEC       02000000
#define O_PATH          010000000
#define O_TMPFILE       020000000

static inline uint64_t lx_page_up(uint64_t x) { return (x + LX_PAGE - 1) & ~(LX_PAGE - 1); }

/* The personality's records (heap.c): `size` bytes, zeroed, from size
 * classes in pages of the service's memory, or NULL when that is used up;
 * freed with the size they were made with. For /proc/petrel: the bytes
 * of the records in use now (their classes' sizes, whole pages for big
 * ones), which come back exactly when everything made is freed (the
 * pages held may not: each class keeps one for reuse once it had one). */
void *lx_alloc(size_t size);
void lx_free(void *p, size_t size);
uint64_t lx_heap_bytes(void);
/* Give back the empty pages each size class keeps (a test's check that
 * nothing is left). */
void lx_heap_trim(void);

/* ---------------------------------------------------------------- the root file system */
/* File types as st_mode has them. */
#define LX_S_IFMT   0170000
#define LX_S_IFDIR  0040000
#define LX_S_IFCHR  0020000
#define LX_S_IFBLK  0060000
#define LX_S_IFREG  0100000
#define LX_S_IFLNK  0120000
#define LX_S_IFSOCK 0140000
#define LX_S_IFIFO  0010000

/* What a node is beyond its mode. */
enum { LX_DEV_NONE, LX_DEV_NULL, LX_DEV_ZERO, LX_DEV_CONSOLE, LX_DEV_TTY, LX_DEV_FULL, LX_DEV_RANDOM,
       LX_DEV_URANDOM, LX_DEV_PTMX, LX_DEV_PTS, LX_DEV_DISK, LX_DEV_BINDER, LX_DEV_INPUT,
       LX_DEV_FB, LX_DEV_INPUT1 };

/* The file systems the tree is made of, mounted as a Debian system has
 * them (the root, devtmpfs on /dev, devpts on /dev/pts, tmpfs on
 * /dev/shm, proc on /proc): one store, but each its own device number
 * (st_dev), statfs and mount table line, and no name moves or links
 * from one to another (EXDEV). */
enum { LX_FS_ROOT, LX_FS_DEV, LX_FS_PTS, LX_FS_SHM, LX_FS_PROC, LX_FS_DATA, LX_FS_COUNT };
/* LX_FS_DATA is the machine's disk, ext2, at /data (data.c): its nodes
 * here mirror its inodes, its entries are read in when a lookup first
 * needs them, and its files' contents stay on the disk. */

/* The in-memory file system's limits (rootfs.c): file contents copied
 * into memory once written, in all (ENOSPC past it): lx_vfs_bytes(), half
 * the personality's memory limit as Linux's tmpfs takes half the memory
 * (LX_VFS_NO_LIMIT when it has none); the nodes and directory entries
 * that may be made beyond the archive's own. Files mapped MAP_SHARED keep
 * their contents in a memory object of lx_vfs_bytes() (the largest a
 * file can be; pages are made when touched), at most LX_SHARED_FILES of
 * them at once (mmap: ENOMEM past it). */
uint64_t lx_vfs_bytes(void);
#define LX_VFS_NO_LIMIT     (256ull << 20)
#define LX_VFS_MIN          (4ull << 20)
#define LX_SHARED_FILES     64
#define LX_XATTR_BYTES      (1ull << 20)    /* extended attributes, names and values, in all (xattr.c) */

struct lx_time { int64_t sec, nsec; };
struct lx_mobj;
struct lx_xattr;

/* A node: what a file is. Its names are directory entries (struct lx_dent). */
struct lx_node {
    uint32_t mode;              /* type and permissions; 0: a free slot */
    uint32_t dev;               /* LX_DEV_* for character devices */
    uint32_t nlink;             /* entries naming it (a directory: 2 + its subdirectories; 0 once removed) */
    uint32_t opens;             /* open file descriptions holding it */
    uint32_t uid, gid;
    uint64_t size;
    uint64_t data_off;          /* the contents in the archive, in place, while mem and obj are NULL */
    uint8_t *mem;               /* the contents in memory once written: cap bytes, zero past size */
    uint64_t cap;               /* bytes charged to the file system's limit (mem's, or obj's reach) */
    struct lx_mobj *obj;        /* the contents in a memory object once mapped MAP_SHARED (mem NULL):
                                 * the file's only copy, which every shared mapping of it maps */
    struct lx_time atime, mtime, ctime;
    int32_t parent;             /* a directory: the one holding it (the root: itself) */
    int32_t dent;               /* a directory: the entry naming it (-1: the root, or removed) */
    int32_t first, last;        /* a directory: its entries, newest first (-1: none) */
    uint32_t entries;
    uint32_t proc;              /* a node of /proc: what it shows (LX_PROC_*); 0 otherwise */
    uint32_t fs;                /* LX_FS_* it is in (not LX_FS_PROC: proc says that; lx_node_fs) */
    struct lx_xattr *xattrs;    /* its extended attributes, newest first (xattr.c) */
    int32_t proc_pid;           /* ... and of which process */
    int32_t pty;                /* LX_DEV_PTS: the pseudo-terminal it is the slave of (tty.c) */
    uint32_t ino;               /* LX_FS_DATA: its inode on the disk (data.c) */
    uint8_t loaded;             /* LX_FS_DATA, a directory: its entries are read in */
    uint8_t bad;                /* LX_FS_DATA: its inode is corrupt (listed by name, reached: EUCLEAN) */
    uint8_t indexed;            /* LX_FS_DATA: in data.c's index by inode number (ino_next its chain) */
    int32_t ino_next;
    uint64_t disk_blocks;       /* LX_FS_DATA: the 512-byte units it holds on the disk (st_blocks) */
    uint64_t changed_at;        /* LX_FS_DATA: the /data epoch of its last change (data.c: a restart of
                                 * the file system service loses what no sync covered) ... */
    uint64_t born_at;           /* ... and of its making (0: read from the disk) */
    uint8_t wb_error;           /* LX_FS_DATA: a restart lost a change of it: its next fsync says EIO */
};

/* A directory entry: name[0..len) in directory `dir` names node `node`. */
struct lx_dent {
    const char *name;           /* in the archive, or in the name pool (own) */
    uint32_t len;
    int32_t node;               /* -1: a free slot */
    int32_t dir, next, prev;
    uint64_t cookie;            /* its place in a listing (getdents's d_off), smaller for newer entries */
    uint8_t own;
};

/* Load the root archive (boot image file `name`); 0 or a negated errno. */
int lx_fs_init(const char *name);
/* A node, an entry (NULL if free or out of range). */
struct lx_node *lx_node(int32_t n);
struct lx_dent *lx_dent(int32_t d);
/* The archive's bytes (in place) and its memory object (for mapping file pages). */
const uint8_t *lx_fs_data(void);
svc_handle lx_fs_object(void);
/* A node's contents in place, in the archive or in memory: not for a
 * file whose contents are in a memory object (n->obj; use lx_node_read),
 * so for symbolic links, say. */
const uint8_t *lx_node_data(const struct lx_node *n);
/* Copy len bytes of n's contents from off (inside its size) into dst, or
 * into memory object mem at `at`; 0 or -ENOMEM. */
int lx_node_read(const struct lx_node *n, uint64_t off, void *dst, uint64_t len);
int lx_node_copy_out(const struct lx_node *n, uint64_t off, svc_handle mem, uint64_t at, uint64_t len);
/* Write len bytes at off into n's contents, made room for first
 * (lx_node_reserve); the size is the caller's (lx_node_set_size). 0 or -ENOSPC. */
int lx_node_write(struct lx_node *n, uint64_t off, const void *src, uint64_t len);
struct lx_ctx;
/* The same for a file in a memory object (n->obj), straight between the
 * object and the calling process's memory at src or dst (one page of the
 * process's at most): 0, -EFAULT (the process's buffer), or -ENOSPC and
 * -ENOMEM as above. */
int lx_node_write_from(struct lx_ctx *c, struct lx_node *n, uint64_t off, uint64_t src, uint64_t len);
int lx_node_read_to(struct lx_ctx *c, const struct lx_node *n, uint64_t off, uint64_t dst, uint64_t len);
/* The size of a regular file becomes `size` (its shared mappings follow:
 * pages past its end go, pages it grew into come). */
void lx_node_set_size(struct lx_node *n, uint64_t size);
/* The memory object of regular file `node`, its contents moved there if
 * they are not yet; NULL (ENOMEM) past the file system's limits. */
struct lx_mobj *lx_node_share(int32_t node);
/* Bytes of contents in memory, nodes in use and the most there can be. */
void lx_fs_usage(uint64_t *bytes_used, uint32_t *nodes_used, uint32_t *nodes_max);
int lx_node_fs(int32_t n);
int lx_is_mount_point(int32_t n);
/* Node n's inode number (st_ino, d_ino): the disk's for its files, else n + 1. */
uint64_t lx_node_ino(int32_t n);
uint32_t lx_fs_dev(int fs);
uint32_t lx_fs_mount_id(int fs);
void lx_fs_usage_of(int fs, uint64_t *bytes_used, uint32_t *nodes_used);
/* The time now (the realtime clock). */
struct lx_time lx_now(void);
/* The calendar (syscalls.c): read the real-time clock once; what the
 * realtime clock is ahead of the system counter (svc_clock_ns), in ns. */
void lx_clock_init(void);
uint64_t lx_realtime_base(void);
/* The time of a clock that only reads the counter (the realtime clocks
 * add the calendar's base; no process or thread record is read, so the
 * shared entry may ask): 0, or -1 for any other clock. */
int lx_clock_counter_ns(uint64_t clock, uint64_t *ns);
/* Resolve `path` (absolute, or relative to directory `dir`); follow a
 * final symbolic link when `follow`. A node index or a negated errno. */
int32_t lx_lookup(int32_t dir, const char *path, int follow);
int32_t lx_rootfs_device(const char *path, uint32_t dev);
#define LX_ROOT 0

/* The last name of a path and the directory holding it (lx_lookup_last). */
enum { LX_LAST_NORM, LX_LAST_DOT, LX_LAST_DOTDOT, LX_LAST_ROOT };
struct lx_last {
    int32_t dir;                /* the directory the name is in */
    const char *name;           /* the last name (in the path) */
    uint32_t len;
    int slash;                  /* the path ended in "/" */
    int type;                   /* LX_LAST_* */
    int32_t dent;               /* its entry, or -1 */
    int32_t node;               /* its node (a link not followed), or -ENOENT */
};
/* Split `path` into its directory (resolved, links followed) and last
 * name; 0 or a negated errno (the directory's). */
int lx_lookup_last(int32_t dir, const char *path, struct lx_last *l);
/* The node a final symbolic link l->node leads to, or a negated errno. */
int32_t lx_follow_last(struct lx_last *l, int depth);
/* An entry naming node `node` (the first found, of any directory), or -1. */
int32_t lx_dent_of(int32_t node);
/* The entry of name[0..len) in directory dir, or -1. */
int32_t lx_dent_find(int32_t dir, const char *name, uint32_t len);
/* The absolute path of node n into buf (NUL-terminated); its length, or
 * -ENOENT for a node no entry names any more. */
int64_t lx_node_path(int32_t n, char *buf, uint64_t size);
/* Is node n the directory dir or below it? */
int lx_is_below(int32_t n, int32_t dir);
/* A new node of `mode` (no links yet, times now), or -ENOSPC. */
int32_t lx_node_new(uint32_t mode);
/* Free node n if nothing holds it any more (no entry, open file, working directory). */
void lx_node_maybe_free(int32_t n);
/* Make room for contents up to `end`, and at least the file's size, in
 * memory (copying them out of the archive first); resize to `size` (zeros
 * past the old end). 0 or -ENOSPC. */
int lx_node_reserve(struct lx_node *n, uint64_t end);
int lx_node_resize(struct lx_node *n, uint64_t size);
/* Name node `node` as name[0..len) in directory dir; 0 or -ENOSPC. */
int lx_link(int32_t dir, const char *name, uint32_t len, int32_t node);
/* Remove entry d (its node freed if nothing else holds it). */
void lx_unlink(int32_t d);
/* Move entry d to name[0..len) in dir (no entry of that name there); 0 or -ENOSPC. */
int lx_rename(int32_t d, int32_t dir, const char *name, uint32_t len);
/* Swap the nodes of entries a and b. */
void lx_exchange(int32_t a, int32_t b);

struct lx_proc;

/* /proc (procfs.c): made on lookup, its files generated on read. */
enum { LX_PROC_ROOT = 1, LX_PROC_SELF, LX_PROC_PIDDIR, LX_PROC_STAT, LX_PROC_STATUS, LX_PROC_CMDLINE, LX_PROC_COMM,
       LX_PROC_MAPS, LX_PROC_ENVIRON, LX_PROC_MEMINFO, LX_PROC_CPUINFO, LX_PROC_UPTIME,
       LX_PROC_MOUNTS, LX_PROC_VERSION, LX_PROC_LOADAVG, LX_PROC_FILESYSTEMS, LX_PROC_EXE, LX_PROC_CWD,
       LX_PROC_FDDIR, LX_PROC_FDINFODIR, LX_PROC_KSTAT, LX_PROC_PETREL, LX_PROC_PMOUNTS, LX_PROC_MOUNTINFO,
       LX_PROC_PETREL_SHARED, LX_PROC_NETDIR, LX_PROC_SYSDIR, LX_PROC_NET_DEV, LX_PROC_NET_TCP, LX_PROC_NET_UDP,
       LX_PROC_NET_SNMP, LX_PROC_NET_TCP6, LX_PROC_NET_UDP6, LX_PROC_NET_ROUTE, LX_PROC_TCP_CC, LX_PROC_TCP_CC_AVAIL,
       LX_PROC_TCP_CC_ALLOWED, LX_PROC_NET_TCPMON,
       LX_PROC_FD = 1u << 20,                   /* LX_PROC_FD + n: /proc/PID/fd/n */
       LX_PROC_FDINFO = 2u << 20,               /* LX_PROC_FDINFO + n: /proc/PID/fdinfo/n */
       LX_PROC_OBJ = 3u << 20 };                /* LX_PROC_OBJ + n: open file n (not a node's), reached through
                                                 * fd/N; the node's proc_pid is the file's generation */
_Static_assert(LX_PROC_NET_TCPMON < LX_PROC_FD && LX_NR_OPEN <= LX_PROC_FDINFO - LX_PROC_FD &&
               LX_NR_OPEN <= LX_PROC_OBJ - LX_PROC_FDINFO, "/proc node kinds");
/* Is `what` one of /proc/PID/fd/N's links, or /proc/PID/fdinfo/N? */
static inline int lx_proc_is_fd(uint32_t what) { return what >= LX_PROC_FD && what < LX_PROC_FDINFO; }
static inline int lx_proc_is_fdinfo(uint32_t what) { return what >= LX_PROC_FDINFO && what < LX_PROC_OBJ; }
/* The path of /proc node n that no directory entry names (a process's
 * directory and what is in it): its length, or a negated errno. */
int64_t lx_procfs_path(int32_t n, char *buf, uint64_t size);
/* What /proc/PID/fd/N link `n` leads to when followed: the open file's
 * node, or for a pipe, a socket, an event object or an O_PATH name of one
 * a node of /proc standing for that open file (LX_PROC_OBJ: lx_proc_obj);
 * -ENOENT if the descriptor is gone. */
int32_t lx_procfs_fd_target(int32_t n);
/* The node of name[0..len) in /proc directory `dir`, or a negated errno. */
int32_t lx_procfs_lookup(int32_t dir, const char *name, uint32_t len);
/* Make /proc's fixed files (after lx_fs_init); 0 or a negated errno. */
int lx_procfs_init(void);
/* The target of /proc symbolic link `n` into buf; its length. */
uint64_t lx_procfs_link(int32_t n, char *buf, uint64_t size);
/* The process whose /proc/self this is (set by each path call). */
void lx_procfs_caller(const struct lx_proc *p);
/* Generate /proc file `n`; its text and length (static: until the next call). */
const char *lx_procfs_text(int32_t n, uint64_t *len);
/* Append to the /proc file being made (its generator's, and inet.c's for /proc/net). */
void lx_proc_put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t lx_proc_text_len(void);               /* its length so far */
int lx_procfs_writable(uint32_t what);
int64_t lx_procfs_write(struct lx_ctx *c, int32_t node, uint64_t buf, uint64_t len);
/* The n-th dynamic entry of /proc directory dir from cookie `from` on: its
 * name into name (NUL-terminated), node type (DT_*), inode number and
 * cookie; 0, or -1 past the end. */
int lx_procfs_entry(int32_t dir, uint64_t from, char *name, uint8_t *type, uint64_t *ino, uint64_t *cookie);
/* Remember a process's argv and environment for /proc/PID/cmdline and
 * environ (at exec: p->started, the one it had let go); a forked child
 * shares its parent's; and a process's reference let go. */
void lx_procfs_exec(struct lx_proc *p, const char *execfn, char *const argv[], int argc, char *const envp[],
                    int envc);
void lx_procfs_fork(struct lx_proc *child, const struct lx_proc *parent);
void lx_procfs_drop(struct lx_proc *p);

/* ---------------------------------------------------------------- open files */
/*
 * An open file description: a slot of files.c's table, counted by the
 * references to it (descriptors of every process, files in flight in
 * socket queues, blocked calls that hold it). Its kind is one field; the
 * index of the object behind it is the field of that kind, and the other
 * three are -1 (so `f->node < 0` means "not a file of the tree").
 * When the last reference goes, the file is finalised (its socket, pipe
 * end, event object or node let go) and its slot freed with a new
 * generation: a descriptor or an epoll watch that remembers the old
 * generation finds the slot stale and is refused, never served.
 * docs/design/personality.md, "Lifetimes", states the rules.
 */
enum lx_file_kind { LX_FILE_FREE, LX_FILE_NODE, LX_FILE_PIPE, LX_FILE_EVENT, LX_FILE_SOCK, LX_FILE_NAME };
/* What an LX_FILE_NAME file names: an O_PATH descriptor of a pipe, a
 * socket or an event object (opened through /proc/PID/fd/N). It keeps
 * what fstat and /proc say of the object and nothing of the object
 * itself, as Linux's O_PATH file keeps only the inode: no operation
 * reaches a pipe, socket or event through it. Opening it again through
 * /proc reaches the pipe of that inode number (lx_pipe_reopen). */
enum lx_name_of { LX_NAME_PIPE = 1, LX_NAME_SOCK, LX_NAME_EVENTFD, LX_NAME_TIMERFD, LX_NAME_EPOLL, LX_NAME_SIGNALFD };
struct lx_file {
    uint32_t refs;              /* references (0: free, or being finalised) */
    uint8_t kind;               /* LX_FILE_*: LX_FILE_FREE is a free slot */
    uint8_t dying;              /* its last reference went: finalised next (lx_file_put) */
    uint32_t gen;               /* its generation: each file made has a new one (files.c) */
    int32_t slot;               /* its index in the table (lx_file_at) */
    int32_t node;               /* LX_FILE_NODE: a node of the root */
    uint32_t flags;             /* O_ACCMODE, O_APPEND, O_NONBLOCK, ... as opened or set */
    uint64_t pos;
    int32_t pipe;               /* LX_FILE_PIPE: the pipe of a pipe's end */
    int32_t ev;                 /* LX_FILE_EVENT: the event object of an eventfd, timerfd or epoll (event.c) */
    int32_t sock;               /* LX_FILE_SOCK: the socket (socket.c) */
    uint8_t name_of;            /* LX_FILE_NAME: what it names (LX_NAME_*) ... */
    uint32_t name_ino;          /* ... and that object's inode number */
    int32_t pty;                /* an open /dev/ptmx: the pseudo-terminal it is the master of (else -1) */
    uint64_t owner_serial;      /* the process it is charged to (that made it), in its `files`, while */
    int32_t owner_pid;          /* the process of pid owner_pid has this serial number */
    struct lx_file *next_dying; /* the list of files to finalise */
    struct lx_tcpmon *mon;      /* an open /proc/net/tcpmon's reader (tcpmon.c), made at its first read */
    struct bproc *binder;       /* an open /dev/binder: its binder process (binder.c), else NULL */
    struct evclient *evdev;     /* an open /dev/input/eventN: its client (evdev.c), else NULL */
};

/* A new open file of `kind` for object `obj` (a node, pipe, event object
 * or socket index), refs 1, charged to process `by`; or NULL (the error:
 * lx_file_error). A node's file holds it open. */
struct lx_file *lx_file_new(struct lx_proc *by, int kind, int32_t obj, uint32_t flags);
/* Why lx_file_new gave nothing to `by`: -EMFILE (the open files it made
 * and that are still open, descriptors of its own or not, reach twice its
 * hard RLIMIT_NOFILE, at least LX_NOFILE_HARD) or -ENFILE (LX_NR_FILE in all, or no memory). */
int lx_file_error(const struct lx_proc *by);
/* Free a file lx_file_new gave that nothing else saw (a failed call): its
 * node let go, nothing else finalised. */
void lx_file_discard(struct lx_file *f);
/* Take a reference to f, and drop one. The last one finalises the file:
 * after the outermost lx_file_put returns, every file whose last
 * reference went meanwhile (a socket's queue holds files, whose sockets
 * hold more) is finalised, one at a time, without recursion. */
void lx_file_get(struct lx_file *f);
void lx_file_put(struct lx_file *f);
/* The strace view's tracepoints of a Linux call, its entry and its answer
 * (lxtrace.c); called only when lx_enter or lx_exit is on. */
void lx_trace_enter(struct lx_ctx *c, uint64_t nr, const uint64_t *a);
void lx_trace_exit(struct lx_ctx *c, uint64_t nr, const uint64_t *a, int64_t r);
/* /proc/net/tcpmon (tcpmon.c): the next whole lines of the monitor's TCP
 * log for file f, at most len bytes into dst (0: none yet); and its reader
 * freed when the file goes. */
int64_t lx_tcpmon_read(struct lx_file *f, char *dst, uint64_t len);
void lx_tcpmon_close(struct lx_file *f);
/* What the personality holds now, for /proc/petrel (procfs.c): open
 * files, memory object records, event objects and epoll watches. */
uint32_t lx_files_in_use(void);
uint32_t lx_mobjs_in_use(void);
void lx_events_in_use(uint32_t *objects, uint32_t *watches);
/* ---------------------------------------------------------------- memory */
/* A memory object behind mappings, shared by the mapped ranges that cut
 * pieces of it (refs); the root archive's object is never released, nor
 * a file's own (of_file) while its node lives. */
struct lx_mobj {
    svc_handle h;
    uint32_t refs;              /* ranges using it (a file's own: 0 while not mapped) */
    uint8_t file;               /* the root archive's (read-only, shared by all: never cloned) */
    uint8_t shared;             /* MAP_SHARED memory: a fork maps this object, not a copy */
    uint8_t of_file;            /* the contents of file `node` (shared too): its node holds it, and
                                 * a range maps only the pages the file reaches (lx_mobj_span) */
    int32_t node;               /* a private copy of a file's bytes (mmap, a program's data): the
                                 * file (held open), or -1 for anonymous memory... */
    uint32_t foff, fend;        /* ...offset 0 holds its bytes from foff; past fend the object is
                                 * anonymous (a program's .bss) */
    struct lx_mobj *fork_copy;  /* during a fork only: the child's copy (lx_vmas_fork) */
};

/* A mapped range of a process: [start, end) of object obj from offset
 * off, with the rights it has now. obj NULL: reserved, nothing mapped
 * (PROT_NONE). The personality keeps these to place mappings and to fork;
 * the kernel keeps the mappings themselves. Each is a record of its own
 * (lx_alloc) in its process's tree (lx_proc.vmas), ordered by address:
 * node.start is its start, node.size its length (lx_vma_end). */
enum { LX_VMA_MMAP, LX_VMA_PROG, LX_VMA_HEAP, LX_VMA_STACK };
struct lx_vma {
    struct vanode node;
    uint64_t off;
    struct lx_mobj *obj;
    uint32_t rights;
    uint8_t kind;
    uint8_t nowrite;            /* a shared mapping of a file not open for writing: never PROT_WRITE */
    uint8_t on_fork;            /* LX_VMA_DONTFORK, LX_VMA_WIPEONFORK (madvise), or 0: copied */
};
#define LX_VMA_DONTFORK     1   /* a fork's child does not get this range */
#define LX_VMA_WIPEONFORK   2   /* ... gets it as fresh zeros */

static inline uint64_t lx_vma_end(const struct lx_vma *v)
{
    return v->node.start + v->node.size;
}

/* The range of a tree's node (NULL for none). */
static inline struct lx_vma *lx_vma_of(const struct vanode *n)
{
    return n ? vanode_entry(n, struct lx_vma, node) : NULL;
}

/* The range after v in address order (NULL at the end). */
static inline struct lx_vma *lx_vma_next(const struct lx_vma *v)
{
    return lx_vma_of(vatree_next(&v->node));
}

/* ---------------------------------------------------------------- blocking */
/* A call that cannot finish now keeps its reply (svc_defer) and is answered
 * later: restarted (the thread runs its `svc` again with the same
 * registers, and finds what it waited for), or resumed with a result. */
enum { LX_BLK_NONE, LX_BLK_PIPE, LX_BLK_WAIT, LX_BLK_VFORK, LX_BLK_TTY, LX_BLK_POLL, LX_BLK_SLEEP, LX_BLK_SIGSUSPEND,
       LX_BLK_SIGWAIT, LX_BLK_FUTEX, LX_BLK_EVENT, LX_BLK_SOCK, LX_BLK_LOCK, LX_BLK_DISK, LX_BLK_BINDER,
       LX_BLK_INPUT, LX_BLK_DISPLAY };
struct lx_block {
    int kind;
    svc_token token;
    int32_t on;                 /* the pipe (LX_BLK_PIPE) or the child (LX_BLK_VFORK) */
    uint64_t pc, sp, x[9];      /* the registers of the call (pc after its svc) */
};

/* What a call that waits keeps until it ends, in any way: its number and
 * descriptor, the open file it works on (a reference: a thread that closes
 * the descriptor meanwhile leaves the file to the call, as on Linux, and
 * the call's restarts use it), and the bytes it already moved. Set when
 * the call waits (linux.c: serve), dropped when it returns, is
 * interrupted, or its thread ends (lx_io_end); nothing of it outlives the call. */
struct lx_io {
    uint64_t nr;                /* the system call (0: none kept) */
    uint64_t pc;                /* ... made from here (the address after its svc) */
    uint32_t fd;
    struct lx_file *file;       /* held, or NULL */
    uint64_t done;              /* a write's (or MSG_WAITALL read's) bytes moved so far */
};

/* ---------------------------------------------------------------- processes */
/* A POSIX timer (ptimer.c). */
struct lx_ptimer {
    int used;
    struct lx_ptimer *next;     /* the next of its process's */
    int32_t id;                 /* timer_create's id */
    int32_t clock;              /* the clock it was made on */
    int cpu;                    /* it measures CPU time: of process cpu_pid, or of thread cpu_tid if set */
    int32_t cpu_pid, cpu_tid;
    int32_t notify, sig, tid;   /* sigev_notify, sigev_signo, and the thread for SIGEV_THREAD_ID (0: any) */
    uint64_t value;             /* sigev_value */
    uint64_t at, every;         /* next expiry on its clock (counter or CPU ns; 0: disarmed) and interval */
    int abs_calendar;           /* set for an absolute calendar time: moves when the clock is set */
    uint32_t overrun;           /* expiries its pending signal stands for, less one */
    uint32_t overrun_last;      /* what the last signal taken said (timer_getoverrun) */
};

/* A process's descriptors, as Linux's fdtable: room for `size`
 * descriptors (0, or a power of two from 64 on), doubled when a
 * descriptor past it is wanted, freed when the process ends. Each
 * descriptor is the slot of the open file it names and that file's
 * generation (lx_file_at: a stale one is refused, never served); two
 * bitmaps say which are open and which close on exec, so the lowest free
 * descriptor is found a word of 64 at a time, from `next` on (none is
 * free below it). All of it is one allocation: the slots, then the two
 * bitmaps. */
struct lx_fdtable {
    uint32_t size;
    uint32_t next;
    uint32_t count;             /* descriptors open (so that a walk of them stops at the last) */
    uint64_t *slot;             /* descriptor fd: (generation << 32) | (file slot + 1); 0 if closed */
    uint64_t *open, *cloexec;   /* size / 64 words each */
};

#define LX_RLIMITS          16
#define LX_RLIMIT_CPU       0
#define LX_RLIMIT_FSIZE     1
#define LX_RLIMIT_NOFILE    7
#define LX_RLIMIT_SIGPENDING 11

struct lx_started;
struct lx_proc {
    int used;                   /* 1 while in the tables; 0 once freed (the record itself goes after the
                                 * request that freed it: lx_reap) */
    struct lx_proc *next, *prev;        /* every process, oldest first (lx_procs) */
    struct lx_proc *hnext;      /* the next of its pid hash bucket */
    struct lx_proc *first_child, *last_child;   /* its children (ppid == pid), oldest first (wait's */
    struct lx_proc *sibling, *sibling_prev;     /* order, as Linux's), and its neighbours among its parent's */
    uint64_t serial;            /* never the same for two processes (a pid is used again) */
    int pid, ppid;              /* ppid 0: no Linux parent (started by a native program, or orphaned) */
    int pgid, sid;
    uint64_t rlim[LX_RLIMITS][2];   /* its resource limits, soft and hard (prlimit64; fork copies them) */
    int orphan;                 /* its parent ended: nobody will wait for it */
    int32_t cwd;                /* the working directory's node (0: the root) */
    svc_handle space;
    struct lx_proc *vm_of;      /* a vfork child (CLONE_VM | CLONE_VFORK): the process whose space it runs in
                                 * until it execs or ends (its own mappings are none); NULL otherwise */
    int borrowed;               /* vfork children running in its space now */
    int nthreads;               /* its threads alive (0: ended, or between exec's two steps) */
    struct lx_thread *first_thread;     /* its threads, through their `sibling` */
    uint64_t *utcbs;            /* the control page slots its threads use (bit k: LX_UTCB_VA - k pages), */
    uint32_t utcb_words;        /* ... in a bitmap of this many words that grows with them */
    uint32_t umask;             /* the file mode creation mask (fork copies it) */
    struct lx_started *started; /* what its program was started with, for /proc (procfs.c) */
    char comm[16];              /* the program's name (its file name, cut) */
    uint64_t brk_start, brk;    /* the heap: [brk_start, brk); mapped to lx_page_up(brk) */
    struct lx_mobj *heap_obj;   /* the heap's current object: offset 0 at heap_va, [heap_va, heap_top) */
    uint64_t heap_va, heap_end, heap_top;   /* heap_end: how far it was ever mapped */
    struct lx_fdtable fdt;              /* its descriptors (files.c; changed only through lx_fd_*) */
    uint32_t files, pipes, ptys;        /* open files, pipes and pseudo-terminals it made that are still
                                         * open (its shares) */
    struct vatree vmas;         /* its mapped ranges (struct lx_vma), by address; vmas.count of them */
    uint64_t gap_top;           /* where find_gap (memory.c) may resume: LX_MMAP_TOP or a range's start, with
                                 * no free gap of gap_need bytes or more above it (0: search from the top) */
    uint64_t gap_need;
    int ended, status;          /* ended: the Linux wait status is set */
    svc_token waiter;           /* a native wait(pid) in progress */
    /* signals (signal.c) */
    struct lx_sigaction act[LX_NSIG];   /* shared by its threads */
    struct lx_sinfo sinfo[LX_NSIG];     /* of each signal pending for the process (standard ones do not queue) */
    uint64_t pending;           /* sent to the process: any thread not blocking it takes it */
    struct { int sig, tid; struct lx_sinfo si; } rtq[LX_RTQ];   /* later instances of pending real-time
                                                                 * signals, in order (tid: sent to that thread) */
    int nrtq;
    int doomed;                 /* a fatal signal came while one of its threads was in a call: ends after it */
    uint64_t alarm_at, alarm_every;     /* ITIMER_REAL: next expiry (0: off) and interval, in ns */
    uint64_t cpu_at[2], cpu_every[2];   /* ITIMER_VIRTUAL, ITIMER_PROF: the expiry in the process's CPU
                                         * time (lx_proc_cpu_ns; 0: off) and the interval, in ns */
    int stopped;                /* by a stop signal */
    int report;                 /* for WUNTRACED/WCONTINUED: the stop signal, or 0xffff continued; 0 none */
    int execed;                 /* it called execve since it was forked (setpgid's EACCES) */
    int nice;                   /* setpriority's value, -20..19 (kept and reported: the scheduler ignores it) */
    uint64_t cpu_gone;          /* CPU time (ns) of its threads that ended */
    uint64_t cpu_children;      /* CPU time of the children it waited for (their children's included) */
    struct lx_ptimer *timers;   /* timer_create's (ptimer.c), newest first */
    int32_t next_timer_id;      /* the id the next timer_create gets (-1: all were given) */
    int ntimers;                /* timers in use: the service's timer looks at none of a process without */
};

/* p's lowest range (NULL if none), and the one holding address va (NULL if none): O(log n). */
static inline struct lx_vma *lx_vma_first(const struct lx_proc *p)
{
    return lx_vma_of(vatree_first(&p->vmas));
}

static inline struct lx_vma *lx_vma_at(const struct lx_proc *p, uint64_t va)
{
    return lx_vma_of(vatree_find(&p->vmas, va));
}

/* A thread of a process: what runs, blocks in a call and takes signals.
 * Its fault badge is its tid and slot (linux.c); the first thread's tid is the pid. */
struct lx_thread {
    int used;                   /* as a process's */
    int tid;
    uint32_t slot;              /* its place in the thread slots (its fault badge, lx_waiting_next) */
    struct lx_thread *hnext;    /* the next of its tid hash bucket */
    struct lx_thread *wq_next, *wq_prev;        /* its wait queue's (linux.c), while it keeps a reply */
    uint32_t wq;
    struct lx_proc *p;
    struct lx_thread *sibling;  /* the next thread of p */
    svc_handle thread;
    int utcb;                   /* its control page: LX_UTCB_VA - utcb pages */
    uint64_t cpus;              /* its affinity (sched_setaffinity), inherited by clone and fork; 0: every core */
    uint64_t fb_frame;          /* the frame its FBIOPAN_DISPLAY waits to see shown (fbdev.c), or 0 */
    uint8_t binder;             /* it called /dev/binder: it has binder threads (binder.c) */
    struct lx_block blk;        /* the call it is blocked in */
    struct lx_io io;            /* the call it is in the middle of (kept across its restarts) */
    uint64_t sync_need;         /* an fsync of /data waiting: the blocks it waits for (data.c; 0: none) */
    uint64_t sync_epoch;        /* ... and the /data epoch it began in */
    int in_call;                /* its system call is being answered now */
    int intr;                   /* a signal woke its blocked call: run again, the call is interrupted */
    int stopping;               /* listed for the timer to deliver a signal (signal.c: deliver_later) */
    int timed;                  /* its call waits until `deadline` (kept across the call's restarts) */
    int timed_calendar;         /* ... an absolute calendar time: it moves when the clock is set */
    uint64_t deadline;
    uint64_t blocked, pending;  /* its signal mask; signals sent to it alone (tkill, its faults) */
    struct lx_sinfo sinfo[LX_NSIG];
    uint64_t saved_mask;        /* the mask before rt_sigsuspend or ppoll set one... */
    int restore_mask;           /* ...to be put back when the call returns */
    uint64_t wait_set;          /* rt_sigtimedwait's signals while it waits */
    uint64_t ss_sp, ss_size;    /* sigaltstack */
    uint32_t ss_flags;
    uint64_t fault_addr, fault_esr;     /* of its last fault signal (the frame's fault_address and ESR record) */
    uint64_t retried;           /* the page of its last fault, run again (a file grew meanwhile), or 0 */
    uint64_t shared_calls;      /* its calls the shared entry answered (linux_fault_shared) */
    uint64_t clear_tid;         /* set_tid_address, CLONE_CHILD_CLEARTID: zeroed and woken when it ends */
    int32_t lock_blocker;       /* the process whose POSIX lock it waits for (LX_BLK_LOCK), or 0 */
    uint64_t fkey[2];           /* the futex it waits on (LX_BLK_FUTEX) */
    uint32_t fbits;             /* ... and its FUTEX_WAIT_BITSET bits */
    int fpi;                    /* ... a priority-inheritance one (FUTEX_LOCK_PI), at fuaddr, */
    uint64_t fuaddr;
    int fowner;                 /* ... held by the thread of this tid */
    uint64_t robust;            /* set_robust_list's head, or 0 */
};

/* How many pids and tids have been given out since boot (/proc/stat's "processes"). */
uint64_t lx_ids_given(void);
/* The process of pid, or NULL. */
struct lx_proc *lx_proc_of_pid(int pid);
/* The process `pid` names for p (0: p itself; a zombie too; the tid of a
 * thread names its process, and *thread says so), or NULL (proc.c). */
struct lx_proc *lx_proc_target(struct lx_proc *p, int64_t upid, int *thread);
/* The thread of tid, or NULL. */
struct lx_thread *lx_thread_of_tid(int tid);
/* Threads and processes alive (not yet freed), for /proc and sysinfo. */
uint32_t lx_threads_alive(void);
/* The calls the shared entry has answered, of every thread there was
 * (/proc/petrel_shared). */
uint64_t lx_shared_calls(void);
uint32_t lx_procs_alive(void);
/* The threads that keep a call's reply, in slot order: the one after
 * `after` (NULL: the first), or NULL. */
struct lx_thread *lx_waiting_next(const struct lx_thread *after);
/* The first thread of the queue of threads waiting for `kind` on `on`,
 * oldest first, then through their wq_next (the queue also holds threads
 * waiting for other things: look at each one's blk). A walk may wake the
 * thread it is on: take its wq_next first. */
struct lx_thread *lx_waiting_on(int kind, int32_t on);
/* The first thread of p (the one a process-wide signal tries first), or NULL. */
struct lx_thread *lx_main_thread(struct lx_proc *p);
/* A new thread of p with a fresh tid (tid: that one, for a new process's
 * first), not started; or NULL with *err (-EAGAIN). */
struct lx_thread *lx_thread_new(struct lx_proc *p, int tid, int *err);
/* A thread takes another tid (exec: the caller becomes the process's main thread). */
void lx_thread_renumber(struct lx_thread *t, int tid);
/* A thread ends (its kernel thread already stopped or about to be): its slot goes. */
void lx_thread_free(struct lx_thread *t);
/* CPU time (ns) of a thread so far, and the core it runs on (the kernel's
 * accounting: time in the personality's calls counts only in the kernel
 * placement); a process's CPU time, its ended threads' included. */
uint64_t lx_thread_cpu_ns(const struct lx_thread *t);
uint32_t lx_thread_core(const struct lx_thread *t);
/* The cores online (bit i: core i), as the kernel says; Linux threads run on any of them. */
uint64_t lx_cpus_online(void);
/* How many: what sysconf's count of processors, /proc/cpuinfo and /proc/stat show. */
int lx_ncpus(void);
uint64_t lx_proc_cpu_ns(const struct lx_proc *p);
/* Every process, oldest first (then through p->next), zombies too. */
struct lx_proc *lx_procs(void);
/* The process of pid if it is still the one with that serial number, else NULL. */
struct lx_proc *lx_proc_of_serial(int pid, uint64_t serial);
/* Free the records of the processes and threads that ended in earlier
 * requests: run at the start of each request, so that a record freed
 * during one stays readable until that request is done. */
void lx_reap(void);
/* Start a process from argv/envp (NUL-separated strings); its pid or a negated errno. */
int lx_exec(char *const argv[], int argc, char *const envp[], int envc);
/* The `#!` line of script file `node`: its interpreter's path and its one
 * argument (empty if none) into the buffers; 1 if it has an argument, 0
 * if not, or a negated errno (ENOEXEC: no interpreter on the line). */
int lx_script_line(int32_t node, char *interp, uint64_t isize, char *arg, uint64_t asize);
/* The interpreter's node, a regular executable file, or a negated errno. */
int32_t lx_script_interp(const char *interp);
/* End a process with Linux wait status `status`: kill its space, tell its waiter. */
void lx_proc_end(struct lx_proc *p, int status);
/* p's space is about to go: the vfork children running in it end (SIGKILL). */
void lx_end_borrowers(struct lx_proc *p);

/* Load the ELF of node `node` into a new space of process p and build its
 * stack; the entry pc and initial sp in *pc, *sp. 0 or a negated errno.
 * execfn is the path the caller named (AT_EXECFN), exe the program's
 * (/proc/PID/exe: a script's interpreter). */
int lx_load(struct lx_proc *p, int32_t node, const char *execfn, const char *exe, char *const argv[], int argc,
            char *const envp[], int envc, uint64_t *pc, uint64_t *sp);

/* ---------------------------------------------------------------- system calls */
/* The state of one system call: the process, its call (to reach its memory). */
struct lx_ctx {
    struct lx_proc *p;
    struct lx_thread *t;        /* the calling thread, one of p's */
    uint64_t nr;                /* the system call being served */
    struct svc_call *call;
    const uint64_t *mr;         /* the fault message (a system call's registers): call->mr, or the register entry's */
    int yield;                  /* the answer gives up the rest of the time slice (sched_yield) */
    int fast;                   /* served on the register entry: a call that finds it must wait answers LX_SLOW */
};

#define LX_NORETURN     (-4096 - 1)     /* the process ended (or was replaced): no reply */
#define LX_BLOCK        (-4096 - 2)     /* the call waits: c->p->blk.kind and .on say for what */
#define LX_AGAIN        (-4096 - 3)     /* the call runs again from its `svc`, after a yield (pending
                                         * signals first): a word its other threads keep changing */
#define LX_DISKWAIT     (-4096 - 5)     /* the call needs a block of the disk not read yet (data.c),
                                         * having changed nothing: it waits (LX_BLK_DISK) and runs again
                                         * (on the register entry: LX_SLOW) */
#define LX_SLOW         (-4096 - 4)     /* (c->fast only) the call would wait or change the signal mask:
                                         * nothing done, the full path serves it */

/* The current call waits for `kind` on `on` (its reply is kept; the
 * call runs again when lx_wake_all(kind, on) or a signal wakes it):
 * returns LX_BLOCK for the handler to return. */
int64_t lx_block(struct lx_ctx *c, int kind, int32_t on);
/* How many file events (lx_wake_all of a file's kind) there have been: epoll's edge triggering. */
uint64_t lx_io_generation(void);
/* Answer a blocked thread: restart its call (the kinds but
 * LX_BLK_VFORK), or resume it with x0 = result (LX_BLK_VFORK). */
void lx_wake(struct lx_thread *t, int64_t result);
/* Answer a blocked thread's call with `result` (it does not run again). */
void lx_wake_resume(struct lx_thread *t, int64_t result);
/* Wake p's threads blocked in `kind`. */
void lx_wake_proc(struct lx_proc *p, int kind);
/* Wake every process blocked in `kind` on `on`; and, unless kind is
 * LX_BLK_WAIT or LX_BLK_VFORK (something a file does not do), every poll,
 * which looks again at its descriptors. */
void lx_wake_all(int kind, int32_t on);

/* Handle system call `nr` with args a[0..5]; the value for x0, or LX_NORETURN. */
int64_t lx_syscall(struct lx_ctx *c, uint64_t nr, const uint64_t *a);

/* Copy from / to the calling process; 0 or -LX_EFAULT. */
int lx_copy_in(struct lx_ctx *c, void *dst, uint64_t src, uint64_t len);
int lx_copy_out(struct lx_ctx *c, uint64_t dst, const void *src, uint64_t len);
/* Copy out page by page up to the first page the process cannot write:
 * how many bytes went (Linux's partial reads). */
uint64_t lx_copy_out_some(struct lx_ctx *c, uint64_t dst, const void *src, uint64_t len);
/* ... and in from the process: how many bytes came (Linux's partial writes). */
uint64_t lx_copy_in_some(struct lx_ctx *c, void *dst, uint64_t src, uint64_t len);
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
int64_t lx_sys_mlock(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t flags);
int64_t lx_sys_preadv(struct lx_ctx *c, uint64_t fd, uint64_t uiov, uint64_t cnt, int64_t off, uint64_t flags,
                      int v2, int writing);
int64_t lx_sys_lseek(struct lx_ctx *c, uint64_t fd, int64_t off, uint64_t whence);
int64_t lx_sys_fstat(struct lx_ctx *c, uint64_t fd, uint64_t buf);
int64_t lx_sys_newfstatat(struct lx_ctx *c, int64_t dirfd, uint64_t path, uint64_t buf, uint64_t flags);
int64_t lx_sys_statx(struct lx_ctx *c, int64_t dirfd, uint64_t path, uint64_t flags, uint64_t mask, uint64_t buf);
int64_t lx_sys_getdents64(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len);
int64_t lx_sys_ioctl(struct lx_ctx *c, uint64_t fd, uint64_t req, uint64_t arg);
/* poll.c: ppoll and pselect6. */
int64_t lx_sys_ppoll(struct lx_ctx *c, uint64_t fds, uint64_t nfds, uint64_t timeout, uint64_t mask, uint64_t masksize);
int64_t lx_sys_pselect6(struct lx_ctx *c, uint64_t nfds, uint64_t rd, uint64_t wr, uint64_t ex, uint64_t timeout,
                        uint64_t mask);
int64_t lx_sys_chdir(struct lx_ctx *c, uint64_t path);
int64_t lx_sys_readlinkat(struct lx_ctx *c, int64_t dirfd, uint64_t path, uint64_t buf, uint64_t size);
int64_t lx_sys_fchdir(struct lx_ctx *c, uint64_t fd);
int64_t lx_sys_getcwd(struct lx_ctx *c, uint64_t buf, uint64_t size);
/* Writing files and changing names (files.c, vfs.c). */
#define LX_UMASK        022             /* the file mode creation mask a process starts with */
/* The file mode creation mask of p (vfs.c), and umask itself. */
uint32_t lx_umask_of(const struct lx_proc *p);
int64_t lx_sys_umask(struct lx_ctx *c, uint64_t mask);
int64_t lx_sys_pwrite(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len, int64_t off);
/* The open file of descriptor fd of p, or NULL (none, or a stale one:
 * logged, as it is a bug of the personality); an O_PATH one too, for
 * the calls that take those (close, dup, fcntl, fstat, *at, fchdir,
 * SCM_RIGHTS), as Linux's fdget_raw. */
struct lx_file *lx_fd_file(struct lx_proc *p, uint64_t fd);
/* The open file of descriptor fd of p for a call that works on it, or
 * NULL (none, or an O_PATH descriptor: EBADF), as Linux's fdget. */
struct lx_file *lx_fd_use(struct lx_proc *p, uint64_t fd);
/* lx_fd_use that changes nothing (a stale entry is NULL, left for
 * lx_fd_use to log and clear): for linux_fault_shared. */
struct lx_file *lx_fd_peek(struct lx_proc *p, uint64_t fd);
/* Open file slot i if it is live with generation gen, or NULL. */
struct lx_file *lx_file_at(int32_t i, uint32_t gen);
/* Slot number of open file f in the table. */
int32_t lx_file_slot(const struct lx_file *f);
/* A new inode number for a pipe, socket or event object (as Linux's get_next_ino). */
uint32_t lx_ino_new(void);
/* What an O_PATH name of open file f names (LX_NAME_*; 0 for a node's
 * file), and the st_mode fstat gives for that kind of object. */
int lx_file_names(const struct lx_file *f);
uint32_t lx_name_mode(int what);
/* The inode number fstat gives for open file f. */
uint64_t lx_file_ino(const struct lx_file *f);
/* Open `t` (a file /proc/PID/fd/N names that is not a node's) again for
 * p with open flags fl: with O_PATH a name of it (LX_FILE_NAME); else a
 * pipe's end joins that pipe (a new one if it is gone), and a socket or
 * an event object gives ENXIO, as on Linux. A descriptor or a negated errno. */
int64_t lx_file_reopen(struct lx_proc *p, struct lx_file *t, uint32_t fl);
/* Descriptor fd of p names f from now on (NULL: nothing; not
 * close-on-exec), with f's generation; the caller moves the references.
 * 0, or -ENOMEM if the table had to grow and could not (nothing changed). */
int lx_fd_set(struct lx_proc *p, uint32_t fd, struct lx_file *f);
/* Is descriptor fd of p (an open one) closed on exec, and mark it so or not. */
int lx_fd_cloexec(const struct lx_proc *p, uint32_t fd);
void lx_fd_set_cloexec(struct lx_proc *p, uint32_t fd, int on);
/* The first open descriptor of p from `from` on, or -1. */
int64_t lx_fd_next_open(const struct lx_proc *p, uint64_t from);
/* Make child's descriptors those of p (fork): each takes a reference. 0 or -ENOMEM. */
int lx_fds_fork(struct lx_proc *p, struct lx_proc *child);
/* Close p's close-on-exec descriptors (execve). */
void lx_fds_exec(struct lx_proc *p);
/* The open file the call c serves works on through descriptor fd: the
 * file its waiting kept (c->t->io), if this is that call again on that
 * descriptor, else the descriptor's (lx_fd_use). */
struct lx_file *lx_call_file(struct lx_ctx *c, uint64_t fd);
/* The call of thread t ends: what it kept (c->t->io) goes. */
void lx_io_end(struct lx_thread *t);
/* Copy a path from the process into buf (LX_PATH_MAX bytes); its length or a negated errno. */
int64_t lx_path_in(struct lx_ctx *c, char *buf, uint64_t upath);
/* The directory a path is relative to (AT_FDCWD or a directory descriptor), or a negated errno. */
int32_t lx_start_dir(struct lx_ctx *c, int64_t dirfd, const char *path);
/* Copy path `upath` into buf and find the directory it starts from
 * (*dir); the path's length (0 allowed, *dir then unset: the caller
 * decides) or a negated errno. */
int64_t lx_path_at(struct lx_ctx *c, int64_t dirfd, uint64_t upath, char *buf, int32_t *dir);
/* Read from f at *pos into the personality's dst; write to f (at its
 * position) from src: regular files, /proc files, /dev/null and /dev/zero
 * (EINVAL for other kinds). A count or a negated errno. */
int64_t lx_file_read_kernel(struct lx_file *f, void *dst, uint64_t len, uint64_t *pos);
int64_t lx_file_write_kernel(struct lx_file *f, const void *src, uint64_t len);
/* Fill a struct stat (128 bytes, Linux's arm64 layout) for node. */
int lx_stat_fill(int32_t node, void *out);
int64_t lx_sys_mkdirat(struct lx_ctx *c, int64_t dirfd, uint64_t path, uint64_t mode);
int64_t lx_sys_unlinkat(struct lx_ctx *c, int64_t dirfd, uint64_t path, uint64_t flags);
int64_t lx_sys_renameat2(struct lx_ctx *c, int64_t olddirfd, uint64_t oldpath, int64_t newdirfd, uint64_t newpath,
                         uint64_t flags);
int64_t lx_sys_linkat(struct lx_ctx *c, int64_t olddirfd, uint64_t oldpath, int64_t newdirfd, uint64_t newpath,
                      uint64_t flags);
int64_t lx_sys_symlinkat(struct lx_ctx *c, uint64_t target, int64_t newdirfd, uint64_t linkpath);
int64_t lx_sys_fchmodat(struct lx_ctx *c, int64_t dirfd, uint64_t path, uint64_t mode, uint64_t flags);
int64_t lx_sys_fchmod(struct lx_ctx *c, uint64_t fd, uint64_t mode);
int64_t lx_sys_fchownat(struct lx_ctx *c, int64_t dirfd, uint64_t path, uint64_t uid, uint64_t gid, uint64_t flags);
int64_t lx_sys_fchown(struct lx_ctx *c, uint64_t fd, uint64_t uid, uint64_t gid);
int64_t lx_sys_utimensat(struct lx_ctx *c, int64_t dirfd, uint64_t path, uint64_t times, uint64_t flags);
int64_t lx_sys_faccessat(struct lx_ctx *c, int64_t dirfd, uint64_t path, uint64_t mode, uint64_t flags);
int64_t lx_sys_truncate(struct lx_ctx *c, uint64_t path, int64_t len);
int64_t lx_sys_ftruncate(struct lx_ctx *c, uint64_t fd, int64_t len);
int64_t lx_sys_fsync(struct lx_ctx *c, uint64_t fd);
int64_t lx_sys_statfs(struct lx_ctx *c, uint64_t path, uint64_t buf);
/* fadvise64: advice taken and ignored as Linux's tmpfs does (EBADF,
 * ESPIPE for a pipe, EINVAL for a negative length or unknown advice). */
int64_t lx_sys_fadvise64(struct lx_ctx *c, uint64_t fd, int64_t len, uint64_t advice);

/* File locks (lock.c): fcntl's F_GETLK, F_SETLK, F_SETLKW and F_OFD_*
 * (cmd) with the struct flock at uflock; flock; what a close of f by p
 * (its POSIX locks of that file) and the last close of f (its OFD and
 * flock locks) release. */
#define F_GETLK         5
#define F_SETLK         6
#define F_SETLKW        7
#define F_OFD_GETLK     36
#define F_OFD_SETLK     37
#define F_OFD_SETLKW    38
int64_t lx_fcntl_lock(struct lx_ctx *c, struct lx_file *f, uint32_t cmd, uint64_t uflock);
int64_t lx_sys_flock(struct lx_ctx *c, uint64_t fd, uint64_t op);
void lx_locks_closed(const struct lx_proc *p, const struct lx_file *f);
void lx_locks_file_gone(const struct lx_file *f);
uint32_t lx_locks_in_use(void);

/* Extended attributes (xattr.c): the twelve calls (nr; a: their
 * arguments); a node's, freed with it. */
int64_t lx_sys_xattr(struct lx_ctx *c, uint64_t nr, const uint64_t *a);
void lx_xattrs_free(struct lx_node *n);
/* The node of a path from the working directory (vfs.c), following a final link when `follow`. */
int32_t lx_node_at_path(struct lx_ctx *c, uint64_t upath, int follow);
int64_t lx_sys_fstatfs(struct lx_ctx *c, uint64_t fd, uint64_t buf);
int64_t lx_sys_sendfile(struct lx_ctx *c, uint64_t out, uint64_t in, uint64_t offp, uint64_t count);
int64_t lx_sys_copy_file_range(struct lx_ctx *c, uint64_t fd_in, uint64_t uoff_in, uint64_t fd_out,
                               uint64_t uoff_out, uint64_t len, uint64_t flags);
int64_t lx_sys_fallocate(struct lx_ctx *c, uint64_t fd, uint64_t mode, int64_t off, int64_t len);
/* The console descriptors 0, 1 and 2 of a new process; 0 or a negated errno. */
int lx_files_init(struct lx_proc *p);
/* Close every descriptor of p, and free its table. */
void lx_files_drop(struct lx_proc *p);

int64_t lx_sys_brk(struct lx_ctx *c, uint64_t addr);
int64_t lx_sys_mmap(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags, int64_t fd,
                    uint64_t off);
int64_t lx_sys_munmap(struct lx_ctx *c, uint64_t addr, uint64_t len);
int64_t lx_sys_mprotect(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t prot);
int64_t lx_sys_madvise(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t advice);
int64_t lx_sys_mremap(struct lx_ctx *c, uint64_t addr, uint64_t old_len, uint64_t new_len, uint64_t flags,
                      uint64_t new_addr);
int64_t lx_sys_msync(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t flags);
/* Map [va, va + size) of p to `size` bytes of obj from offset off (the
 * object gains a reference); 0 or a negated errno. */
int lx_vma_map(struct lx_proc *p, struct lx_mobj *obj, uint64_t va, uint64_t off, uint64_t size, uint32_t rights,
               int kind);
/* A fresh zero-filled object of `size` bytes, mapped; 0 or -ENOMEM. */
int lx_vma_fresh(struct lx_proc *p, uint64_t va, uint64_t size, uint32_t rights, int kind);
/* The root archive's object (program pages mapped in place). */
struct lx_mobj *lx_file_mobj(void);
/* A new object record for handle h (refs 0 until mapped), or NULL (h released). */
struct lx_mobj *lx_mobj_new(svc_handle h, int file);
/* Say that o is a copy of file node's bytes from foff, up to fend bytes
 * of o (the node is held open while o lives). */
void lx_mobj_origin(struct lx_mobj *o, int32_t node, uint64_t foff, uint64_t fend);
/* Release a record no range came to use (a failed mapping). */
void lx_mobj_unused(struct lx_mobj *o);
/* A file's own object for node (refs 0: nothing maps it yet), or NULL (h released). */
struct lx_mobj *lx_mobj_of_file(svc_handle h, int32_t node);
/* Release a file's own object record (its node goes, or keeps its
 * contents elsewhere again); nothing may map it. */
void lx_mobj_file_gone(struct lx_mobj *o);
/* How many of len bytes from offset off of o a range maps in the kernel:
 * all, but for a file's own object only up to the end of the page the
 * file ends in (past it: SIGBUS). */
uint64_t lx_mobj_span(const struct lx_mobj *o, uint64_t off, uint64_t len);
/* File node n's size went from `old` to its size now: every range that
 * maps its object maps the pages it reaches now. */
void lx_file_resized(const struct lx_node *n, uint64_t old);
/* Where va is, for a fault of an access `need` (R_* rights): -1 if not
 * in a range of p that allows it and maps a file's own object; 0 past
 * the file's last page (SIGBUS, BUS_ADRERR); 1 inside it (mapped now: the
 * file grew since the access). */
int lx_vma_file_page(struct lx_proc *p, uint64_t va, uint32_t need);
/* Drop every mapping record of p (the kernel's mappings go with its space). */
void lx_vmas_drop(struct lx_proc *p);
/* Give child (an empty space) copy-on-write copies of every mapping of p;
 * 0 or a negated errno. */
int lx_vmas_fork(struct lx_proc *p, struct lx_proc *child);
/* Write into p's memory at va (the object behind it, so a copy-on-write
 * page of a new child is its own); 0 or -EFAULT. */
int lx_vma_poke(struct lx_proc *p, uint64_t va, const void *src, uint64_t len);
/* Where lx_vma_poke would write [va, va + len) (one writable range, not
 * the read-only archive; len 0 as 1): the memory object, and the offset
 * of va in it, for svc_mem_write; 0 or -EFAULT. */
int lx_vma_target(struct lx_proc *p, uint64_t va, uint64_t len, svc_handle *h, uint64_t *off);
/* Whose memory p's threads run in: a vfork child's is its parent's. */
static inline struct lx_proc *lx_memory_of(struct lx_proc *p)
{
    return p->vm_of ? p->vm_of : p;
}
/* Read p's memory at va (through the object behind it); 0 or -EFAULT. */
int lx_vma_peek(struct lx_proc *p, uint64_t va, void *dst, uint64_t len);
/* Compare-and-swap the word at va in p's memory (futex.c), atomically
 * against p's threads on any core: *old gets what was there; 0 or -EFAULT
 * (not writable memory of p's own). */
int lx_vma_cas32(struct lx_proc *p, uint64_t va, uint32_t expect, uint32_t desired, uint32_t *old);

/* Processes (proc.c). */
int64_t lx_sys_clone(struct lx_ctx *c, uint64_t flags, uint64_t sp, uint64_t ptid, uint64_t tls, uint64_t ctid);
int64_t lx_sys_clone3(struct lx_ctx *c, uint64_t uargs, uint64_t size);
int64_t lx_sys_execve(struct lx_ctx *c, uint64_t path, uint64_t argv, uint64_t envp);
int64_t lx_sys_execveat(struct lx_ctx *c, int64_t dirfd, uint64_t path, uint64_t argv, uint64_t envp, uint64_t flags);
int64_t lx_sys_wait4(struct lx_ctx *c, int64_t pid, uint64_t status, uint64_t options, uint64_t rusage);
int64_t lx_sys_waitid(struct lx_ctx *c, uint64_t idtype, uint64_t id, uint64_t info, uint64_t options,
                      uint64_t rusage);
int64_t lx_sys_setpgid(struct lx_ctx *c, int64_t pid, int64_t pgid);
int64_t lx_sys_getpgid(struct lx_ctx *c, int64_t pid);
int64_t lx_sys_getsid(struct lx_ctx *c, int64_t pid);
int64_t lx_sys_setsid(struct lx_ctx *c);
/* Priorities and scheduling (proc.c). */
int64_t lx_sys_getpriority(struct lx_ctx *c, uint64_t which, uint64_t who);
int64_t lx_sys_setpriority(struct lx_ctx *c, uint64_t which, uint64_t who, uint64_t niceval);
int64_t lx_sys_sched_getaffinity(struct lx_ctx *c, int64_t pid, uint64_t len, uint64_t mask);
int64_t lx_sys_sched_setaffinity(struct lx_ctx *c, int64_t pid, uint64_t len, uint64_t mask);
int64_t lx_sys_getcpu(struct lx_ctx *c, uint64_t cpu, uint64_t node);
int64_t lx_sys_sched_getscheduler(struct lx_ctx *c, int64_t pid);
int64_t lx_sys_sched_getparam(struct lx_ctx *c, int64_t pid, uint64_t param);
int64_t lx_sched_priority_limit(uint32_t policy, int max);
/* Write a struct rusage with CPU time cpu_ns (as user time; the rest 0)
 * to buf; 0 or -EFAULT (syscalls.c). */
int lx_rusage_out(struct lx_ctx *c, uint64_t buf, uint64_t cpu_ns);
/* A fresh empty space with a Linux process's limits, or 0. */
svc_handle lx_space_new(void);
/* A new process with a fresh pid and space (limits set) and its first
 * thread (not started), child of `parent` (NULL: none), or NULL with *err
 * (-EAGAIN: no pid, space or thread; -ENOMEM: no memory for its record). */
struct lx_proc *lx_proc_new(struct lx_proc *parent, int *err);
/* Release a process lx_proc_new gave that never ran. */
void lx_proc_discard(struct lx_proc *p);
/* A process nobody will wait for any more (reaped, or never to be):
 * out of the tables, its record freed by lx_reap. */
void lx_proc_free(struct lx_proc *p);
/* A control page slot for a new thread in p's space (LX_UTCB_VA - slot
 * pages), or -1 (-EAGAIN: none left, or no memory for the map); and one given back. */
int lx_utcb_take(struct lx_proc *p);
void lx_utcb_give(struct lx_proc *p, int slot);
/* Give t a kernel thread in its process's space faulting to us, started
 * at pc/sp with x0 = arg; with the registers of thread `from` if it is
 * not 0, and TLS *tls if tls is not NULL. 0 or -EAGAIN. */
int lx_thread_start(struct lx_thread *t, svc_handle from, uint64_t pc, uint64_t sp, uint64_t arg, const uint64_t *tls);
/* The calling thread ends (exit): the process too when it was the last. */
void lx_thread_exit(struct lx_ctx *c, int status);
/* futex.c: the futex call, and the wake of a thread's clear_tid word. */
int64_t lx_sys_futex(struct lx_ctx *c, uint64_t uaddr, uint64_t op, uint64_t val, uint64_t uts, uint64_t uaddr2,
                     uint64_t val3);
void lx_futex_wake_addr(struct lx_proc *p, uint64_t uaddr, int n);
/* Thread t ends (exit, its process's end, execve): the futexes its robust
 * list names and the PI futexes it holds are marked FUTEX_OWNER_DIED and
 * passed on, with p's memory still mapped. */
void lx_futex_thread_gone(struct lx_thread *t);
/* Is futex operation `op` one that a signal never ends with EINTR (it runs
 * again after the handler, as Linux's FUTEX_LOCK_PI: a PI mutex's caller
 * takes any other answer for the lock)? */
int lx_futex_never_eintr(uint64_t op);
int64_t lx_sys_set_robust_list(struct lx_ctx *c, uint64_t head, uint64_t len);
int64_t lx_sys_get_robust_list(struct lx_ctx *c, int64_t tid, uint64_t uhead, uint64_t ulen);

/* Pipes and descriptors (pipe.c). */
int64_t lx_sys_pipe2(struct lx_ctx *c, uint64_t fds, uint64_t flags);
int64_t lx_sys_dup(struct lx_ctx *c, uint64_t fd);
int64_t lx_sys_dup3(struct lx_ctx *c, uint64_t oldfd, uint64_t newfd, uint64_t flags);
int64_t lx_sys_close_range(struct lx_ctx *c, uint64_t first, uint64_t last, uint64_t flags);
int64_t lx_sys_fcntl(struct lx_ctx *c, uint64_t fd, uint64_t cmd, uint64_t arg);
/* Read and write a pipe's end (the descriptor's checks done). */
int64_t lx_pipe_read(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len);
int64_t lx_pipe_write(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len);
/* The bytes a write takes from the process: one buffer at buf (niov 0),
 * or the niov vectors (struct iovec: base, length) at iov one after the
 * other, as writev reads them. lx_src_copy copies n of them from offset
 * off; 0 or -EFAULT. */
struct lx_src {
    uint64_t buf, iov, niov;
};
int lx_src_copy(struct lx_ctx *c, void *dst, const struct lx_src *s, uint64_t off, uint64_t n);
/* write() or writev() of len bytes of s to a pipe's end: one write, as
 * Linux's pipe_write takes the vectors whole (at most PIPE_BUF bytes in
 * all never split). */
int64_t lx_pipe_write_src(struct lx_ctx *c, struct lx_file *f, const struct lx_src *s, uint64_t len);
/* sendfile's write into a pipe from the personality's src: what fits
 * (0: nothing; with may_wait, LX_BLOCK or EAGAIN instead), or -EPIPE. */
int64_t lx_pipe_write_kernel(struct lx_ctx *c, struct lx_file *f, const void *src, uint64_t len, int may_wait);
/* A new open file, with open flags fl, of the pipe of inode number ino
 * (a pipe's end or an O_PATH name of one, reached through
 * /proc/PID/fd/N): a descriptor of p, or a negated errno. Once every end
 * of that pipe closed, Linux's pipe inode gets a new empty pipe when it is
 * opened again; so here: a new pipe with the same inode number. */
int64_t lx_pipe_reopen(struct lx_proc *p, uint32_t ino, uint32_t fl);
/* The inode numbers of the pipe, socket or event object of f (0: not one). */
uint32_t lx_pipe_ino(const struct lx_file *f);
uint32_t lx_sock_ino(const struct lx_file *f);
uint32_t lx_event_ino(const struct lx_file *f);
/* Pipes in use. */
uint32_t lx_pipes_in_use(void);
/* A pipe's end closed for good. */
void lx_pipe_close(struct lx_file *f);
/* poll's events (POLLIN, POLLOUT, POLLERR, POLLHUP, as Linux's) now true of a pipe's end. */
#define LX_POLLIN   0x001
#define LX_POLLOUT  0x004
#define LX_POLLERR  0x008
#define LX_POLLHUP  0x010
int lx_pipe_poll(struct lx_file *f);
/* What open file f has for poll now (LX_POLL*): every kind of file (poll.c). */
int lx_file_poll(struct lx_file *f);
int lx_file_poll_here(struct lx_file *f);
/* Bytes waiting in the pipe of f. */
uint64_t lx_pipe_avail(struct lx_file *f);
/* Would a read (writing 0) or a write of len bytes on pipe end f finish
 * without waiting (and, writing, without SIGPIPE)? */
int lx_pipe_ready(struct lx_file *f, int writing, uint64_t len);
/* The same for a connected stream socket (socket.c): one neither shut
 * down nor failed, with data to read or room for len bytes at its peer. */
int lx_sock_ready(struct lx_file *f, int writing, uint64_t len);
/* The lowest free descriptor of p from `from` on for f, or -EMFILE. */
int lx_fd_new(struct lx_proc *p, struct lx_file *f, int cloexec, int from);
/* A new open file (lx_file_new's kind, obj and flags, made by p) behind
 * p's lowest free descriptor: the descriptor, its file in *out; or a
 * negated errno, nothing left behind. */
int lx_fd_open(struct lx_proc *p, int kind, int32_t obj, uint32_t flags, int cloexec, struct lx_file **out);
/* How many descriptors p may have: RLIMIT_NOFILE's soft limit (at most LX_NR_OPEN). */
static inline uint32_t lx_nofile(const struct lx_proc *p)
{
    return p->rlim[LX_RLIMIT_NOFILE][0] < LX_NR_OPEN ? (uint32_t)p->rlim[LX_RLIMIT_NOFILE][0] : LX_NR_OPEN;
}
/* Linux's defaults (syscalls.c): a new process's limits. */
void lx_rlimits_init(struct lx_proc *p);
/* RLIMIT_FSIZE for c's thread: a write of *len bytes at pos (len given)
 * or a size of pos (len NULL) past the soft limit sends it SIGXFSZ and is
 * -EFBIG; a write that starts below the limit is cut to end at it; 0. */
int64_t lx_fsize_check(struct lx_ctx *c, uint64_t pos, uint64_t *len);

/* eventfd, timerfd and epoll (event.c). */
int64_t lx_sys_eventfd2(struct lx_ctx *c, uint64_t initval, uint64_t flags);
int64_t lx_sys_timerfd_create(struct lx_ctx *c, uint64_t clock, uint64_t flags);
int64_t lx_sys_signalfd4(struct lx_ctx *c, int64_t fd, uint64_t umask, uint64_t size, uint64_t flags);
/* A signal was made pending: signalfd readers and pollers look again. */
void lx_event_signal_sent(void);
int64_t lx_sys_timerfd_settime(struct lx_ctx *c, uint64_t fd, uint64_t flags, uint64_t unew, uint64_t uold);
int64_t lx_sys_timerfd_gettime(struct lx_ctx *c, uint64_t fd, uint64_t ucur);
int64_t lx_sys_epoll_create1(struct lx_ctx *c, uint64_t flags);
int64_t lx_sys_epoll_ctl(struct lx_ctx *c, uint64_t epfd, uint64_t op, uint64_t fd, uint64_t uevent);
int64_t lx_sys_epoll_pwait(struct lx_ctx *c, uint64_t epfd, uint64_t uevents, uint64_t maxevents, int64_t ms,
                           uint64_t uts, int two, uint64_t mask, uint64_t masksize);
/* An event descriptor's read or write (the descriptor's checks done), its
 * poll state, and the end of an open file (its watches go; an event
 * object's own file frees it). */
int64_t lx_event_rw(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len, int writing);
/* Take an eventfd's value (one with EFD_SEMAPHORE) into *v: 8, -EAGAIN,
 * LX_BLOCK, or -EINVAL (f is not an eventfd). */
int64_t lx_eventfd_take(struct lx_ctx *c, struct lx_file *f, uint64_t *v);
int lx_event_poll(struct lx_file *f);
void lx_event_file_gone(struct lx_file *f);
/* The name Linux gives an event descriptor's anonymous inode: "[eventfd]", "[timerfd]", "[eventpoll]". */
const char *lx_event_name(struct lx_file *f);
/* What an O_PATH name of event file f names: LX_NAME_EVENTFD, _TIMERFD or _EPOLL (0: not an event's file). */
int lx_event_name_of(const struct lx_file *f);
/* The earliest armed timerfd expiry (0: none), and the timer's visit. */
uint64_t lx_event_next_deadline(void);
void lx_event_timers(void);

#define LX_SOCKS        64              /* sockets in all (socket.c; AF_INET ones too) */

/* A list of the calling process's buffers: an iovec array (n entries at
 * iov), or one buffer (n 0: base, len); or the personality's own bytes
 * (kbuf: sendfile's). lx_uio_copy copies len bytes at offset off of u to
 * (out 0) or from (out 1) buf; 0 or -EFAULT. */
struct uio {
    uint64_t iov, n;
    uint64_t base, len;
    const uint8_t *kbuf;
};
int lx_uio_copy(struct lx_ctx *c, const struct uio *u, uint64_t off, void *buf, uint64_t len, int out);
/* The piece of u that starts `off` bytes in, in one go: its address (in
 * the caller's memory, or u's kernel buffer) and its length, at most max
 * (0 past the end); 0 or -LX_EFAULT. */
int lx_uio_piece(struct lx_ctx *c, const struct uio *u, uint64_t off, uint64_t max, uint64_t *addr,
                 uint64_t *len);

/* What a receive call asks besides its buffers, and what it answers. */
struct lx_recv_args {
    uint32_t flags;
    uint64_t uname, unamelen;   /* where the sender's address goes (recvfrom: a length word; 0: none) */
    int msg;                    /* recvmsg: the name length is a value, returned in namelen */
    uint64_t ctl, ctllen;
    uint32_t mflags;            /* msg_flags out */
    uint64_t ctlused;
    uint32_t namelen;           /* recvmsg's name length out */
};

/* Sockets (socket.c; AF_INET ones through inet.c). */
int64_t lx_sys_socket(struct lx_ctx *c, uint64_t family, uint64_t type, uint64_t protocol);
int64_t lx_sys_socketpair(struct lx_ctx *c, uint64_t family, uint64_t type, uint64_t protocol, uint64_t usv);
int64_t lx_sys_bind(struct lx_ctx *c, uint64_t fd, uint64_t uaddr, uint64_t len);
int64_t lx_sys_listen(struct lx_ctx *c, uint64_t fd, uint64_t backlog);
int64_t lx_sys_connect(struct lx_ctx *c, uint64_t fd, uint64_t uaddr, uint64_t len);
int64_t lx_sys_accept4(struct lx_ctx *c, uint64_t fd, uint64_t uaddr, uint64_t ulen, uint64_t flags);
int64_t lx_sys_sendto(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len, uint64_t flags, uint64_t uto,
                      uint64_t tolen);
int64_t lx_sys_recvfrom(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len, uint64_t flags, uint64_t uaddr,
                        uint64_t ulen);
int64_t lx_sys_sendmsg(struct lx_ctx *c, uint64_t fd, uint64_t umsg, uint64_t flags);
int64_t lx_sys_recvmsg(struct lx_ctx *c, uint64_t fd, uint64_t umsg, uint64_t flags);
int64_t lx_sys_shutdown(struct lx_ctx *c, uint64_t fd, uint64_t how);
int64_t lx_sys_sendmmsg(struct lx_ctx *c, uint64_t fd, uint64_t uvec, uint64_t vlen, uint64_t flags);
int64_t lx_sys_recvmmsg(struct lx_ctx *c, uint64_t fd, uint64_t uvec, uint64_t vlen, uint64_t flags, uint64_t uts);
/* getsockname (peer 0) and getpeername (peer 1). */
int64_t lx_sys_getsockname(struct lx_ctx *c, uint64_t fd, uint64_t uaddr, uint64_t ulen, int peer);
int64_t lx_sys_setsockopt(struct lx_ctx *c, uint64_t fd, uint64_t level, uint64_t name, uint64_t uval, uint64_t len);
int64_t lx_sys_getsockopt(struct lx_ctx *c, uint64_t fd, uint64_t level, uint64_t name, uint64_t uval, uint64_t ulen);
/* read/write (niov -1: the buffer buf, len) and readv/writev (niov
 * vectors at iov) of a socket's file (the descriptor's checks done). */
int64_t lx_sock_rw(struct lx_ctx *c, struct lx_file *f, uint64_t iov, uint64_t niov, uint64_t buf, uint64_t len,
                   int writing);
/* sendfile's write into a stream socket from the personality's src, as
 * lx_pipe_write_kernel; -EINVAL for other types. */
int64_t lx_sock_write_kernel(struct lx_ctx *c, struct lx_file *f, const void *src, uint64_t len, int may_wait);
/* A socket's poll state; bytes waiting (FIONREAD), or a negated errno. */
int lx_sock_poll(struct lx_file *f);
int lx_sock_is_inet(struct lx_file *f);
int64_t lx_sock_inq(struct lx_file *f);
/* Wait on socket slot `on` (LX_BLK_SOCK) with a timeout of `timeo` ns (0:
 * none): LX_BLOCK, or EAGAIN once the time is up. */
int64_t lx_sock_wait(struct lx_ctx *c, int32_t on, uint64_t timeo);
/* A stream write that found the connection broken after `done` bytes:
 * EPIPE (and SIGPIPE unless MSG_NOSIGNAL) if none went, else done. */
int64_t lx_sock_broken_pipe(struct lx_ctx *c, uint64_t done, uint32_t flags);
/* An int and a struct timeval (in ns, 0: none) option's value; 0 or a negated errno. */
int lx_sock_opt_int(struct lx_ctx *c, uint64_t uval, uint64_t len, int32_t *v);
int lx_sock_opt_timeval(struct lx_ctx *c, uint64_t uval, uint64_t len, uint64_t *ns);

/* /data, the disk's ext2 (data.c). Calls that may need the disk answer
 * LX_DISKWAIT when a block is not in yet (nothing changed). */
void lx_data_init(void);                        /* at start: /data when the machine has a disk */
void lx_data_changed(void);                     /* the disk finished a request: the waiting calls run again */
int64_t lx_data_ready(int32_t n);               /* a node reached: /data's file system mounted */
int64_t lx_data_dir_ready(int32_t dir);         /* a directory searched or listed: its entries read in */
/* read() of a disk file into the process at buf from *pos (moved on). */
int64_t lx_data_read(struct lx_ctx *c, struct lx_node *n, uint64_t buf, uint64_t len, uint64_t *pos);
int lx_data_node_read(const struct lx_node *n, uint64_t off, void *dst, uint64_t len);
int64_t lx_data_writable(int32_t n);            /* 0, or EROFS for a node of the read-only disk */
uint32_t lx_data_block_size(void);
int64_t lx_data_statfs(uint64_t *out);          /* 0 (struct statfs from f_type), 1 (not mounted), an error */
/* mount(2)'s flags (MS_*) that the mount keeps, as Linux numbers them. */
enum { LX_MS_RDONLY = 1, LX_MS_NOSUID = 2, LX_MS_NODEV = 4, LX_MS_NOEXEC = 8, LX_MS_SYNCHRONOUS = 16,
       LX_MS_REMOUNT = 32, LX_MS_MANDLOCK = 64, LX_MS_DIRSYNC = 128, LX_MS_NOSYMFOLLOW = 256,
       LX_MS_NOATIME = 1024, LX_MS_NODIRATIME = 2048, LX_MS_BIND = 4096, LX_MS_MOVE = 8192,
       LX_MS_REC = 16384, LX_MS_SILENT = 32768, LX_MS_UNBINDABLE = 1 << 17, LX_MS_PRIVATE = 1 << 18,
       LX_MS_SLAVE = 1 << 19, LX_MS_SHARED = 1 << 20, LX_MS_RELATIME = 1 << 21, LX_MS_STRICTATIME = 1 << 24,
       LX_MS_LAZYTIME = 1 << 25 };
#define LX_MS_KEPT (LX_MS_RDONLY | LX_MS_NOSUID | LX_MS_NODEV | LX_MS_NOEXEC | LX_MS_SYNCHRONOUS | LX_MS_MANDLOCK | \
                    LX_MS_DIRSYNC | LX_MS_NOSYMFOLLOW | LX_MS_NOATIME | LX_MS_NODIRATIME | LX_MS_RELATIME | \
                    LX_MS_LAZYTIME)
/* The disk's file system mounted on directory dir with flags (LX_MS_*,
 * relatime made explicit): 0, LX_DISKWAIT, or ENXIO (no disk), EBUSY
 * (mounted already), EACCES (a read-only disk, not LX_MS_RDONLY), EROFS
 * (an image not to be written), EINVAL, EUCLEAN or EIO (not an ext2
 * image, a corrupt or unreadable one: the reason on the console). */
int64_t lx_data_mount(int32_t dir, uint64_t flags);
/* Unmounted (EBUSY while anything of it is held), or remounted with new
 * flags (read-only: EBUSY while files are open for writing); 0,
 * LX_DISKWAIT or a negated errno. */
int64_t lx_data_umount(struct lx_ctx *c);
int64_t lx_data_remount(struct lx_ctx *c, uint64_t flags);
/* mount(2) and umount2(2) (mount.c). */
int64_t lx_sys_mount(struct lx_ctx *c, uint64_t usource, uint64_t utarget, uint64_t utype, uint64_t flags,
                     uint64_t udata);
int64_t lx_sys_umount2(struct lx_ctx *c, uint64_t utarget, uint64_t flags);
/* The disk mounted on directory n (lx_data_mount), if n may take it:
 * ENOTDIR, EINVAL (not a directory of the root, devtmpfs or the tmpfs),
 * EBUSY (the root of a mount). */
int64_t lx_mount_disk(int32_t n, uint64_t flags);
uint64_t lx_data_mount_flags(void);             /* its LX_MS_* (LX_MS_RDONLY when read-only); 0: not mounted */
int32_t lx_data_mount_root(void);               /* the node of its root, or -1 */
/* Is n on the disk mounted with flag (LX_MS_NOEXEC: no program runs
 * from it, EACCES; LX_MS_NODEV: no device node opens, EACCES). */
int lx_data_refuses(const struct lx_node *n, uint64_t flag);
/* The changes, each whole or not at all on the disk, then in the tree:
 * a file, directory or symbolic link (target) made (*out its node); a
 * name removed (an entry; rmdir: a directory's); a rename (lx_last as
 * renameat2 found them); a link; attributes (LX_ATTR_* in what); a size.
 * 0, LX_DISKWAIT or a negated errno. */
int64_t lx_data_create(int32_t dir, const char *name, uint32_t len, uint32_t mode, uint32_t rdev,
                       const char *target, uint32_t tlen, int32_t *out);
int64_t lx_data_unlink(int32_t dent, int rmdir);
int64_t lx_data_rename(const struct lx_last *o, const struct lx_last *n);
int64_t lx_data_link(int32_t node, int32_t dir, const char *name, uint32_t len);
enum { LX_ATTR_MODE = 1, LX_ATTR_UID = 2, LX_ATTR_GID = 4, LX_ATTR_ATIME = 8, LX_ATTR_MTIME = 16 };
int64_t lx_data_setattr(int32_t node, uint32_t what, uint32_t mode, uint32_t uid, uint32_t gid,
                        const struct lx_time *atime, const struct lx_time *mtime);
int64_t lx_data_truncate(int32_t node, uint64_t size);
/* write() of a disk file from the process at buf, at *pos (moved on) or
 * at its end (O_APPEND in flags), on the disk before it returns with
 * O_DSYNC (O_SYNC); a write that waited goes on with what it wrote (io.done). */
int64_t lx_data_write(struct lx_ctx *c, struct lx_node *n, uint32_t flags, uint64_t buf, uint64_t len, uint64_t *pos);
/* ... and from the personality's own memory (sendfile, copy_file_range), at *pos (moved on). */
int64_t lx_data_write_kernel(struct lx_node *n, const void *src, uint64_t len, uint64_t *pos);
/* fsync, fdatasync (n: the file), sync, syncfs (n NULL): what was written on the disk */
int64_t lx_data_fsync(struct lx_ctx *c, struct lx_node *n);
int64_t lx_data_unmount(void);                  /* at shutdown: marked clean, all of it on the disk */
void lx_data_node_gone(int32_t n);              /* rootfs.c: a node of the disk's is freed */
/* Write-back: when the oldest block changed but not handed to the blk
 * service is due (0: none, or none the timer can hand on); the
 * personality's timer went off at `now`. */
uint64_t lx_data_writeback_at(void);
void lx_data_timer(uint64_t now);
/* Whether the bytes [off, off + len) of a disk file are in the blk
 * service's cache, fetching what is not: 0 or LX_DISKWAIT (exec and
 * mmap copy a file at once, which cannot wait halfway). */
int64_t lx_data_prefetch(const struct lx_node *n, uint64_t off, uint64_t len);
#define LX_DATA_COPY_MAX    (2u << 20)  /* ... which is so up to this size; a larger copy is EFBIG for now */
int32_t lx_nodes_max(void);                     /* rootfs.c: the node table's size */
/* rootfs.c's part: new directory n of `fs` mounted over directory old,
 * which it hides until lx_unmount_dir(n, old); is anything of file
 * system fs held (open, mapped, a working directory); every entry and
 * node of fs gone but its root's; a device node made at path; an entry
 * added in listing order without changing any count (a mirror of the
 * disk's); a directory's entries all dropped (their nodes freed unless
 * held). */
void lx_mount_dir(int32_t old, int32_t n, int fs);
void lx_unmount_dir(int32_t n, int32_t covered);
int lx_fs_busy(int fs);
int lx_fs_writers(int fs);                      /* files.c: is a file of fs open for writing */
void lx_fs_forget(int fs, int32_t root);
int32_t lx_dev_node(const char *path, uint32_t mode, uint32_t gid, uint32_t dev);
int lx_dent_attach(int32_t dir, const char *name, uint32_t len, int32_t node, uint64_t cookie);
void lx_dir_unload(int32_t dir);
/* The personality's one wakeup (svc_wakeup), for every service it calls
 * that signals changes (net, blk): its handle and bits, or 0. */
svc_handle lx_wakeup(uint64_t *bits);
void lx_inet_changed(void);

/* AF_INET sockets (inet.c): slot i of socket.c's table, each call after
 * socket.c's checks of the descriptor. */
int lx_inet_socket(int i, uint64_t type, uint64_t protocol);
void lx_inet_close(int i);
int64_t lx_inet_bind(struct lx_ctx *c, int i, uint64_t uaddr, uint64_t len);
int64_t lx_inet_listen(int i, uint64_t backlog);
int64_t lx_inet_connect(struct lx_ctx *c, int i, int nonblock, uint64_t uaddr, uint64_t len);
int64_t lx_inet_accept(struct lx_ctx *c, int i, int nonblock, uint32_t *conn);
void lx_inet_accepted(int i, int from, uint32_t conn);
int64_t lx_inet_peer_out(struct lx_ctx *c, int i, uint64_t uaddr, uint64_t ulen);
int64_t lx_inet_send(struct lx_ctx *c, int i, int nonblock, const struct uio *u, uint64_t len, uint32_t flags,
                     uint64_t uto, uint64_t tolen);
int64_t lx_inet_write_kernel(struct lx_ctx *c, int i, int nonblock, const void *src, uint64_t len, int may_wait);
int64_t lx_inet_recv(struct lx_ctx *c, int i, int nonblock, const struct uio *u, uint64_t len,
                     struct lx_recv_args *a);
int64_t lx_inet_shutdown(int i, uint64_t how);
int64_t lx_inet_name(struct lx_ctx *c, int i, uint64_t uaddr, uint64_t ulen, int peer);
int64_t lx_inet_setsockopt(struct lx_ctx *c, int i, uint64_t level, uint64_t name, uint64_t uval, uint64_t len);
int64_t lx_inet_getsockopt(struct lx_ctx *c, int i, uint64_t level, uint64_t name, uint64_t uval, uint64_t ulen);
int lx_inet_poll(int i);
int64_t lx_inet_inq(int i);
/* /proc/net/dev, tcp, udp, snmp (LX_PROC_NET_*) through lx_proc_put;
 * net.ipv4.tcp_congestion_control, the Linux programs' default. */
void lx_inet_proc(uint32_t what);
int64_t lx_inet_ifioctl(struct lx_ctx *c, uint32_t req, uint64_t arg);    /* SIOCGIF* on any socket */
/* An interface as Linux programs see it: index 1 lo, 2 eth0 (the NIC). */
struct lx_if {
    const char *name;
    uint32_t index, flags, addr, mask, mtu;     /* flags: IFF_*; addr and mask in the host's order (0: none) */
    uint16_t hwtype;                            /* ARPHRD_* */
    uint8_t mac[6];
};
/* Interface `index` (and the default gateway, 0: none): 0, ENODEV, or
 * EAFNOSUPPORT in a system without the stack. */
int lx_inet_if(uint32_t index, struct lx_if *f, uint32_t *gateway);
/* rtnetlink.c: answer the NETLINK_ROUTE requests in msg (len bytes) from
 * the socket whose port id is `portid`, each reply through `reply`. */
void lx_rtnl_request(const uint8_t *msg, uint32_t len, uint32_t portid,
                     void (*reply)(void *to, const uint8_t *msg, uint32_t len), void *to);
const char *lx_inet_cc_default(void);
int lx_inet_cc_set_default(const char *name);
/* A socket's open file went (its socket closes); a reference to a file
 * was dropped (sockets that only files in flight held are collected). */
void lx_sock_close(struct lx_file *f);
void lx_sock_ref_dropped(void);
/* Collect the sockets only files in flight reach, if a dropped reference
 * made that due: 1 if it dropped references (lx_file_put looks again), 0
 * if it had nothing to do. Sockets in use (for /proc/petrel). */
int lx_sock_collect(void);
uint32_t lx_socks_in_use(void);
uint32_t lx_sock_ino_at(int i);                 /* the inode number of socket slot i */

/* The terminals (tty.c): the console's line discipline and the
 * pseudo-terminals (/dev/ptmx, /dev/pts/N), their job control ioctls. */
void lx_tty_init(void);
/* Is node n a terminal's (the console, /dev/ptmx, /dev/pts/N)? */
int lx_node_is_tty(const struct lx_node *n);
/* Does p's session have a controlling terminal; its node (/dev/tty's), or
 * -ENXIO; for /proc/PID/stat, its device number and foreground group. */
int lx_tty_is_ctty(const struct lx_proc *p);
int32_t lx_tty_ctty_node(const struct lx_proc *p);
uint32_t lx_tty_ctty_dev(const struct lx_proc *p, int *fg_pgrp);
/* st_rdev of /dev/pts/N node n. */
uint32_t lx_tty_pts_rdev(const struct lx_node *n);
/* open of /dev/ptmx (a new pseudo-terminal; the descriptor or a negated
 * errno); open of /dev/pts/N node `node`: 0 if it may be opened, -EIO if
 * it is locked or its master is gone; and once its file f exists. */
int64_t lx_pty_open_master(struct lx_ctx *c, int32_t node, uint32_t flags, int cloexec);
int lx_pty_slave_check(int32_t node);
void lx_pty_slave_opened(struct lx_ctx *c, struct lx_file *f, uint32_t open_flags);
/* The last reference to terminal file f went (tty.c lets the pty go). */
/* /dev/input/event0 and event1 (evdev.c): Linux's evdev over the input services. */
struct evclient;
int64_t lx_evdev_open(struct lx_ctx *c, int32_t node, unsigned n, uint32_t flags, int cloexec);
int64_t lx_evdev_read(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len);
int64_t lx_evdev_write(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len);
int64_t lx_evdev_ioctl(struct lx_ctx *c, struct lx_file *f, uint64_t req, uint64_t arg);
int lx_evdev_poll(struct lx_file *f);
void lx_evdev_file_gone(struct lx_file *f);
/* The personality's wakeup ran: take what the input service's ring holds. */
void lx_evdev_changed(void);
/* The autorepeat of a held key and a drain's rest: when they are due
 * (counter ns, 0: nothing), and the service timer's run of them. */
uint64_t lx_evdev_due(void);
void lx_evdev_timer(uint64_t now);
/* Whether the system gives the personality the input service of
 * /dev/input/eventN (N 0: "input", 1: "tablet"; the node is made). */
int lx_evdev_present(unsigned n);

/* /dev/fb0 (fbdev.c): Linux's framebuffer over the display service. */
int lx_fb_present(void);
int64_t lx_fb_open(struct lx_ctx *c, int32_t node, uint32_t flags, int cloexec);
int64_t lx_fb_ioctl(struct lx_ctx *c, struct lx_file *f, uint64_t req, uint64_t arg);
/* Read or write bytes of the framebuffer at *pos (write: then shown). */
int64_t lx_fb_rw(struct lx_ctx *c, uint64_t buf, uint64_t len, uint64_t *pos, int write);
/* What a mapping of /dev/fb0 maps: 0 and *obj, or an errno (EINVAL past the framebuffer). */
int64_t lx_fb_mmap(struct lx_proc *p, uint64_t off, uint64_t size, struct lx_mobj **obj);
/* The personality's wakeup ran: a frame may have been shown. */
void lx_fb_changed(void);

/* /dev/binder (binder.c). */
struct bproc;
int64_t lx_binder_device_add(const char *name);
int64_t lx_binder_device_attach(int32_t node, const char *name);
void lx_binder_node_gone(int32_t node);
uint32_t lx_binder_rdev(int32_t node);
int64_t lx_binder_open(struct lx_ctx *c, int32_t node, uint32_t flags, int cloexec);
int64_t lx_binder_ioctl(struct lx_ctx *c, struct lx_file *f, uint64_t req, uint64_t arg);
int lx_binder_poll(struct lx_file *f);
void lx_binder_file_gone(struct lx_file *f);
void lx_binder_thread_gone(struct lx_thread *t);
void lx_binder_flush(struct lx_file *f);
/* mmap of f: its buffers' object (*obj) and length (*len, of size at most),
 * then lx_binder_mapped with the address (0: the mapping failed). */
int64_t lx_binder_mmap(struct lx_ctx *c, struct lx_file *f, uint64_t size, uint64_t prot, struct lx_mobj **obj,
                       uint64_t *len);
void lx_binder_mapped(struct lx_file *f, uint64_t va);

void lx_tty_file_gone(struct lx_file *f);
/* Session leader p ended: its controlling pseudo-terminal's foreground group gets SIGHUP. */
void lx_tty_leader_gone(const struct lx_proc *p);
int lx_tty_poll(struct lx_file *f);
int64_t lx_tty_read(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len);
int64_t lx_tty_write(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len);
/* A write to a terminal of src[0..len) in the personality's memory; one
 * that is `resumable` waits for room as a write() does, restarted with the
 * same bytes (writev's, gathered), else it ends short. */
int64_t lx_tty_write_kernel(struct lx_ctx *c, struct lx_file *f, const void *src, uint64_t len, int resumable);
int64_t lx_tty_ioctl(struct lx_ctx *c, struct lx_file *f, uint64_t req, uint64_t arg);
/* The terminal's signals (SIGINT, SIGQUIT, SIGTSTP...) to every process of group `pgrp` (signal.c). */
void lx_signal_group(int pgrp, int sig);
/* Does the calling thread ignore or block sig (the terminal's job control asks)? */
int lx_sig_ignored_or_blocked(struct lx_ctx *c, int sig);

/* Signals (signal.c). */
int64_t lx_sys_rt_sigaction(struct lx_ctx *c, uint64_t sig, uint64_t act, uint64_t oact, uint64_t size);
int64_t lx_sys_rt_sigprocmask(struct lx_ctx *c, uint64_t how, uint64_t set, uint64_t oset, uint64_t size);
int64_t lx_sys_rt_sigpending(struct lx_ctx *c, uint64_t set, uint64_t size);
int64_t lx_sys_rt_sigsuspend(struct lx_ctx *c, uint64_t set, uint64_t size);
int64_t lx_sys_rt_sigtimedwait(struct lx_ctx *c, uint64_t set, uint64_t info, uint64_t ts, uint64_t size);
int64_t lx_sys_sigaltstack(struct lx_ctx *c, uint64_t ss, uint64_t oss);
int64_t lx_sys_kill(struct lx_ctx *c, int64_t pid, uint64_t sig);
int64_t lx_sys_tgkill(struct lx_ctx *c, int64_t tgid, int64_t tid, uint64_t sig, int tkill);
/* rt_sigqueueinfo (tid 0) and rt_tgsigqueueinfo. */
int64_t lx_sys_rt_sigqueueinfo(struct lx_ctx *c, int64_t tgid, int64_t tid, uint64_t sig, uint64_t uinfo);
int64_t lx_sys_rt_sigreturn(struct lx_ctx *c);
int64_t lx_sys_nanosleep(struct lx_ctx *c, uint64_t clock, uint64_t flags, uint64_t req, uint64_t rem);
int64_t lx_sys_setitimer(struct lx_ctx *c, uint64_t which, uint64_t val, uint64_t old);
int64_t lx_sys_getitimer(struct lx_ctx *c, uint64_t which, uint64_t cur);
/* Send sig to p with info (sender pid, code...); whatever its action says
 * happens now, or when p's current call returns. */
void lx_sig_send(struct lx_proc *p, int sig, const struct lx_sinfo *info);
/* signalfd: take the first signal of `set` pending for thread t (its own,
 * then its process's; a synchronous one first), its info into *si; the
 * signal, or 0 if none is. What is pending for p or any of its threads. */
int lx_sig_take_from(struct lx_thread *t, uint64_t set, struct lx_sinfo *si);
uint64_t lx_sig_pending_any(struct lx_proc *p);
/* Thread t ends: the real-time signals queued to it alone go. */
void lx_sig_thread_gone(struct lx_thread *t);
/* Send sig to thread t alone (tkill, tgkill). */
void lx_sig_send_thread(struct lx_thread *t, int sig, const struct lx_sinfo *info);
/* Answer p's current call (c): resume at pc with x0 = result, first
 * acting on its pending signals (handlers entered through a frame). */
void lx_sig_reply(struct lx_ctx *c, uint64_t pc, int64_t result);
/* The current call would wait (LX_BLOCK); is it interrupted by a signal?
 * Then the answer is set up (EINTR, or the call run again after the
 * handler with SA_RESTART) and it returns 1. */
int lx_sig_interrupted(struct lx_ctx *c, uint64_t nr);
/* A real fault of p's thread: kind (FAULT_*), address, ESR; handled by
 * its handler if it has one, or p ends with the signal. */
void lx_sig_fault(struct lx_ctx *c, unsigned kind, uint64_t addr, uint64_t esr);
/* Signal state across fork (child from the calling thread's process) and
 * a new thread (from the calling thread), and exec (the thread that stays). */
void lx_sig_fork(struct lx_thread *child, const struct lx_thread *parent);
void lx_sig_exec(struct lx_thread *t);
/* Deadlines changed: set the service's timer to the earliest. */
void lx_timer_update(void);
/* A deadline added (a timed wait's): the timer brought forward to it if
 * it comes first (lx_timer_update at the next expiry sets it right). */
void lx_timer_note(uint64_t at);
/* POSIX timers (ptimer.c): the system calls; exec deletes a process's
 * timers; the service timer runs the expired ones and asks for the next
 * expiry (counter ns, 0: none); a timer's signal taken by a thread gets
 * its overrun count; the calendar moved by `delta` ns (clock_settime). */
int64_t lx_sys_timer_create(struct lx_ctx *c, uint64_t clock, uint64_t uevent, uint64_t uid);
int64_t lx_sys_timer_settime(struct lx_ctx *c, uint64_t id, uint64_t flags, uint64_t unew, uint64_t uold);
int64_t lx_sys_timer_gettime(struct lx_ctx *c, uint64_t id, uint64_t ucur);
int64_t lx_sys_timer_getoverrun(struct lx_ctx *c, uint64_t id);
int64_t lx_sys_timer_delete(struct lx_ctx *c, uint64_t id);
void lx_ptimers_exec(struct lx_proc *p);
void lx_ptimers_fire(uint64_t now);
uint64_t lx_ptimers_next(uint64_t now);
void lx_ptimer_taken(struct lx_proc *p, struct lx_sinfo *si);
void lx_ptimers_clock_set(int64_t delta);
/* The same for timerfds (event.c): absolute calendar expiries move, and
 * those armed with TFD_TIMER_CANCEL_ON_SET are cancelled (ECANCELED). */
void lx_event_clock_set(int64_t delta);
/* The calendar moved by delta ns (clock_settime, settimeofday): the waits,
 * timerfds and POSIX timers set for an absolute calendar time follow it,
 * as Linux's do; relative ones run on. */
void lx_calendar_moved(int64_t delta);
/* The service's timer, attached at first use: 0, or -ENOSYS where the
 * placement has none (logged once). */
int lx_timer_start(void);
/* A waiting call with a timeout of ns from its first run (a struct
 * timespec at uts: 0, or a negated errno): 1 once the time is up. */
int64_t lx_timespec_in(struct lx_ctx *c, uint64_t uts, uint64_t *ns);
int lx_deadline_passed(struct lx_ctx *c, uint64_t ns);
/* ppoll's and pselect6's signal mask (a sigset at umask) for the call's
 * duration; 0 or a negated errno. */
int lx_sig_mask_for_call(struct lx_ctx *c, uint64_t umask);
/* Where a handler returns to when it has no SA_RESTORER: an address in the
 * thread's control page, never executable; the instruction fault there is
 * rt_sigreturn. */
#define LX_SIGRETURN_VA LX_UTCB_VA
/* Is va inside one of p's mapped ranges (SEGV_ACCERR rather than SEGV_MAPERR)? */
int lx_vma_has(struct lx_proc *p, uint64_t va);

/* Random bytes (a generator seeded from the system counter: not for keys). */
void lx_random(void *buf, uint64_t len);
/* snprintf (fmt_vsnprintf, which both placements have): the length written. */
int lx_format(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Write a line to the console, marked as the personality's own
 * ("petrel-linux: ..."), so that tests can tell it from program output. */
void lx_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
