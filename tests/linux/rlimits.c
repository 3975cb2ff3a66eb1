/* Resource limits (prlimit64, getrlimit, setrlimit) and readlinkat: what
 * the personality answers as Linux does for root. */
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lxtest.h"

int main(void)
{
    struct rlimit r;
    SHOW("getrlimit STACK", getrlimit(RLIMIT_STACK, &r));
    printf("stack: soft %lu, hard infinite %d\n", (unsigned long)r.rlim_cur, r.rlim_max == RLIM_INFINITY);
    SHOW("getrlimit CORE", getrlimit(RLIMIT_CORE, &r));
    printf("core: soft %lu, hard infinite %d\n", (unsigned long)r.rlim_cur, r.rlim_max == RLIM_INFINITY);
    SHOW("getrlimit NOFILE", getrlimit(RLIMIT_NOFILE, &r));
    printf("nofile: soft ~%lu\n", (unsigned long)r.rlim_cur);
    SHOW("getrlimit of resource 99", syscall(SYS_prlimit64, 0, 99, NULL, &r));
    SHOW("prlimit64 of pid 99999", syscall(SYS_prlimit64, 99999, RLIMIT_NOFILE, NULL, &r));
    struct rlimit bad = { 10, 5 };
    SHOW("setrlimit soft above hard", setrlimit(RLIMIT_NOFILE, &bad));
    SHOW("getrlimit into a bad pointer", syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, (void *)8));
    SHOW("setrlimit to what it is", (getrlimit(RLIMIT_CORE, &r), setrlimit(RLIMIT_CORE, &r)));
    char buf[64] = { 0 };
    SHOW("readlink /bin/sh", readlink("/bin/sh", buf, sizeof(buf) - 1));
    printf("it says %s\n", buf);
    SHOW("readlink of a file", readlink("/etc/hello.txt", buf, sizeof(buf)));
    SHOW("readlink of nothing", readlink("/nope", buf, sizeof(buf)));
    SHOW("readlink into 0 bytes", syscall(SYS_readlinkat, AT_FDCWD, "/bin/sh", buf, 0));
    SHOW("readlink into 3 bytes", readlink("/bin/sh", buf, 3));
    return 0;
}
