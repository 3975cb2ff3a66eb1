/* Interrupts for user-level drivers: the EL1 physical timer (PPI 30),
 * which EL0 may program, delivered through an interrupt object bound to
 * a notification, acknowledged, delivered again. */
#include "coretest.h"

#define TIMER_IRQ 30

static void arm_timer(uint64_t ticks)
{
    __asm__ volatile("msr cntp_tval_el0, %0; msr cntp_ctl_el0, %1; isb" :: "r"(ticks), "r"(1ull) : "memory");
}

static uint64_t timer_status(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, cntp_ctl_el0" : "=r"(v));
    return v;
}

static void disarm_timer(void)
{
    __asm__ volatile("msr cntp_ctl_el0, %0; isb" :: "r"(0ull) : "memory");
}

static volatile int64_t remote_ack;

static void ack_elsewhere(void *arg)
{
    remote_ack = sys_irq_ack((uint32_t)(uintptr_t)arg);
}

void test_irq(void)
{
    uint64_t freq;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(freq));
    sys_thread_set_affinity(self_thread(), 0);
    int64_t irq = sys_irq_create(root_handle(), TIMER_IRQ);
    uint32_t n = (uint32_t)sys_notify_create();
    int64_t bind = irq > 0 ? sys_irq_bind((uint32_t)irq, n, 0x10) : irq;
    bool ok = bind == 0;
    uint64_t status = 0;
    for (int round = 0; ok && round < 3; round++) {
        arm_timer(freq / 200);                     /* 5 ms */
        int64_t bits = sys_notify_wait(n);
        status = timer_status();
        disarm_timer();                            /* the device stops asserting the line */
        ok = bits == 0x10 && (status & 4) && sys_irq_ack((uint32_t)irq) == 0;
    }
    tap_ok(ok, "irq: a device interrupt reaches a user-level driver three times (ack unmasks)");
    tap_ok(sys_irq_create(root_handle(), 27) == -E_BUSY && sys_irq_create(root_handle(), TIMER_IRQ) == -E_BUSY,
           "irq: the kernel's timer and a taken line are refused");
    tap_ok(sys_irq_create(root_handle(), 3) == -E_INVAL && sys_irq_create(root_handle(), 100000) == -E_INVAL,
           "irq: inter-processor and nonexistent lines are refused");
    if (ncpus > 1) {
        remote_ack = 1;
        thread_spawn(ack_elsewhere, (void *)(uintptr_t)irq, 150, 1);
        for (int i = 0; i < 100 && remote_ack == 1; i++)
            sleep_ms(1);
        tap_ok(remote_ack == -E_STATE, "irq: a per-core line is acknowledged on its own core only");
    }
    sys_handle_close((uint32_t)irq);
    int64_t again = sys_irq_create(root_handle(), TIMER_IRQ);
    tap_ok(again > 0, "irq: closing the interrupt object frees the line");
    sys_handle_close((uint32_t)again);
    sys_handle_close(n);
}
