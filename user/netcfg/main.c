/*
 * netcfg: gives the network interface its address, as the system
 * description says (policy outside the stack, as a DHCP client program is
 * on Linux). With `ip=dhcp` (the form of Linux's ip= boot argument) it asks
 * the stack (services/net, granted as "net") to lease one, which the stack
 * then keeps renewed; with `ip=A.B.C.D/PREFIX [gw=A.B.C.D]` it sets that
 * one (prefix 24 if none). `cc=reno|cubic|westwood` makes that the
 * congestion control of new TCP connections (newreno at first; Linux
 * programs have the personality's own default, cubic as Linux's). It says
 * what it did and exits; a machine without a NIC has no address to
 * configure (status 0).
 */
#include "petrel.h"
#include "net_if.h"

/* a.b.c.d[/prefix] from the argument `key`: 0 if absent or malformed. */
static uint32_t arg_addr(const char *key, uint32_t *prefix)
{
    char v[24];
    if (!start_arg(key, v, sizeof(v)))
        return 0;
    uint32_t a = 0, part = 0, dots = 0, digits = 0;
    const char *p = v;
    for (; *p && *p != '/'; p++) {
        if (*p == '.' && digits && part < 256 && dots < 3) {
            a = a << 8 | part;
            part = digits = 0;
            dots++;
        } else if (*p >= '0' && *p <= '9' && part < 256) {
            part = part * 10 + (uint32_t)(*p - '0');
            digits++;
        } else
            return 0;
    }
    if (dots != 3 || !digits || part > 255)
        return 0;
    if (prefix) {
        uint32_t n = 0, got = 0;
        for (p += *p == '/'; *p >= '0' && *p <= '9'; p++, got++)
            n = n * 10 + (uint32_t)(*p - '0');
        if (*p || (got && (n < 1 || n > 32)))
            return 0;
        *prefix = got ? n : 24;
    }
    return a << 8 | part;
}

static void show(const char *what, uint32_t a)
{
    printf("%s%u.%u.%u.%u", what, a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

int main(void)
{
    uint32_t ep = start_handle("net");
    if (!ep) {
        puts("netcfg: no \"net\" service granted");
        return 1;
    }
    uint32_t addr = 0, prefix = 24, gw = 0, dns = 0, lease = 0;
    int64_t err;
    char ip[24] = "", g[24], cc[16];
    if (start_arg("cc", cc, sizeof(cc))) {
        static const char *const names[] = { "reno", "cubic", "westwood" };
        uint32_t k = 0, now = 0;
        while (k < 3 && strcmp(cc, names[k]))
            k++;
        err = k < 3 ? net_default_cc(ep, 1, k, &now) : -E_INVAL;
        if (err) {
            printf("netcfg: cc=%s: %s (reno, cubic or westwood)\n", cc, error_str(err));
            return 2;
        }
        printf("netcfg: tcp congestion control %s\n", names[now]);
    }
    start_arg("ip", ip, sizeof(ip));
    if (!strcmp(ip, "dhcp")) {
        err = net_dhcp(ep, &addr, &prefix, &gw, &dns, &lease);
    } else {
        addr = arg_addr("ip", &prefix);
        int has_gw = start_arg("gw", g, sizeof(g));
        gw = has_gw ? arg_addr("gw", NULL) : 0;
        if (!addr || (has_gw && !gw)) {
            puts("netcfg: expected ip=dhcp, or ip=A.B.C.D[/PREFIX] and perhaps gw=A.B.C.D");
            return 2;
        }
        err = net_config(ep, addr, prefix, gw);
    }
    if (err == -E_NOENT) {
        puts("netcfg: no network device");
        return 0;
    }
    if (err) {
        printf("netcfg: %s\n", error_str(err));
        return 1;
    }
    show("netcfg: ", addr);
    printf("/%u", prefix);
    if (gw)
        show(" via ", gw);
    if (lease) {
        show(", dns ", dns);
        printf(", leased for %u s", lease);
    }
    printf("\n");
    return 0;
}
