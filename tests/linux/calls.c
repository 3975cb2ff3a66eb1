/* System calls Debian's programs make that the personality took on with
 * the real-programs suite: preadv, pwritev, preadv2 and pwritev2;
 * readahead and sync_file_range; mlock and its kin; setfsuid; a direct
 * restart_syscall; each with the errors Linux gives.
 *
 * `calls refused` (a run case: Petrel's own choice, not Linux's) makes each
 * call the personality refuses on purpose (docs/reference/linux-syscalls.md)
 * and counts the answers: ENOSYS as a kernel without the feature, EPERM for
 * ptrace and reboot, never logged as unknown. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "lxtest.h"

#define F "/tmp/calls-file"

static void vectors(void)
{
    write_text(F, "0123456789abcdefghijklmnopqrstuvwxyz");
    int fd = open(F, O_RDWR);
    char a[5] = { 0 }, b[7] = { 0 };
    struct iovec v[2] = { { a, 4 }, { b, 6 } };
    SHOW("preadv at 10", syscall(SYS_preadv, fd, v, 2L, 10L, 0L));
    printf("read [%s] [%s], position %ld\n", a, b, (long)lseek(fd, 0, SEEK_CUR));
    SHOW("preadv2 at -1 (the position)", syscall(SYS_preadv2, fd, v, 2L, -1L, 0L, 0L));
    printf("read [%s] [%s], position %ld\n", a, b, (long)lseek(fd, 0, SEEK_CUR));
    SHOW("preadv past the end", syscall(SYS_preadv, fd, v, 2L, 100L, 0L));
    struct iovec w[2] = { { "AB", 2 }, { "CDE", 3 } };
    SHOW("pwritev at 30", syscall(SYS_pwritev, fd, w, 2L, 30L, 0L));
    SHOW("pwritev2 with RWF_APPEND", syscall(SYS_pwritev2, fd, w, 2L, 0L, 0L, 0x10L));
    SHOW("pwritev2 at -1", syscall(SYS_pwritev2, fd, w, 1L, -1L, 0L, 0L));
    char all[64] = { 0 };
    pread(fd, all, sizeof(all) - 1, 0);
    printf("now [%s], position %ld\n", all, (long)lseek(fd, 0, SEEK_CUR));
    SHOW("preadv at -2", syscall(SYS_preadv, fd, v, 2L, -2L, 0L));
    SHOW("preadv2 at -2", syscall(SYS_preadv2, fd, v, 2L, -2L, 0L, 0L));
    SHOW("preadv2 with an unknown flag", syscall(SYS_preadv2, fd, v, 2L, 0L, 0L, 0x100L));
    SHOW("preadv of a bad descriptor", syscall(SYS_preadv, 99L, v, 2L, 0L, 0L));
    SHOW("preadv with a bad vector", syscall(SYS_preadv, fd, (void *)8, 2L, 0L, 0L));
    SHOW("preadv of 1025 vectors", syscall(SYS_preadv, fd, v, 1025L, 0L, 0L));
    int p[2];
    pipe(p);
    SHOW("preadv of a pipe", syscall(SYS_preadv, p[0], v, 2L, 0L, 0L));
    SHOW("preadv2 of a pipe at -1 (empty: write first)", write(p[1], "pipe", 4));
    SHOW("preadv2 of a pipe at -1", syscall(SYS_preadv2, p[0], v, 1L, -1L, 0L, 0L));
    int ro = open(F, O_RDONLY);
    SHOW("pwritev to a file open for reading", syscall(SYS_pwritev, ro, w, 2L, 0L, 0L));
    int zero = open("/dev/zero", O_RDONLY);
    memset(a, 'x', 4);
    SHOW("preadv of /dev/zero at 5", syscall(SYS_preadv, zero, v, 1L, 5L, 0L));
    printf("zeros: %d\n", a[0] == 0 && a[3] == 0);

    SHOW("readahead", readahead(fd, 0, 100));
    SHOW("readahead of a pipe", readahead(p[0], 0, 100));
    SHOW("readahead of a write-only file", readahead(p[1], 0, 100));
    SHOW("readahead of a bad descriptor", readahead(99, 0, 100));
    SHOW("sync_file_range", sync_file_range(fd, 0, 10, SYNC_FILE_RANGE_WRITE));
    SHOW("sync_file_range with bad flags", sync_file_range(fd, 0, 10, 8));
    SHOW("sync_file_range from -1", sync_file_range(fd, -1, 10, 0));
    SHOW("sync_file_range of a pipe", sync_file_range(p[0], 0, 10, 0));
    SHOW("sync_file_range of a bad descriptor", sync_file_range(99, 0, 10, 0));
    close(p[0]);
    close(p[1]);
    close(zero);
    close(ro);
    close(fd);
    unlink(F);
}

static void locks(void)
{
    char *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    SHOW("mlock", mlock(m + 100, 5000));
    SHOW("munlock", munlock(m, 3 * 4096));
    SHOW("mlock2 MLOCK_ONFAULT", syscall(SYS_mlock2, m, 4096L, 1L));
    SHOW("mlock2 with a bad flag", syscall(SYS_mlock2, m, 4096L, 2L));
    SHOW("mlock of length 0", mlock(m, 0));
    munmap(m + 4096, 4096);
    SHOW("mlock over a hole", mlock(m, 3 * 4096));
    SHOW("mlock of nothing mapped", mlock((void *)0x10000, 4096));
    SHOW("mlock wrapping", mlock(m, (size_t)-4096));
    SHOW("mlockall", mlockall(MCL_CURRENT | MCL_FUTURE));
    SHOW("mlockall 0", mlockall(0));
    SHOW("mlockall MCL_ONFAULT alone", mlockall(4));
    SHOW("munlockall", munlockall());
    munmap(m, 3 * 4096);
}

static const long refused_nrs[] = {
    SYS_io_setup, SYS_io_destroy, SYS_io_submit, SYS_io_cancel, SYS_io_getevents, SYS_lookup_dcookie, SYS_nfsservctl,
    SYS_quotactl, SYS_acct, SYS_kexec_load, SYS_init_module, SYS_delete_module, SYS_ptrace, SYS_reboot, SYS_mq_open,
    SYS_mq_unlink, SYS_mq_timedsend, SYS_mq_timedreceive, SYS_mq_notify, SYS_mq_getsetattr, SYS_msgget, SYS_msgctl,
    SYS_msgrcv, SYS_msgsnd, SYS_semget, SYS_semctl, SYS_semtimedop, SYS_semop, SYS_shmget, SYS_shmctl, SYS_shmat,
    SYS_shmdt, SYS_add_key, SYS_request_key, SYS_keyctl, SYS_swapon, SYS_swapoff, SYS_mbind, SYS_get_mempolicy,
    SYS_set_mempolicy, SYS_migrate_pages, SYS_move_pages, SYS_perf_event_open, SYS_fanotify_init, SYS_fanotify_mark,
    SYS_name_to_handle_at, SYS_open_by_handle_at, SYS_process_vm_readv, SYS_process_vm_writev, SYS_kcmp,
    SYS_finit_module, SYS_seccomp, SYS_bpf, SYS_userfaultfd, SYS_pkey_mprotect, SYS_pkey_alloc, SYS_pkey_free,
    SYS_io_pgetevents, SYS_kexec_file_load, SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register,
    SYS_open_tree, SYS_move_mount, SYS_fsopen, SYS_fsconfig, SYS_fsmount, SYS_fspick, SYS_mount_setattr,
    SYS_landlock_create_ruleset, SYS_landlock_add_rule, SYS_landlock_restrict_self,
    447 /* memfd_secret */, 450 /* set_mempolicy_home_node */, 451 /* cachestat */,
};

