/*
 * lxrun: the native program that starts Linux programs. It asks the Linux
 * personality (granted as "linux") to run the commands of a file of the
 * root file system, script=PATH (default /etc/lxrun), one after the other,
 * and exits with the last nonzero exit code of theirs, once what they
 * wrote to the disk at /data is on it. The stand-in for Linux's /init
 * until Linux programs can fork and exec themselves.
 */
#include "petrel.h"
#include "linux_if.h"

int main(void *info)
{
    uint32_t ep = start_handle("linux");
    char path[96] = "/etc/lxrun";
    start_arg("script", path, sizeof(path));
    if (!ep) {
        puts("lxrun: no \"linux\" service granted");
        return 1;
    }
    uint64_t code = 0;
    int64_t err = linux_run(ep, path, (uint32_t)strlen(path), &code);
    if (err) {
        printf("lxrun: cannot run %s: %s\n", path, error_str(err));
        return 1;
    }
    /* The machine stops when this ends: what the programs wrote to the
     * disk goes on it first (the disk answers within milliseconds; a
     * minute is a disk that stopped answering). */
    for (int tries = 0; (err = linux_unmount(ep)) == -E_AGAIN && tries < 60000; tries++)
        sleep_ms(1);
    if (err)
        printf("lxrun: the disk at /data was not put away cleanly: %s\n", error_str(err));
    return (int)code;
}
