/*
 * Device tree parser tests: the live tree QEMU passed, a known tree
 * (tests/guest/dtb/good.dts), every malformed fixture the host step
 * generated (each must be rejected), every truncation of the good tree,
 * and thousands of randomly corrupted copies, which must be rejected or,
 * if they still validate, walked without a fault.
 */
#include "ktest.h"
#include "fdt.h"
#include "bootimage.h"
#include "cpu.h"
#include "memory.h"
#include "platform.h"

extern struct fdt boot_fdt;

KTEST(fdt_live_tree, "fdt: QEMU's tree validates and names memory, cpus, gic, timer, uart")
{
    KT_CHECK(boot_fdt.size > 0, "no boot tree");
    KT_CHECK(fdt_count_nodes(&boot_fdt) > 8, "only %d nodes", fdt_count_nodes(&boot_fdt));
    KT_CHECK(fdt_path(&boot_fdt, "/chosen") >= 0, "no /chosen");
    KT_CHECK(fdt_path(&boot_fdt, "/memory") >= 0, "no /memory");
    KT_CHECK(fdt_find_compatible(&boot_fdt, -1, "arm,armv8-timer") >= 0, "no timer");
    KT_CHECK(fdt_find_compatible(&boot_fdt, -1, "arm,pl011") >= 0, "no pl011");
    int cpus_node = fdt_path(&boot_fdt, "/cpus");
    unsigned n = 0;
    for (int c = fdt_first_child(&boot_fdt, cpus_node); c >= 0; c = fdt_next_sibling(&boot_fdt, c))
        n += strncmp(fdt_node_name(&boot_fdt, c), "cpu@", 4) == 0;
    KT_CHECK(n == ncpus_present, "%u cpu nodes, %u cores", n, ncpus_present);
    uint64_t base, size;
    int uart = fdt_find_compatible(&boot_fdt, -1, "arm,pl011");
    KT_CHECK(fdt_reg(&boot_fdt, uart, 0, &base, &size) && base == platform.uart_pa, "uart reg");
    KT_CHECK(fdt_path(&boot_fdt, "/no-such-node") < 0, "found a node that does not exist");
}

/* Load a file of the boot image; NULL if absent. */
static const void *image_file(const char *name, uint64_t *size)
{
    struct bootimage_file f;
    if (bootimage_find(name, &f) != 0)
        return NULL;
    *size = f.size;
    return f.data;
}

KTEST(fdt_known_tree, "fdt: lookups on a known tree return its exact values")
{
    uint64_t len;
    const void *blob = image_file("dtb/good.dtb", &len);
    struct fdt t;
    if (!KT_CHECK(blob != NULL, "dtb/good.dtb missing from the boot image"))
        return;
    if (!KT_CHECK(fdt_open(&t, blob, len) == 0, "rejected: %s", t.error))
        return;
    KT_CHECK(fdt_count_nodes(&t) == 9, "%d nodes", fdt_count_nodes(&t));
    int uart = fdt_path(&t, "/soc/uart");
    uint64_t a, s;
    KT_CHECK(uart >= 0 && fdt_reg(&t, uart, 0, &a, &s) && a == 0x1000 && s == 0x100, "uart reg");
    KT_CHECK(fdt_compatible(&t, uart, "arm,pl011") && fdt_compatible(&t, uart, "vendor,uart"), "compatible list");
    KT_CHECK(!fdt_compatible(&t, uart, "arm,pl01"), "prefix matched as compatible");
    KT_CHECK(fdt_parent(&t, uart) == fdt_path(&t, "/soc"), "parent of uart");
    int multi = fdt_path(&t, "/soc/multi@2000");
    KT_CHECK(fdt_reg(&t, multi, 1, &a, &s) && a == 0x3000 && s == 0x20, "second reg pair");
    KT_CHECK(!fdt_reg(&t, multi, 2, &a, &s), "third reg pair should not exist");
    int mem = fdt_path(&t, "/memory@40000000");
    KT_CHECK(fdt_reg(&t, mem, 0, &a, &s) && a == 0x40000000 && s == 0x08000000, "memory reg (2+2 cells)");
    int cpus_node = fdt_path(&t, "/cpus"), n = 0;
    for (int c = fdt_first_child(&t, cpus_node); c >= 0; c = fdt_next_sibling(&t, c))
        n++;
    KT_CHECK(n == 2, "%d cpus", n);
    uint32_t plen;
    const char *args = fdt_prop(&t, fdt_path(&t, "/chosen"), "bootargs", &plen);
    KT_CHECK(args && strcmp(args, "console=ttyAMA0 hz=250") == 0, "bootargs");
    KT_CHECK(fdt_parent(&t, fdt_root(&t)) < 0, "root has a parent");
    KT_CHECK(fdt_first_child(&t, uart) < 0, "leaf has a child");
}

