/*
 * Wild pointers and huge lengths to every system call the personality
 * implements: each must fail with the error Linux gives (the first part,
 * compared with Linux line for line), and nothing may crash. Then many
 * random calls with hostile arguments; the program (and the system) must
 * still work afterwards.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "lxtest.h"
#include <sys/socket.h>

#define KERNEL_PTR  0xffff000000001000ul
#define HIGH_PTR    0x0000700000000000ul        /* in the user range on Linux, mapped nowhere */
#define HUGE        0xfffffffffffff000ul

static const uintptr_t bad_ptrs[] = { 0, 1, 4095, KERNEL_PTR, HIGH_PTR, (uintptr_t)-1 };
static const char *const bad_names[] = { "NULL", "1", "4095", "kernel", "high", "-1" };

int main(void)
{
    char buf[256], name[64];
    struct timespec zero_ts = { 0, 0 };
    sigset_t usr1_set;
    sigemptyset(&usr1_set);
    sigaddset(&usr1_set, SIGUSR1);
    int file = open("/etc/hello.txt", O_RDONLY), dir = open("/data", O_RDONLY | O_DIRECTORY);
    int null = open("/dev/null", O_WRONLY), zero = open("/dev/zero", O_RDONLY);
    int wfile = open("/tmp/hostile", O_RDWR | O_CREAT | O_TRUNC, 0644);
    int full = open("/dev/full", O_RDWR), urandom = open("/dev/urandom", O_RDWR);
    syscall(SYS_setxattr, "/tmp/hostile", "trusted.h", "v", 1, 0);
    for (unsigned i = 0; i < sizeof(bad_ptrs) / sizeof(bad_ptrs[0]); i++) {
        long p = (long)bad_ptrs[i];
        const char *n = bad_names[i];
#define TRY(what, call) do { snprintf(name, sizeof(name), "%s %s", what, n); SHOW(name, call); } while (0)
        TRY("read file into", syscall(SYS_read, file, p, 10));
        TRY("read zero into", syscall(SYS_read, zero, p, 10));
        TRY("write stdout from", syscall(SYS_write, 1, p, 10));
        TRY("pread into", syscall(SYS_pread64, file, p, 10, 0));
        TRY("readv iov", syscall(SYS_readv, file, p, 1));
        TRY("writev iov", syscall(SYS_writev, 1, p, 1));
        TRY("openat path", syscall(SYS_openat, AT_FDCWD, p, 0));
        TRY("fstat into", syscall(SYS_fstat, file, p));
        TRY("newfstatat path", syscall(SYS_newfstatat, AT_FDCWD, p, buf, 0));
        TRY("newfstatat into", syscall(SYS_newfstatat, AT_FDCWD, "/etc", p, 0));
        TRY("getdents64 into", syscall(SYS_getdents64, dir, p, 256));
        lseek(dir, 0, SEEK_SET);
        TRY("ioctl TCGETS into", syscall(SYS_ioctl, 1, 0x5401, p));
        TRY("ioctl TIOCGWINSZ into", syscall(SYS_ioctl, 1, 0x5413, p));
        TRY("uname into", syscall(SYS_uname, p));
        TRY("clock_gettime into", syscall(SYS_clock_gettime, 1, p));
        TRY("clock_settime from", syscall(SYS_clock_settime, 0, p));
        TRY("timer_create id into", syscall(SYS_timer_create, 1, NULL, p));
        TRY("timer_create sigevent", syscall(SYS_timer_create, 1, p, buf));
        TRY("timer_settime from", syscall(SYS_timer_settime, 0, 0, p, NULL));
        TRY("timer_gettime into", syscall(SYS_timer_gettime, 0, p));
        TRY("getrandom into", syscall(SYS_getrandom, p, 16, 0));
        TRY("munmap at", syscall(SYS_munmap, p, 4096));
        TRY("pipe2 into", syscall(SYS_pipe2, p, 0));
        TRY("execve path", syscall(SYS_execve, p, 0, 0));
        TRY("mprotect at", syscall(SYS_mprotect, p, 4096, 1));
        TRY("wait4 with no children into", syscall(SYS_wait4, -1, p, 0, 0));
        TRY("pwrite64 from", syscall(SYS_pwrite64, wfile, p, 10, 0));
        TRY("mkdirat path", syscall(SYS_mkdirat, AT_FDCWD, p, 0755));
        TRY("unlinkat path", syscall(SYS_unlinkat, AT_FDCWD, p, 0));
        TRY("renameat2 old path", syscall(SYS_renameat2, AT_FDCWD, p, AT_FDCWD, "/tmp/hx", 0));
        TRY("renameat2 new path", syscall(SYS_renameat2, AT_FDCWD, "/tmp/hostile", AT_FDCWD, p, 0));
        TRY("linkat new path", syscall(SYS_linkat, AT_FDCWD, "/tmp/hostile", AT_FDCWD, p, 0));
        TRY("symlinkat target", syscall(SYS_symlinkat, p, AT_FDCWD, "/tmp/hs"));
        TRY("symlinkat path", syscall(SYS_symlinkat, "/tmp/hostile", AT_FDCWD, p));
        TRY("fchmodat path", syscall(SYS_fchmodat, AT_FDCWD, p, 0644));
        TRY("fchownat path", syscall(SYS_fchownat, AT_FDCWD, p, 0, 0, 0));
        TRY("utimensat times", syscall(SYS_utimensat, AT_FDCWD, "/tmp/hostile", p, 0));
        TRY("faccessat path", syscall(SYS_faccessat, AT_FDCWD, p, 0));
        TRY("truncate path", syscall(SYS_truncate, p, 0));
        TRY("statfs path", syscall(SYS_statfs, p, buf));
        TRY("statfs into", syscall(SYS_statfs, "/tmp", p));
        TRY("fstatfs into", syscall(SYS_fstatfs, file, p));
        TRY("sendfile offset", p ? syscall(SYS_sendfile, null, file, p, 1) : 0);
        TRY("brk to (the break stays)", syscall(SYS_brk, p) == syscall(SYS_brk, 0) ? 0 : -1);
        TRY("rt_sigaction from", syscall(SYS_rt_sigaction, SIGUSR1, p, NULL, 8));
        TRY("rt_sigaction into", syscall(SYS_rt_sigaction, SIGUSR1, NULL, p, 8));
        TRY("rt_sigprocmask from", syscall(SYS_rt_sigprocmask, SIG_BLOCK, p, NULL, 8));
        TRY("rt_sigprocmask into", syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, p, 8));
        TRY("rt_sigpending into", syscall(SYS_rt_sigpending, p, 8));
        TRY("rt_sigsuspend from", syscall(SYS_rt_sigsuspend, p, 8));
        TRY("rt_sigtimedwait set", syscall(SYS_rt_sigtimedwait, p, NULL, &zero_ts, 8));
        if (p)
            TRY("rt_sigtimedwait timeout", syscall(SYS_rt_sigtimedwait, &usr1_set, NULL, p, 8));
        TRY("sigaltstack from", syscall(SYS_sigaltstack, p, NULL));
        TRY("sigaltstack into", syscall(SYS_sigaltstack, NULL, p));
        TRY("nanosleep from", syscall(SYS_nanosleep, p, NULL));
        TRY("clock_nanosleep from", syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, p, NULL));
        TRY("setitimer from", syscall(SYS_setitimer, ITIMER_REAL, p, NULL));
        TRY("getitimer into", syscall(SYS_getitimer, ITIMER_REAL, p));
        TRY("clock_getres into", syscall(SYS_clock_getres, CLOCK_MONOTONIC, p));
        TRY("gettimeofday into", syscall(SYS_gettimeofday, p, NULL));
        TRY("times into", p ? syscall(SYS_times, p) : 0);
        TRY("getrusage into", syscall(SYS_getrusage, 0, p));
        TRY("sysinfo into", syscall(SYS_sysinfo, p));
        TRY("getresuid into", syscall(SYS_getresuid, p, p, p));
        TRY("getresgid into", syscall(SYS_getresgid, p, p, p));
        TRY("setgroups from", syscall(SYS_setgroups, 1, p));
        TRY("sched_getaffinity into", syscall(SYS_sched_getaffinity, 0, 8, p));
        TRY("sched_setaffinity from", syscall(SYS_sched_setaffinity, 0, 8, p));
        TRY("getcpu into", syscall(SYS_getcpu, p, NULL, NULL));
        TRY("sched_getparam into", syscall(SYS_sched_getparam, 0, p));
        TRY("statx path", syscall(SYS_statx, AT_FDCWD, p, 0, 0x7ff, buf));
        TRY("statx into", syscall(SYS_statx, AT_FDCWD, "/etc", 0, 0x7ff, p));
        TRY("execveat path", syscall(SYS_execveat, AT_FDCWD, p, 0, 0, 0));
        TRY("madvise at", syscall(SYS_madvise, p, 4096, 0));
        TRY("mremap at", syscall(SYS_mremap, p, 4096, 4096, 0, 0));
        TRY("msync at", syscall(SYS_msync, p, 4096, 4));
        TRY("fcntl F_SETLK from", syscall(SYS_fcntl, wfile, F_SETLK, p));
        TRY("fcntl F_GETLK into", syscall(SYS_fcntl, file, F_GETLK, p));
        TRY("fcntl F_OFD_SETLKW from", syscall(SYS_fcntl, wfile, F_OFD_SETLKW, p));
        TRY("setxattr path", syscall(SYS_setxattr, p, "trusted.h", "v", 1, 0));
        TRY("setxattr name", syscall(SYS_setxattr, "/tmp/hostile", p, "v", 1, 0));
        TRY("setxattr value", syscall(SYS_setxattr, "/tmp/hostile", "trusted.v", p, 10, 0));
        TRY("getxattr name", syscall(SYS_getxattr, "/tmp/hostile", p, buf, 10));
        TRY("getxattr into", syscall(SYS_getxattr, "/tmp/hostile", "trusted.h", p, 10));
        TRY("lgetxattr path", syscall(SYS_lgetxattr, p, "trusted.h", buf, 10));
        TRY("fgetxattr into", syscall(SYS_fgetxattr, wfile, "trusted.h", p, 10));
        TRY("listxattr into", syscall(SYS_listxattr, "/tmp/hostile", p, 100));
        TRY("flistxattr into", syscall(SYS_flistxattr, wfile, p, 100));
        TRY("removexattr name", syscall(SYS_removexattr, "/tmp/hostile", p));
        TRY("copy_file_range in offset", syscall(SYS_copy_file_range, file, p, wfile, NULL, 10L, 0L));
        TRY("copy_file_range out offset", syscall(SYS_copy_file_range, file, NULL, wfile, p, 10L, 0L));
        TRY("preadv vectors", syscall(SYS_preadv, file, p, 2L, 0L, 0L));
        TRY("pwritev vectors", syscall(SYS_pwritev, wfile, p, 2L, 0L, 0L));
        TRY("preadv2 vectors", syscall(SYS_preadv2, file, p, 2L, -1L, 0L, 0L));
        TRY("pwritev2 vectors", syscall(SYS_pwritev2, wfile, p, 2L, 0L, 0L, 0x10L));
        struct iovec wild = { (void *)p, 10 };
        TRY("preadv into", syscall(SYS_preadv, file, &wild, 1L, 0L, 0L));
        TRY("pwritev from", syscall(SYS_pwritev, wfile, &wild, 1L, 0L, 0L));
        TRY("mlock at", syscall(SYS_mlock, p, 4096L));
        TRY("mlock2 at", syscall(SYS_mlock2, p, 4096L, 1L));
        TRY("read /dev/full into", syscall(SYS_read, full, p, 10));
        TRY("read /dev/urandom into", syscall(SYS_read, urandom, p, 10));
    }
    SHOW("read with a huge length", syscall(SYS_read, file, buf, HUGE));
    SHOW("read with length -1", syscall(SYS_read, file, buf, -1L));
    SHOW("write with a huge length", syscall(SYS_write, 1, buf, HUGE));
    SHOW("write /dev/null with a huge length", syscall(SYS_write, null, buf, HUGE));
    SHOW("getdents64 with a huge length", syscall(SYS_getdents64, dir, buf, HUGE));
    SHOW("getrandom with a huge length", syscall(SYS_getrandom, buf, HUGE, 0));
    struct iovec iov[2] = { { buf, 10 }, { buf, (size_t)-1 } };
    SHOW("readv with a length of -1", syscall(SYS_readv, file, iov, 2));
    SHOW("readv with 1025 vectors", syscall(SYS_readv, file, iov, 1025));
    SHOW("readv with 0 vectors", syscall(SYS_readv, file, iov, 0));
    iov[1].iov_base = (void *)KERNEL_PTR;
    iov[1].iov_len = 10;
    SHOW("readv second vector in the kernel", syscall(SYS_readv, file, iov, 2));
    SHOW("read descriptor -1", syscall(SYS_read, -1, buf, 1));
    SHOW("read descriptor 1 << 40 | 99", syscall(SYS_read, 1L << 40 | 99, buf, 1));
    SHOW("close 1000000", syscall(SYS_close, 1000000));
    SHOW("lseek whence -1", syscall(SYS_lseek, file, 0, -1));
    SHOW("mmap a huge length", syscall(SYS_mmap, 0, HUGE, 3, 0x22, -1, 0));
    SHOW("mmap fixed at a kernel address", syscall(SYS_mmap, KERNEL_PTR, 4096, 3, 0x32, -1, 0));
    SHOW("munmap a huge length", syscall(SYS_munmap, 0x10000, HUGE));
    SHOW("mmap a file shared at a huge offset", syscall(SYS_mmap, 0, 4096, 3, 0x01, wfile, HUGE));
    SHOW("mmap a file shared with a huge length", syscall(SYS_mmap, 0, HUGE, 3, 0x01, wfile, 0));
    char longpath[5000];
    for (unsigned i = 0; i < sizeof(longpath); i++)
        longpath[i] = i % 2 ? '/' : 'a';
    longpath[sizeof(longpath) - 1] = 0;
    SHOW("open a 5000-byte path", syscall(SYS_openat, AT_FDCWD, longpath, 0));
    SHOW("kill with signal 1000", syscall(SYS_kill, getpid(), 1000));
    SHOW("tgkill with signal -3", syscall(SYS_tgkill, getpid(), getpid(), -3));
    SHOW("rt_sigaction of signal 1 << 32 | 10", syscall(SYS_rt_sigaction, 1L << 32 | SIGUSR1, NULL, buf, 8));
    SHOW("rt_sigtimedwait with sigsetsize -1", syscall(SYS_rt_sigtimedwait, &usr1_set, NULL, &zero_ts, -1L));
    SHOW("signalfd4 with a mask size of 4", syscall(SYS_signalfd4, -1, &usr1_set, 4, 0));
    SHOW("signalfd4 with a kernel mask", syscall(SYS_signalfd4, -1, KERNEL_PTR, 8, 0));
    SHOW("signalfd4 of a file", syscall(SYS_signalfd4, file, &usr1_set, 8, 0));
    SHOW("signalfd4 with flags -1", syscall(SYS_signalfd4, -1, &usr1_set, 8, -1));

    /* Pseudo-terminals until the system refuses (Linux: its descriptor
     * limit; Petrel: the process's share), each master written until it
     * is full; then all closed, and one made again. */
    static int masters[1100];
    int nmasters = 0, pty_err = 0;
    while (nmasters < 1100) {
        int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_NONBLOCK);
        if (m < 0) {
            pty_err = errno;
            break;
        }
        masters[nmasters++] = m;
    }
    printf("ptys until an error: ~%d %s\n", nmasters, errname(pty_err));
    long filled = 0, w;
    unlockpt(masters[0]);
    while ((w = write(masters[0], buf, sizeof(buf))) > 0 && filled < (1L << 20))
        filled += w;
    printf("a master written until it is full: %s ~%ld bytes\n", w < 0 ? errname(errno) : "no error", filled);
    SHOW("TIOCGPTN to a kernel address", ioctl(masters[0], TIOCGPTN, (void *)KERNEL_PTR));
    SHOW("TIOCSWINSZ from a kernel address", ioctl(masters[0], TIOCSWINSZ, (void *)KERNEL_PTR));
    for (int i = 0; i < nmasters; i++)
        close(masters[i]);
    int again = open("/dev/ptmx", O_RDWR | O_NOCTTY);
    SHOW("a pty once they are closed", again >= 0);
    close(again);

    /* Random calls: the results are not compared, only survival. (Not
     * the set*id calls: on Linux a random one makes root another user; nor
     * setpriority and sched_setaffinity, which on Linux reach /init and so
     * the programs it starts after this one.) */
    static const long nrs[] = { SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_pread64, SYS_openat, SYS_close,
                                SYS_lseek, SYS_fstat, SYS_newfstatat, SYS_getdents64, SYS_ioctl, SYS_uname,
                                SYS_clock_gettime, SYS_getrandom, SYS_getpid, SYS_wait4, SYS_waitid, SYS_getpgid,
                                SYS_getsid, SYS_setpgid, SYS_setsid, SYS_getcwd, SYS_chdir, SYS_fchdir,
                                SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_rt_sigpending, SYS_rt_sigtimedwait,
                                SYS_sigaltstack, SYS_nanosleep, SYS_getitimer, SYS_setitimer, SYS_pwrite64,
                                SYS_mkdirat, SYS_unlinkat, SYS_renameat2, SYS_linkat, SYS_symlinkat, SYS_fchmod,
                                SYS_fchmodat, SYS_fchown, SYS_fchownat, SYS_utimensat, SYS_faccessat, SYS_truncate,
                                SYS_ftruncate, SYS_fsync, SYS_fdatasync, SYS_statfs, SYS_fstatfs, SYS_sendfile,
                                SYS_futex, SYS_set_robust_list, SYS_get_robust_list, SYS_eventfd2, SYS_epoll_create1, SYS_epoll_ctl, SYS_epoll_pwait,
                                SYS_timerfd_create, SYS_timerfd_settime, SYS_timerfd_gettime, SYS_set_tid_address,
                                SYS_clock_getres, SYS_gettimeofday, SYS_times, SYS_getrusage, SYS_sysinfo,
                                SYS_getresuid, SYS_getresgid, SYS_getgroups, SYS_getpriority, SYS_sched_yield,
                                SYS_sched_getaffinity, SYS_getcpu, SYS_sched_getscheduler, SYS_sched_getparam, SYS_sched_get_priority_max,
                                SYS_close_range, SYS_statx, SYS_msync, SYS_mmap,
                                SYS_socket, SYS_socketpair, SYS_bind, SYS_listen, SYS_accept4, SYS_connect,
                                SYS_getsockname, SYS_getpeername, SYS_sendto, SYS_recvfrom, SYS_setsockopt,
                                SYS_getsockopt, SYS_shutdown, SYS_sendmsg, SYS_recvmsg, SYS_sendmmsg, SYS_recvmmsg,
                                SYS_fcntl, SYS_flock, SYS_setxattr, SYS_lsetxattr, SYS_fsetxattr, SYS_getxattr,
                                SYS_lgetxattr, SYS_fgetxattr, SYS_listxattr, SYS_llistxattr, SYS_flistxattr,
                                SYS_removexattr, SYS_lremovexattr, SYS_fremovexattr,
                                SYS_copy_file_range, SYS_preadv, SYS_pwritev, SYS_preadv2, SYS_pwritev2,
                                SYS_readahead, SYS_sync_file_range, SYS_mlock, SYS_munlock, SYS_mlock2,
                                SYS_munlockall, SYS_restart_syscall, SYS_signalfd4,
                                404, 999 };
    srand(42);
    long calls = 0;
    for (int i = 0; i < 100000; i++) {
        long nr = nrs[rand() % (sizeof(nrs) / sizeof(nrs[0]))];
        long a[6];
        for (int k = 0; k < 6; k++) {
            int pick = rand() % 4;
            a[k] = pick == 0 ? (long)bad_ptrs[rand() % 6] : pick == 1 ? rand() % 40 :
                   pick == 2 ? ((long)rand() << 33 | (long)rand() << 2) : -(long)(rand() % 5);
        }
        if (nr == SYS_close && a[0] <= 6)
            a[0] += 100;                        /* keep stdio and the test's own descriptors */
        if (nr == SYS_close_range && (unsigned)a[0] <= 6)
            a[0] += 7;
        if (nr == SYS_sendfile && (unsigned long)a[0] <= 2)
            a[0] = null;                        /* never copy a file to the console */
        if ((nr == SYS_read || nr == SYS_readv || nr == SYS_pread64 || nr == SYS_ioctl || nr == SYS_preadv ||
             nr == SYS_preadv2) && (unsigned)a[0] <= 2)
            a[0] = 50;                          /* never wait for (or reconfigure) the console */
        if ((nr == SYS_pwritev || nr == SYS_pwritev2) && (unsigned)a[0] <= 2)
            a[0] = null;                        /* never write random bytes to the console */
        if (nr == SYS_copy_file_range && (unsigned)a[2] <= 2)
            a[2] = null;
        if ((nr == SYS_fcntl || nr == SYS_flock) && (unsigned)a[0] <= 6)
            a[0] = wfile;                       /* keep stdio's and the test's own descriptors as they are */
        if (nr == SYS_fcntl && (a[1] == F_SETLKW || a[1] == 38))
            a[1] = a[1] == F_SETLKW ? F_SETLK : 37; /* a random lock never waits (two descriptions can conflict) */
        if (nr == SYS_flock)
            a[1] |= 4;                          /* LOCK_NB, for the same reason */
        if (nr == SYS_eventfd2 || nr == SYS_timerfd_create)
            a[1] |= O_NONBLOCK;                 /* a random read of it must never wait for ever */
        if (nr == SYS_signalfd4)
            a[3] |= O_NONBLOCK;                 /* a random read of it must never wait for ever */
        if (nr == SYS_epoll_pwait)
            a[3] = 0;                           /* nor a random wait */
        if (nr == SYS_mmap)
            a[3] &= ~0x100010L;                 /* never over the program's own memory (MAP_FIXED, _NOREPLACE) */
        if ((nr == SYS_socket || nr == SYS_socketpair) && rand() % 2) {
            a[0] = AF_UNIX;                     /* mostly sockets that exist */
            a[1] = rand() % 6;
        }
        if (nr == SYS_socket || nr == SYS_socketpair)
            a[1] |= SOCK_NONBLOCK;              /* every socket: no random call waits on it */
        if (nr == SYS_sendto || nr == SYS_recvfrom || nr == SYS_sendmmsg || nr == SYS_recvmmsg)
            a[3] |= MSG_DONTWAIT;
        if (nr == SYS_sendmsg || nr == SYS_recvmsg)
            a[2] |= MSG_DONTWAIT;
        syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
        calls++;
    }
    printf("random calls done: ~%ld\n", calls);
    SHOW("the file still reads", (lseek(file, 0, SEEK_SET), read(file, buf, 5)));
    close(wfile);
    wfile = open("/tmp/hostile", O_RDWR | O_TRUNC);
    SHOW("a file still writes", pwrite(wfile, "ok", 2, 0));
    close(wfile);
    SHOW("and unlinks", unlink("/tmp/hostile"));
    printf("hostile: survived\n");
    return 0;
}
