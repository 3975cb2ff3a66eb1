/*
 * Extended attributes as Linux's tmpfs keeps them: security.* and
 * trusted.* set, replaced, listed, read and removed on files, directories,
 * links and devices; user.*, system.* and unknown names; the flags, the
 * sizes (ERANGE, E2BIG), the errors; /proc, devpts, a pipe; what coreutils
 * ls asks (security.selinux, system.posix_acl_access).
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>

static void list(const char *what, long n, const char *buf)
{
    if (n < 0) {
        printf("%s: %s\n", what, errname(errno));
        return;
    }
    printf("%s (%ld bytes):", what, n);
    for (long i = 0; i < n; i += (long)strlen(buf + i) + 1)
        printf(" %s", buf + i);
    printf("\n");
}

static void get(const char *what, const char *path, const char *name)
{
    char v[64] = { 0 };
    errno = 0;
    long n = getxattr(path, name, v, sizeof(v) - 1);
    if (n < 0)
        printf("%s: %s\n", what, errname(errno));
    else
        printf("%s: %ld \"%s\"\n", what, n, v);
}

/* Each namespace's set, get, list and remove on one path (l*: not following a link). */
static void names_on(const char *path, int nofollow)
{
    char what[128], buf[512];
    static const char *const names[] = { "user.a", "trusted.a", "security.a", "system.posix_acl_access",
                                         "system.posix_acl_default", "system.other", "other.a", "user.",
                                         "trusted.", "security.", "system.", "nodot" };
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(what, sizeof(what), "%s: set %s", path, names[i]);
        SHOW(what, nofollow ? lsetxattr(path, names[i], "v", 1, 0) : setxattr(path, names[i], "v", 1, 0));
        snprintf(what, sizeof(what), "%s: get %s", path, names[i]);
        SHOW(what, nofollow ? lgetxattr(path, names[i], buf, sizeof(buf)) : getxattr(path, names[i], buf, sizeof(buf)));
    }
    snprintf(what, sizeof(what), "%s: list", path);
    list(what, nofollow ? llistxattr(path, buf, sizeof(buf)) : listxattr(path, buf, sizeof(buf)), buf);
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(what, sizeof(what), "%s: remove %s", path, names[i]);
        SHOW(what, nofollow ? lremovexattr(path, names[i]) : removexattr(path, names[i]));
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *f = "/tmp/xattrs.txt";
    write_text(f, "contents\n");
    char buf[512];

    /* Set, replace, list (order), read, size queries, remove. */
    SHOW("set trusted.one", setxattr(f, "trusted.one", "1", 1, 0));
    SHOW("set security.two", setxattr(f, "security.two", "22", 2, 0));
    SHOW("set trusted.three (empty)", setxattr(f, "trusted.three", "", 0, 0));
    list("list", listxattr(f, buf, sizeof(buf)), buf);
    SHOW("list's size", listxattr(f, NULL, 0));
    SHOW("list into too small a buffer", listxattr(f, buf, 10));
    get("get trusted.one", f, "trusted.one");
    get("get trusted.three", f, "trusted.three");
    SHOW("size of security.two", getxattr(f, "security.two", NULL, 0));
    SHOW("get into too small a buffer", getxattr(f, "security.two", buf, 1));
    SHOW("replace trusted.one", setxattr(f, "trusted.one", "one", 3, XATTR_REPLACE));
    get("  now", f, "trusted.one");
    SHOW("create trusted.one again", setxattr(f, "trusted.one", "x", 1, XATTR_CREATE));
    SHOW("replace a missing one", setxattr(f, "trusted.none", "x", 1, XATTR_REPLACE));
    SHOW("create a new one", setxattr(f, "trusted.four", "4444", 4, XATTR_CREATE));
    SHOW("both flags, existing", setxattr(f, "trusted.four", "4", 1, XATTR_CREATE | XATTR_REPLACE));
    SHOW("flags 4", setxattr(f, "trusted.four", "4", 1, 4));
    list("list", listxattr(f, buf, sizeof(buf)), buf);
    SHOW("get a missing one", getxattr(f, "trusted.none", buf, sizeof(buf)));
    SHOW("remove trusted.one", removexattr(f, "trusted.one"));
    SHOW("remove it again", removexattr(f, "trusted.one"));
    list("list", listxattr(f, buf, sizeof(buf)), buf);

    /* Names and sizes. */
    char longname[300];
    memset(longname, 'n', sizeof(longname));
    memcpy(longname, "trusted.", 8);
    longname[255] = 0;
    SHOW("a name of 255 bytes", setxattr(f, longname, "x", 1, 0));
    SHOW("  get it", getxattr(f, longname, buf, sizeof(buf)));
    SHOW("  remove it", removexattr(f, longname));
    longname[255] = 'n';
    longname[256] = 0;
    SHOW("a name of 256 bytes", setxattr(f, longname, "x", 1, 0));
    SHOW("  get", getxattr(f, longname, buf, sizeof(buf)));
    SHOW("an empty name", setxattr(f, "", "x", 1, 0));
    SHOW("  get", getxattr(f, "", buf, sizeof(buf)));
    SHOW("  remove", removexattr(f, ""));
    char *big = calloc(1, 70000);
    SHOW("a value of 65536 bytes", setxattr(f, "trusted.big", big, 65536, 0));
    SHOW("  its size", getxattr(f, "trusted.big", NULL, 0));
    SHOW("  read into 65536", getxattr(f, "trusted.big", big, 65536));
    SHOW("  read into 70000", getxattr(f, "trusted.big", big, 70000));
    SHOW("  read into 100", getxattr(f, "trusted.big", big, 100));
    SHOW("a value of 65537 bytes", setxattr(f, "trusted.big2", big, 65537, 0));
    SHOW("remove the big one", removexattr(f, "trusted.big"));
    SHOW("a bad name pointer", setxattr(f, (char *)8, "x", 1, 0));
    SHOW("a bad value pointer", setxattr(f, "trusted.bad", (char *)8, 1, 0));
    SHOW("  it was not made", getxattr(f, "trusted.bad", NULL, 0));
    SHOW("a bad value pointer, user.*", setxattr(f, "user.bad", (char *)8, 1, 0));
    SHOW("a bad value pointer, an unknown namespace", setxattr(f, "other.bad", (char *)8, 1, 0));
    SHOW("a bad value pointer, an existing one with XATTR_CREATE", setxattr(f, "security.two", (char *)8, 1,
                                                                              XATTR_CREATE));
    SHOW("a bad value pointer on /proc", setxattr("/proc/self/status", "trusted.bad", (char *)8, 1, 0));
    SHOW("get into a bad pointer", getxattr(f, "security.two", (char *)8, 10));
    SHOW("list into a bad pointer", listxattr(f, (char *)8, 100));
    SHOW("a missing file", getxattr("/tmp/none", "trusted.a", buf, sizeof(buf)));
    SHOW("a missing file's list", listxattr("/tmp/none", buf, sizeof(buf)));

    /* Through a descriptor, and the descriptor kinds. */
    int fd = open(f, O_RDONLY);
    SHOW("fsetxattr on a read-only descriptor", fsetxattr(fd, "trusted.fd", "fd", 2, 0));
    SHOW("fgetxattr", fgetxattr(fd, "trusted.fd", buf, sizeof(buf)));
    list("flistxattr", flistxattr(fd, buf, sizeof(buf)), buf);
    SHOW("fremovexattr", fremovexattr(fd, "trusted.fd"));
    close(fd);
    int path = open(f, O_PATH);
    SHOW("fgetxattr on an O_PATH descriptor", fgetxattr(path, "trusted.fd", buf, sizeof(buf)));
    SHOW("flistxattr on an O_PATH descriptor", flistxattr(path, buf, sizeof(buf)));
    close(path);
    SHOW("fgetxattr on a closed descriptor", fgetxattr(60, "trusted.fd", buf, sizeof(buf)));
    int p[2];
    pipe(p);
    SHOW("fsetxattr on a pipe", fsetxattr(p[0], "trusted.a", "a", 1, 0));
    SHOW("fgetxattr on a pipe", fgetxattr(p[0], "trusted.a", buf, sizeof(buf)));
    SHOW("fgetxattr on a pipe, empty name", fgetxattr(p[0], "", buf, sizeof(buf)));
    SHOW("flistxattr on a pipe", flistxattr(p[0], buf, sizeof(buf)));
    SHOW("fremovexattr on a pipe", fremovexattr(p[0], "trusted.a"));
    SHOW("fsetxattr user.a on a pipe", fsetxattr(p[0], "user.a", "a", 1, 0));
    SHOW("fgetxattr user.a on a pipe", fgetxattr(p[0], "user.a", buf, sizeof(buf)));
    SHOW("fsetxattr on a pipe, bad value", fsetxattr(p[0], "trusted.a", (char *)8, 1, 0));
    SHOW("fsetxattr on a pipe, value too big", fsetxattr(p[0], "trusted.a", buf, 70000, 0));
    close(p[0]);
    close(p[1]);

    /* Every namespace on each kind of node. */
    mkdir("/tmp/xattrs.d", 0755);
    symlink("xattrs.txt", "/tmp/xattrs.ln");
    mkdir("/dev/shm/xd", 0755);
    names_on(f, 0);
    names_on("/tmp/xattrs.d", 0);
    names_on("/tmp/xattrs.ln", 1);
    names_on("/dev/null", 0);
    names_on("/dev/shm/xd", 0);
    names_on("/dev/pts", 0);
    names_on("/proc/self/status", 0);
    names_on("/proc", 0);

    /* What coreutils ls -l asks of each file. */
    get("ls: security.selinux", f, "security.selinux");
    get("ls: system.posix_acl_access", f, "system.posix_acl_access");
    get("ls: system.nfs4_acl", f, "system.nfs4_acl");

    /* Its contents growing, moving or shrinking leave a file's attributes alone. */
    int w = open(f, O_WRONLY | O_APPEND);
    SHOW("set, then the file grows", setxattr(f, "trusted.grow", "g", 1, 0));
    for (int i = 0; i < 100; i++)
        write(w, big, 1000);
    close(w);
    get("  after 100,000 bytes more", f, "trusted.grow");
    truncate(f, 0);
    get("  after a truncate to 0", f, "trusted.grow");
    truncate(f, 200000);
    get("  after a truncate to 200,000", f, "trusted.grow");

    /* A new file has none; a renamed or linked file keeps its own. */
    SHOW("set before the rename", setxattr(f, "trusted.kept", "k", 1, 0));
    rename(f, "/tmp/xattrs2.txt");
    link("/tmp/xattrs2.txt", "/tmp/xattrs3.txt");
    get("after a rename", "/tmp/xattrs2.txt", "trusted.kept");
    get("through a hard link", "/tmp/xattrs3.txt", "trusted.kept");
    write_text("/tmp/xattrs4.txt", "new\n");
    list("a new file", listxattr("/tmp/xattrs4.txt", buf, sizeof(buf)), buf);
    unlink("/tmp/xattrs2.txt");
    unlink("/tmp/xattrs3.txt");
    unlink("/tmp/xattrs4.txt");
    unlink("/tmp/xattrs.ln");
    rmdir("/tmp/xattrs.d");
    rmdir("/dev/shm/xd");
    return 0;
}
