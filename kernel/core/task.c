/*
 * The root task: the first user program, entry 0 of the boot image. The
 * kernel gives it an address space with the program's segments, a stack
 * and a read-only boot information page, and enters it at EL0 on the
 * boot core. When it exits the kernel powers the machine off; when it
 * faults the kernel reports the fault, kills it and powers off.
 */
#include "thread.h"
#include "bootimage.h"
#include "elf.h"
#include "memory.h"
#include "cpu.h"
#include "irq.h"
#include "timer.h"
#include "petrel_abi.h"
#include <arch/trapframe.h>

static struct thread root_thread;

const char *fault_kind_name(enum fault_kind kind)
{
    static const char *const names[] = {
        [FAULT_DATA] = "data abort", [FAULT_INSN] = "instruction abort",
        [FAULT_ALIGN] = "alignment fault", [FAULT_UNDEF] = "undefined instruction",
        [FAULT_FOREIGN_SYSCALL] = "foreign system call", [FAULT_OTHER] = "exception",
    };
    return (unsigned)kind < ARRAY_SIZE(names) ? names[kind] : "fault";
}

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
}

/* Map fresh zeroed pages over [va, va+size). */
static int map_zeroed(struct vm_space *vs, vaddr_t va, uint64_t size, unsigned rights)
{
    for (uint64_t off = 0; off < size; off += 4096) {
        paddr_t pa = frame_alloc_zeroed(0);
        if (pa == PADDR_INVALID)
            return -E_NOMEM;
        int err = vm_map_page(vs, va + off, pa, rights);
        if (err)
            return err;
    }
    return 0;
}

/* Load boot image entry 0 and enter it at EL0. Returns only on error. */
int task_start_root(void)
{
    struct bootimage_file f;
    struct thread *t = &root_thread;
    if (bootimage_get(0, &f) != 0)
        return -E_NOENT;
    memcpy(t->name, f.name, strnlen(f.name, sizeof(t->name) - 1));

    int err = vm_space_init(&t->space);
    vaddr_t entry;
    if (!err)
        err = elf_load(&t->space, f.data, f.size, &entry);
    if (err) {
        kprintf("root: cannot load \"%s\": %s\n", f.name, error_name(err));
        return err;
    }
    err = map_zeroed(&t->space, PETREL_USER_STACK_TOP - PETREL_USER_STACK_SIZE,
                     PETREL_USER_STACK_SIZE, VM_READ | VM_WRITE);
    paddr_t info = frame_alloc_zeroed(0);
    if (err || info == PADDR_INVALID)
        return -E_NOMEM;
    if ((err = vm_map_page(&t->space, PETREL_BOOTINFO_VA, info, VM_READ)) != 0)
        return err;

    paddr_t stack = frame_alloc(2);
    if (stack == PADDR_INVALID)
        return -E_NOMEM;
    t->kstack = phys_to_virt(stack);
    t->tf = (struct trapframe *)((uint8_t *)t->kstack + CONFIG_KSTACK_SIZE) - 1;
    memset(t->tf, 0, sizeof(*t->tf));
    t->tf->pc = entry;
    t->tf->sp = PETREL_USER_STACK_TOP;
    t->tf->pstate = 0;                      /* EL0t, interrupts unmasked */
    t->tf->x[0] = PETREL_BOOTINFO_VA;

    kprintf("root: starting \"%s\" (%lu KiB, entry 0x%lx, asid %u)\n",
            t->name, f.size / 1024, entry, t->space.asid);
    fill_bootinfo(phys_to_virt(info));
    this_cpu()->current = t;
    vm_space_activate(&t->space);
    arch_enter_user(t->tf);
}

/* The running thread ends; with the root task gone, power off. */
NORETURN void thread_exit(int status)
{
    struct thread *t = this_cpu()->current;
    kprintf("root: \"%s\" exited with status %d\n", t ? t->name : "?", status);
    kprintf("petrel: shutting down\n");
    arch_system_off();
}

/* No fault handler exists yet: report the fault and end the thread. */
NORETURN void thread_fault(struct trapframe *tf, const struct fault_info *fi)
{
    struct thread *t = this_cpu()->current;
    kprintf("fault: thread \"%s\": %s (%s) at 0x%lx, pc 0x%lx, esr 0x%lx\n",
            t ? t->name : "?", fault_kind_name(fi->kind), fi->detail, fi->addr, tf->pc, fi->esr);
    kprintf("fault: thread \"%s\" killed\n", t ? t->name : "?");
    kprintf("petrel: shutting down\n");
    arch_system_off();
}
