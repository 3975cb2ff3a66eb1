/*
 * The small system calls: console output, the null call, handles, boot
 * image files, time and power. The dispatcher itself is generated from
 * idl/syscalls.toml (build/gen/kernel/syscall_table.c); every handler
 * validates its arguments and returns an error, never panics.
 */
#include "thread.h"
#include "k2.h"
#include "space.h"
#include "ipc.h"
#include "bootimage.h"
#include "timer.h"
#include "syscalls_gen.h"
#include "petrel_abi.h"
#include "arch.h"
#include "fdt.h"

#define DEBUG_WRITE_MAX 4096

/* The system object: the root task's authority over devices and files. */
struct object root_object = { .type = OBJ_ROOT, .refs = 1 };

/* Written in pieces of 512 bytes, each whole on the console: a line of up
 * to 512 bytes written at once is never cut by another core's. */
int64_t sys_debug_write(vaddr_t buf, uint64_t len)
{
    char tmp[512];
    if (len > DEBUG_WRITE_MAX)
        return -E_INVAL;
    for (uint64_t done = 0; done < len; ) {
        size_t n = MIN(len - done, sizeof(tmp));
        if (copy_from_user(tmp, buf + done, n))
            return -E_FAULT;
        console_write(tmp, n);
        done += n;
    }
    return (int64_t)len;
}

int64_t sys_null(void)
{
    return 0;
}

static struct space *me(void) { return current_thread()->space; }

int64_t sys_handle_close(uint32_t h)
{
    return handle_free(me(), h);
}

int64_t sys_handle_dup(uint32_t h, uint32_t rights, uint64_t badge)
{
    struct handle_slot *sl;
    int err = handle_get(me(), h, OBJ_NONE, R_DUP, &sl);
    if (err)
        return err;
    if (rights & ~sl->rights)
        return -E_PERM;
    uint64_t b = sl->badge;
    if (badge) {
        unsigned type = sl->obj->type;
        if ((type != OBJ_ENDPOINT && type != OBJ_NOTIFICATION) || sl->badge)
            return -E_INVAL;
        b = badge;
    }
    return handle_alloc(me(), sl->obj, rights, b);
}

int64_t sys_handle_info(uint32_t h)
{
    struct handle_slot *sl;
    int err = handle_get(me(), h, OBJ_NONE, 0, &sl);
    if (err)
        return err;
    bool dead = (sl->obj->type == OBJ_ENDPOINT && list_entry(sl->obj, struct endpoint, obj)->dead) ||
                (sl->obj->type == OBJ_REPLY && !list_entry(sl->obj, struct reply, obj)->caller);
    return (int64_t)(sl->obj->type | sl->rights << 8 | (dead ? HANDLE_INFO_DEAD : 0));
}

int64_t sys_handle_give(uint32_t space_h, uint32_t h, uint32_t rights)
{
    struct handle_slot *ss, *sl;
    int err = handle_get(me(), space_h, OBJ_SPACE, R_MANAGE, &ss);
    if (!err)
        err = handle_get(me(), h, OBJ_NONE, R_GRANT, &sl);
    if (err)
        return err;
    if (rights & ~sl->rights)
        return -E_PERM;
    if (sl->obj->type == OBJ_REPLY)
        return -E_INVAL;
    struct space *target = list_entry(ss->obj, struct space, obj);
    if (target->torn_down)
        return -E_CLOSED;
    return handle_alloc(target, sl->obj, rights, sl->badge);
}

int64_t sys_bootfile_info(uint64_t index, vaddr_t buf)
{
    struct bootimage_file f;
    if (index > 0xffff || bootimage_get((unsigned)index, &f) != 0)
        return -E_NOENT;
    struct petrel_bootfile bf;
    memset(&bf, 0, sizeof(bf));
    memcpy(bf.name, f.name, strnlen(f.name, sizeof(bf.name) - 1));
    bf.size = f.size;
    bf.flags = f.flags;
    return copy_to_user(buf, &bf, sizeof(bf));
}

int64_t sys_clock_ns(void)
{
    return (int64_t)timer_ns();
}

int64_t sys_cpus_online(void)
{
    return (int64_t)smp_online_mask();
}

int64_t sys_system_off(uint32_t root)
{
    struct handle_slot *sl;
    int err = handle_get(me(), root, OBJ_ROOT, R_MANAGE, &sl);
    if (err)
        return err;
    k2_shutdown_report();
    kprintf("petrel: shutting down\n");
    arch_system_off();
}

extern struct fdt boot_fdt;

int64_t sys_device_find(uint32_t root, vaddr_t compat, uint64_t len, uint64_t index, vaddr_t out)
{
    struct handle_slot *sl;
    int err = handle_get(me(), root, OBJ_ROOT, R_MANAGE, &sl);
    if (err)
        return err;
    char name[64];
    if (len == 0 || len > 63)
        return -E_INVAL;
    if (copy_from_user(name, compat, len))
        return -E_FAULT;
    name[len] = '\0';
    int node = -1;
    for (uint64_t i = 0; i <= index; i++)
        if ((node = fdt_find_compatible(&boot_fdt, node, name)) < 0)
            return -E_NOENT;
    struct petrel_device d;
    memset(&d, 0, sizeof(d));
    fdt_reg(&boot_fdt, node, 0, &d.pa, &d.size);
    uint32_t plen;
    const uint8_t *irq = fdt_prop(&boot_fdt, node, "interrupts", &plen);
    if (irq && plen >= 12)
        d.irq = be32(irq + 4) + (be32(irq) == 0 ? 32 : 16);
    return copy_to_user(out, &d, sizeof(d));
}
