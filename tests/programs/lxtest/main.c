/*
 * lxtest: the Linux personality's interface (idl/linux.toml) as a native
 * program uses it: exec, wait and their errors, a crash seen as a signal,
 * the process table's limit, and a personality that still works
 * afterwards. Prints TAP.
 */
#include "petrel.h"
#include "linux_if.h"

static uint32_t ep;

/* exec of argv (and an empty environment): the pid, or a negated error. */
static int64_t start(const char *argv0, const char *arg)
{
    char cmd[200];
    size_t n = strlen(argv0) + 1, m = arg ? strlen(arg) + 1 : 0;
    memcpy(cmd, argv0, n);
    if (arg)
        memcpy(cmd + n, arg, m);
    cmd[n + m] = 0;                             /* the end of argv; no environment */
    uint64_t pid = 0;
    int64_t err = linux_exec(ep, cmd, (uint32_t)(n + m + 1), &pid);
    return err ? err : (int64_t)pid;
}

static int64_t wait_for(int64_t pid)
{
    uint64_t status = 0;
    int64_t err = linux_wait(ep, (uint64_t)pid, &status);
    return err ? err : (int64_t)status;
}

int main(void *info)
{
    ep = start_handle("linux");
    if (!ep) {
        puts("lxtest: no \"linux\" service granted");
        return 1;
    }
    int64_t pid = start("/bin/hello", NULL);
    tap_ok(pid > 0, "exec /bin/hello gives a pid (%ld)", (long)pid);
    tap_ok(wait_for(pid) == 0, "wait: it exits with status 0");
    tap_ok(wait_for(pid) == -E_NOENT, "wait again: E_NOENT (it was reaped)");
    pid = start("/bin/args", "5");
    tap_ok(pid > 0 && wait_for(pid) == 5 << 8, "args 5 exits with 5 (wait status 5 << 8)");
    pid = start("/bin/crash", NULL);
    tap_ok(pid > 0 && wait_for(pid) == 11, "crash ends with SIGSEGV (wait status 11)");
    tap_ok(start("/bin/nope", NULL) == -E_NOENT, "exec of a missing file: E_NOENT");
    tap_ok(start("/etc/hello.txt", NULL) == -E_PERM, "exec of a file without an execute bit: E_PERM");
    tap_ok(start("/etc", NULL) == -E_PERM, "exec of a directory: E_PERM");
    tap_ok(start("/data/notelf", NULL) == -E_INVAL, "exec of an executable that is neither ELF nor a script: E_INVAL");
    pid = start("/etc/script.sh", NULL);
    tap_ok(pid > 0 && wait_for(pid) == 0, "exec of a #! script runs its interpreter on it (status 0)");
    uint64_t got = 0;
    tap_ok(linux_exec(ep, "/bin/hello", 10, &got) == -E_INVAL, "a command without its final NUL: E_INVAL");
    tap_ok(linux_exec(ep, "\0", 1, &got) == -E_INVAL, "an empty argv: E_INVAL");
    tap_ok(wait_for(12345) == -E_NOENT && wait_for(0) == -E_NOENT && wait_for(~0ull >> 1) == -E_NOENT,
           "wait for pids that never were: E_NOENT");

    /* Binder devices: two made as the Linux systems make them, bad names
     * refused, a name taken busy, and eight devices in all (/dev/binder
     * and seven more) the bound. */
    tap_ok(linux_binder_device(ep, "hwbinder", 8) == 0 && linux_binder_device(ep, "vndbinder", 9) == 0,
           "binder_device: hwbinder and vndbinder are made");
    tap_ok(linux_binder_device(ep, "", 0) == -E_INVAL && linux_binder_device(ep, "a/b", 3) == -E_INVAL &&
           linux_binder_device(ep, "..", 2) == -E_INVAL && linux_binder_device(ep, "Binder", 6) == -E_INVAL &&
           linux_binder_device(ep, "a\0b", 3) == -E_INVAL &&
           linux_binder_device(ep, "abcdefghijklmnopqrstuvwxyz01234", 31) == 0,
           "binder_device: empty, slashed, dotted, upper-case and NUL-holding names are E_INVAL; 31 bytes are taken");
    tap_ok(linux_binder_device(ep, "binder", 6) == -E_BUSY && linux_binder_device(ep, "null", 4) == -E_BUSY,
           "binder_device: a name /dev has already is E_BUSY");
    int made = 0;
    int64_t past = 0;
    for (int i = 0; i < 10 && !past; i++) {
        char name[8] = { 'b', 'n', (char)('0' + i), 0 };
        past = linux_binder_device(ep, name, 3);
        made += past == 0;
    }
    tap_ok(made == 4 && past == -E_LIMIT, "binder_device: four more make eight, the next is E_LIMIT (%d, %ld)", made,
           (long)past);
    pid = start("/bin/binderdevs", NULL);
    tap_ok(pid > 0 && wait_for(pid) == 0, "a Linux program uses the devices afterwards (binderdevs, status 0)");

    /* Forty processes nobody waits for yet (more than the personality's
     * old table of 32 held): each starts, and each is waited for. */
    int64_t pids[40];
    int started = 0;
    int64_t last = 0;
    for (int i = 0; i < 40; i++) {
        last = start("/bin/enosys", NULL);
        if (last < 0)
            break;
        pids[started++] = last;
    }
    tap_ok(started == 40 && last > 0, "40 processes at once (%d, %ld)", started, (long)last);
    int reaped = 0;
    for (int i = 0; i < started; i++)
        reaped += wait_for(pids[i]) == 0;
    tap_ok(reaped == started, "each of them is waited for (%d)", reaped);
    pid = start("/bin/args", "1");
    tap_ok(pid > 0 && wait_for(pid) == 1 << 8, "afterwards a process starts and ends as before");
    tap_plan();
    return 0;
}
