/*
 * sethostname and setdomainname: what uname and gethostname say after
 * them, the length limits and a bad pointer; the names are put back.
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <sys/syscall.h>
#include <sys/utsname.h>

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct utsname before, u;
    uname(&before);
    SHOW("sethostname", sethostname("testhost", 8));
    uname(&u);
    printf("nodename: %s\n", u.nodename);
    char h[65] = { 0 };
    SHOW("gethostname", gethostname(h, sizeof(h)));
    printf("gethostname: %s\n", h);
    SHOW("setdomainname", setdomainname("example.org", 11));
    uname(&u);
    printf("domainname: %s\n", u.domainname);
    SHOW("a name of 64 bytes", sethostname("0123456789012345678901234567890123456789012345678901234567890123", 64));
    uname(&u);
    printf("its length: %zu\n", strlen(u.nodename));
    SHOW("65 bytes", syscall(SYS_sethostname, "x", 65));
    SHOW("a negative length", syscall(SYS_sethostname, "x", -1));
    SHOW("a bad pointer", syscall(SYS_sethostname, 8, 4));
    SHOW("setdomainname 65 bytes", syscall(SYS_setdomainname, "x", 65));
    SHOW("length 0", sethostname("", 0));
    uname(&u);
    printf("empty: %d\n", u.nodename[0] == 0);
    sethostname(before.nodename, strlen(before.nodename));
    setdomainname(before.domainname, strlen(before.domainname));
    uname(&u);
    printf("put back: %d\n", !strcmp(u.nodename, before.nodename) && !strcmp(u.domainname, before.domainname));
    return 0;
}
