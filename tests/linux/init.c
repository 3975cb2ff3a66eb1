/*
 * /init of the Linux side of the oracle tests (and of `./petrel run
 * --linux`): runs each line of /etc/lxrun as a command (words split at
 * spaces, 'quoted parts' kept whole, as Petrel's lxrun does), one after the
 * other, printing exactly what Petrel's personality prints around each
 * (`lx: run LINE`, `lx: exit N` or `lx: signal N`, `lx: done`), with the
 * same environment, then powers the machine off.
 *
 * First it loads the modules /etc/modules lists (a path a line, in order),
 * and when the machine has a disk (/dev/vda) it mounts it at /data as
 * ext2, read-only if the disk is, as Petrel's default system does; it is
 * unmounted cleanly before the power goes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd_words.h"

#define PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
static char *env[] = { "HOME=/", "TERM=linux", "PATH=" PATH, NULL };

static void run(char *line)
{
    static char shown[4096];
    char path[96], *argv[32];
    snprintf(shown, sizeof(shown), "%s", line);
    int argc = cmd_words(line, argv, 31);         /* 'a b' is one word, without its quotes */
    argv[argc] = NULL;
    if (argc == 0 || argv[0][0] == '#')
        return;
    printf("lx: run %s\n", shown);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {                             /* a bare name: the first of PATH's directories that has it */
        const char *name = argv[0], *dir = PATH;
        if (name[0] == '/')
            execve(name, argv, env);
        while (name[0] != '/' && *dir) {
            size_t n = strcspn(dir, ":");
            snprintf(path, sizeof(path), "%.*s/%s", (int)n, dir, name);
            argv[0] = path;
            execve(path, argv, env);
            if (errno != ENOENT)
                break;
            dir += n + (dir[n] == ':');
        }
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        printf("lx: signal %d\n", WTERMSIG(status));
    else
        printf("lx: exit %d\n", WEXITSTATUS(status));
    fflush(stdout);
}

/* The loopback interface up, as a Debian system's ifupdown brings it up
 * (Petrel's is up from the start). */
static void loopback_up(void)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq r;
    memset(&r, 0, sizeof(r));
    strcpy(r.ifr_name, "lo");
    if (s >= 0 && ioctl(s, SIOCGIFFLAGS, &r) == 0 && !(r.ifr_flags & IFF_UP)) {
        r.ifr_flags |= IFF_UP;
        ioctl(s, SIOCSIFFLAGS, &r);
    }
    if (s >= 0)
        close(s);
}

/* Each module /etc/modules names, loaded in order: a line is the module's
 * path, then, after a space, its parameters. */
static void load_modules(void)
{
    static char list[4096];
    int fd = open("/etc/modules", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, list, sizeof(list) - 1) : -1;
    if (fd >= 0)
        close(fd);
    list[n > 0 ? n : 0] = 0;
    for (char *name = strtok(list, "\n"); name; name = strtok(NULL, "\n")) {
        char *params = strchr(name, ' ');
        if (params)
            *params++ = 0;
        int m = open(name, O_RDONLY | O_CLOEXEC);
        if (m < 0 || syscall(SYS_finit_module, m, params ? params : "", 0) != 0)
            printf("lx: module %s: %s\n", name, strerror(errno));
        if (m >= 0)
            close(m);
    }
}

/* The disk at /data, if there is one. */
static int mount_disk(void)
{
    struct stat st;
    if (stat("/dev/vda", &st) != 0)
        return 0;
    mkdir("/data", 0755);
    if (mount("/dev/vda", "/data", "ext2", 0, NULL) == 0)
        return 1;
    if ((errno == EROFS || errno == EACCES) && mount("/dev/vda", "/data", "ext2", MS_RDONLY, NULL) == 0)
        return 1;
    printf("lx: mount /dev/vda at /data: %s\n", strerror(errno));
    return 0;
}

int main(void)
{
    mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
    mount("proc", "/proc", "proc", 0, NULL);
    mkdir("/dev/pts", 0755);                    /* as a Debian system mounts them (Petrel's /dev has them) */
    mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "gid=5,mode=620,ptmxmode=000");
    mkdir("/dev/shm", 01777);
    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
    loopback_up();
    load_modules();
    int disk = mount_disk();
    symlink("/proc/self/fd", "/dev/fd");        /* what udev makes on a Linux system (Petrel's /dev has them) */
    symlink("/proc/self/fd/0", "/dev/stdin");
    symlink("/proc/self/fd/1", "/dev/stdout");
    symlink("/proc/self/fd/2", "/dev/stderr");
    static char text[64 * 1024];                /* Petrel's LX_SCRIPT_MAX (services/linux/linux.c) */
    int fd = open("/etc/lxrun", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
    if (n == (ssize_t)sizeof(text) - 1) {
        printf("lx: /etc/lxrun is too long\n");  /* (as Petrel refuses it) */
        n = 0;
    }
    text[n > 0 ? n : 0] = 0;
    if (fd >= 0)
        close(fd);                              /* the commands start with descriptors 0-2 only */
    for (char *line = text; *line; ) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        run(line);
        if (!nl)
            break;
        line = nl + 1;
    }
    printf("lx: done\n");
    fflush(stdout);
    sync();
    if (disk && umount("/data") != 0)
        printf("lx: umount /data: %s\n", strerror(errno));
    reboot(RB_POWER_OFF);
    return 0;
}
