/*
 * lxrun: the native program that starts Linux programs. With
 * binder=NAME,NAME... it first has the Linux personality make Binder
 * devices /dev/NAME beside /dev/binder (each with a context manager of
 * its own: hwbinder, vndbinder). With mount=DIR
 * it first has the Linux personality (granted as "linux") mount the disk
 * on directory DIR, when the machine has one, as an init mounts its
 * fstab's. Then it asks it to run the commands of a file of the root
 * file system, script=PATH (default /etc/lxrun), one after the other,
 * and exits with the last nonzero exit code of theirs, once what they
 * wrote to the disk is on it. The stand-in for Linux's /init until
 * Linux programs can fork and exec themselves.
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
    /* binder=NAME,NAME...: Binder devices beside /dev/binder, each with a
     * context of its own (hwbinder, vndbinder), as binder_linux's devices=. */
    char names[128] = "";
    if (start_arg("binder", names, sizeof(names))) {
        for (char *name = names, *next; *name; name = next) {
            for (next = name; *next && *next != ','; next++)
                ;
            if (*next)
                *next++ = 0;
            int64_t made = linux_binder_device(ep, name, (uint32_t)strlen(name));
            if (made)
                printf("lxrun: no Binder device /dev/%s: %s\n", name, error_str(made));
        }
    }
    /* The disk first: it answers within milliseconds; a minute is a disk that stopped answering. */
    char dir[96] = "";
    int64_t err = 0;
    if (start_arg("mount", dir, sizeof(dir)) && dir[0]) {
        for (int tries = 0; (err = linux_mount(ep, dir, (uint32_t)strlen(dir))) == -E_AGAIN && tries < 60000; tries++)
            sleep_ms(1);
        if (err && err != -E_NOENT)
            printf("lxrun: /dev/vda not mounted on %s: %s\n", dir, error_str(err));
    }
    /* A command whose program is on the disk and not read yet stops the
     * run (E_AGAIN); asked again, it goes on from there. */
    uint64_t code = 0;
    for (int tries = 0; (err = linux_run(ep, path, (uint32_t)strlen(path), &code)) == -E_AGAIN && tries < 60000;
         tries++)
        sleep_ms(1);
    if (err) {
        printf("lxrun: cannot run %s: %s\n", path, error_str(err));
        return 1;
    }
    /* The machine stops when this ends: what the programs wrote to the
     * disk goes on it first. */
    for (int tries = 0; (err = linux_unmount(ep)) == -E_AGAIN && tries < 60000; tries++)
        sleep_ms(1);
    if (err)
        printf("lxrun: the disk was not put away cleanly: %s\n", error_str(err));
    return (int)code;
}
