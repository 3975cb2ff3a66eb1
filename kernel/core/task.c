/*
 * The root task: the first user program, entry 0 of the boot image. The
 * kernel gives it an address space with the program's segments, a
 * stack, a read-only boot information page and a UTCB, three handles —
 * PETREL_ROOT_HANDLE (the system object: R_MANAGE is authority over
 * device memory, interrupts, device lookup, service binding and power;
 * R_READ over the boot image's files), PETREL_SELF_SPACE and
 * PETREL_SELF_THREAD — and the highest priority any thread may be given.
 * Everything else (starting the other programs, handing out handles) is
 * the root task's policy. When its first thread exits, the kernel
 * powers off.
 */
#include "thread.h"
#include "space.h"
#include "memobj.h"
#include "bootimage.h"
#include "elf.h"
#include "memory.h"
#include "cpu.h"
#include "irq.h"
#include "timer.h"
#include "sched.h"
#include "petrel_abi.h"

extern struct object root_object;
struct space *root_space;      /* for debuggers */

/* Fill the boot information page the root task reads at start. */
static void fill_bootinfo(struct petrel_bootinfo *bi)
{
    memset(bi, 0, sizeof(*bi));
    bi->magic = PETREL_BOOTINFO_MAGIC;
    bi->version = 1;
    bi->ncpus = smp_online_count();
    bi->mem_bytes = mem_total();
    bi->free_bytes = frame_free_pages() * 4096;
    bi->gic_version = irq_chip()->version;
    bi->tick_hz = timer_hz();
    bi->counter_hz = arch_counter_freq();
    const char *name = arch_cpu_name();
    memcpy(bi->cpu_name, name, strnlen(name, sizeof(bi->cpu_name) - 1));
    memcpy(bi->cmdline, cmdline(), strnlen(cmdline(), sizeof(bi->cmdline) - 1));
    bi->nfiles = bootimage_count();
}

/* An anonymous object of `size` mapped at va (eager: filled now). */
static int map_anon(struct space *s, vaddr_t va, uint64_t size, uint32_t rights, bool eager, struct memobj **out)
{
    int err;
    struct memobj *m = memobj_create(size, 0, eager, &err);
    if (!m)
        return err;
    err = memobj_map(s, m, va, 0, size, rights);
    if (out && !err)
        *out = m;
    obj_unref(&m->obj);
    return err;
}

/* Build the root task and queue its thread. Called with the kernel lock held. */
int task_start_root(void)
{
    struct bootimage_file f;
    if (bootimage_get(0, &f) != 0)
        return -E_NOENT;
    int err;
    struct space *s = space_create(NULL, &err);
    if (!s)
        return err;
    root_space = s;
    vaddr_t entry;
    err = elf_load(s, f.data, f.size, &entry);
    if (err) {
        kprintf("root: cannot load \"%s\": %s\n", f.name, error_name(err));
        return err;
    }
    struct memobj *info;
    err = map_anon(s, PETREL_USER_STACK_TOP - PETREL_USER_STACK_SIZE, PETREL_USER_STACK_SIZE,
                   R_READ | R_WRITE, false, NULL);
    if (!err)
        err = map_anon(s, PETREL_BOOTINFO_VA, 4096, R_READ, true, &info);
    if (err)
        return err;
    fill_bootinfo(phys_to_virt(info->pages[0]));

    struct thread *t = thread_create(s, PETREL_ROOT_UTCB_VA, &err);
    if (!t)
        return err;
    memcpy(t->name, f.name, strnlen(f.name, sizeof(t->name) - 1));
    t->is_root = true;
    t->prio = t->base_prio = 128;
    t->max_prio = 255;
    t->cpu = 0;
    handle_alloc_at(s, PETREL_ROOT_HANDLE, &root_object, R_ALL);
    handle_alloc_at(s, PETREL_SELF_SPACE, &s->obj, R_ALL);
    handle_alloc_at(s, PETREL_SELF_THREAD, &t->obj, R_ALL);
    obj_unref(&s->obj);             /* held by its thread and its handle now */

    kprintf("root: starting \"%s\" (%lu KiB, entry 0x%lx, asid %u)\n",
            t->name, f.size / 1024, entry, s->asid);
    thread_start(t, entry, PETREL_USER_STACK_TOP, PETREL_BOOTINFO_VA);
    return 0;
}
