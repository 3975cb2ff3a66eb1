/*
 * Interrupt objects: a device interrupt line handed to a user-level
 * driver. When the line fires the kernel masks it and signals the bound
 * notification; the driver handles the device and calls irq_ack, and
 * the kernel unmasks the line. The kernel keeps the timer and the
 * inter-processor interrupts for itself. A private (per-core) line is
 * enabled on, and must be acknowledged from, the core that bound it.
 */
#include "object.h"
#include "ipc.h"
#include "irq.h"
#include "thread.h"
#include "timer.h"
#include "cpu.h"
#include "kmalloc.h"
#include "syscalls_gen.h"

struct irqobj {
    struct object obj;
    unsigned irq;
    unsigned cpu;               /* where a private line was bound */
    struct notification *n;
    uint64_t bits;
    bool masked;
    bool bound;
};

static void fired(unsigned irq, void *arg)
{
    struct irqobj *io = arg;
    irq_disable(irq);
    io->masked = true;
    if (io->n)
        notify_raise(io->n, io->bits);
}

void irqobj_shutdown(struct object *o)
{
    struct irqobj *io = list_entry(o, struct irqobj, obj);
    irq_disable(io->irq);
    irq_unregister(io->irq);
    if (io->n)
        obj_unref(&io->n->obj);
    io->n = NULL;
}

void irqobj_free(struct object *o)
{
    kfree(list_entry(o, struct irqobj, obj), sizeof(struct irqobj));
}

int64_t sys_irq_create(uint32_t root, uint64_t irq)
{
    struct handle_slot *sl;
    struct thread *t = current_thread();
    int err = handle_get(t->space, root, OBJ_ROOT, R_MANAGE, &sl);
    if (err)
        return err;
    if (irq < 16 || irq >= irq_chip()->lines)
        return -E_INVAL;
    if (irq == timer_irq() || irq_taken((unsigned)irq))
        return -E_BUSY;
    struct irqobj *io = obj_alloc(sizeof(*io), OBJ_INTERRUPT, t->space, &err);
    if (!io)
        return err;
    io->irq = (unsigned)irq;
    int64_t h = handle_alloc(t->space, &io->obj, R_ALL, 0);
    if (h > 0)
        irq_register(io->irq, fired, io);
    obj_unref(&io->obj);
    return h;
}

static struct irqobj *get(uint32_t h, int *err)
{
    struct handle_slot *sl;
    *err = handle_get(current_thread()->space, h, OBJ_INTERRUPT, R_MANAGE, &sl);
    return *err ? NULL : list_entry(sl->obj, struct irqobj, obj);
}

int64_t sys_irq_bind(uint32_t h, uint32_t n_h, uint64_t bits)
{
    int err;
    struct irqobj *io = get(h, &err);
    if (!io)
        return err;
    struct handle_slot *ns;
    if ((err = handle_get(current_thread()->space, n_h, OBJ_NOTIFICATION, R_WRITE, &ns)) != 0)
        return err;
    if (!(bits & 0x7fffffffffffffffull))
        return -E_INVAL;
    if (io->n)
        obj_unref(&io->n->obj);
    io->n = list_entry(ns->obj, struct notification, obj);
    obj_ref(&io->n->obj);
    io->bits = bits;
    io->cpu = this_cpu()->index;
    io->bound = true;
    io->masked = false;
    irq_enable(io->irq);
    return 0;
}

int64_t sys_irq_ack(uint32_t h)
{
    int err;
    struct irqobj *io = get(h, &err);
    if (!io)
        return err;
    if (!io->bound)
        return -E_STATE;
    if (io->irq < 32 && io->cpu != this_cpu()->index)
        return -E_STATE;
    if (io->masked) {
        io->masked = false;
        irq_enable_on(io->irq, io->cpu);
    }
    return 0;
}