static int refused(void)
{
    unsigned enosys = 0, eperm = 0, other = 0, n = sizeof(refused_nrs) / sizeof(refused_nrs[0]);
    for (unsigned i = 0; i < n; i++) {
        errno = 0;
        long r = syscall(refused_nrs[i], 1L, 2L, 3L, 4L, 5L, 6L);
        if (r == -1 && errno == ENOSYS)
            enosys++;
        else if (r == -1 && errno == EPERM)
            eperm++;
        else
            printf("calls: %ld answered %ld %s\n", refused_nrs[i], r, errname(errno)), other++;
    }
    printf("calls: %u refused, %u ENOSYS, %u EPERM, %u other\n", n, enosys, eperm, other);
    return other != 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "refused") == 0)
        return refused();
    vectors();
    locks();
    SHOW("setfsuid", syscall(SYS_setfsuid, 0L));
    SHOW("setfsgid", syscall(SYS_setfsgid, 5L));
    SHOW("restart_syscall", syscall(SYS_restart_syscall));
    /* Of the calls refused on purpose (docs/reference/linux-syscalls.md),
     * those whose answer Debian's kernel gives too: arm64 has no
     * protection keys. (Its kernel has the other features, so their
     * answers differ by design.) */
    SHOW("pkey_alloc", syscall(SYS_pkey_alloc, 0L, 0L));
    SHOW("pkey_free 5", syscall(SYS_pkey_free, 5L));
    return 0;
}