KTEST(fdt_fixtures, "fdt: malformed fixtures")
{
    uint64_t mlen;
    const char *m = image_file("dtb/manifest.txt", &mlen);
    if (!m) {
        ktest_result(false, "fdt: dtb/manifest.txt missing from the boot image");
        return;
    }
    for (uint64_t i = 0; i < mlen; ) {
        char name[40], want[8];
        unsigned n = 0, w = 0;
        while (i < mlen && m[i] != ' ' && m[i] != '\n' && n < sizeof(name) - 1)
            name[n++] = m[i++];
        name[n] = '\0';
        while (i < mlen && m[i] == ' ')
            i++;
        while (i < mlen && m[i] != '\n' && w < sizeof(want) - 1)
            want[w++] = m[i++];
        want[w] = '\0';
        while (i < mlen && m[i] != '\n')
            i++;
        i++;
        if (!n)
            continue;
        char path[48];
        ksnprintf(path, sizeof(path), "dtb/%s", name);
        uint64_t len;
        const void *blob = image_file(path, &len);
        struct fdt t;
        int err = blob ? fdt_open(&t, blob, len) : -E_NOENT;
        bool expect_ok = strcmp(want, "ok") == 0;
        if (blob && !err)
            fdt_count_nodes(&t);            /* a valid tree must walk cleanly */
        ktest_result(blob && (expect_ok ? err == 0 : err == -E_BADFORMAT),
                     "fdt: %s %s (%s)", name, expect_ok ? "accepted" : "rejected",
                     !blob ? "missing" : err ? t.error : "valid");
    }
}

static uint8_t scratch[16384];

KTEST(fdt_truncations, "fdt: every truncation of a valid tree is rejected, none faults")
{
    uint64_t len;
    const uint8_t *blob = image_file("dtb/good.dtb", &len);
    if (!KT_CHECK(blob && len <= sizeof(scratch), "dtb/good.dtb missing or too big"))
        return;
    struct fdt t;
    for (uint64_t cut = 0; cut < len; cut++) {
        memcpy(scratch, blob, cut);
        KT_CHECK(fdt_open(&t, scratch, cut) != 0, "accepted at %lu of %lu bytes", cut, len);
    }
    KT_CHECK(fdt_open(&t, blob, len) == 0, "full tree rejected");
}

KTEST(fdt_random_corruption, "fdt: 3000 randomly corrupted trees validate or fail cleanly")
{
    uint64_t len;
    const uint8_t *blob = image_file("dtb/good.dtb", &len);
    if (!KT_CHECK(blob && len <= sizeof(scratch), "dtb/good.dtb missing or too big"))
        return;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    unsigned accepted = 0;
    for (int round = 0; round < 3000; round++) {
        memcpy(scratch, blob, len);
        int flips = 1 + round % 4;
        for (int k = 0; k < flips; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            scratch[x % len] ^= (uint8_t)(x >> 32) | 1;
        }
        struct fdt t;
        if (fdt_open(&t, scratch, len) == 0) {
            accepted++;
            /* Still valid: every lookup must stay inside the blob. */
            fdt_count_nodes(&t);
            fdt_path(&t, "/soc/uart");
            for (int nd = fdt_root(&t); nd >= 0; nd = fdt_next_node(&t, nd, NULL)) {
                uint64_t a, s;
                fdt_reg(&t, nd, 0, &a, &s);
                fdt_compatible(&t, nd, "arm,pl011");
                fdt_parent(&t, nd);
            }
        }
    }
    kprintf("# %u of 3000 corrupted trees still valid (and walked)\n", accepted);
}
