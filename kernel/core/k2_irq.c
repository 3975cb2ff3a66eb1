/*
 * K2's shared interrupts (docs/design/k2.md, "Shared interrupts"): every
 * shared interrupt is handled once, by main while its domain is awake and
 * by the shadow while it sleeps; one the shadow can handle itself never
 * wakes it.
 *
 * The strong domain sleeps ("inactive" in the paper) once all of main's
 * cores have had nothing to run for k2.inactive_ms (5,000 by default,
 * the paper's timeout); an idle main core then stops its tick, so only
 * a thread's timeout or an interrupt ends its wait. Falling asleep, main
 * retargets every enabled shared line (SPI) to the shadow's core; the
 * first main core that has work again, or a K2_CTL_WAKE, points them
 * back at the cores their drivers enabled them on. With the boot argument
 * k2.sleeps each sleep and wake-up is said on the console. Retargeting is one
 * write per line (GICD_ITARGETSR's byte, GICD_IROUTER), under hwspin
 * K2_HWSPIN_ROUTE with the state, so a line always targets exactly one
 * core of the domain the state names.
 *
 * The shadow takes what comes to it. A line it has a handler for (the
 * self tests' device; shadowed drivers later) it handles itself. A line
 * whose driver lives on main it disables, marks held and passes on with
 * K2_CTL_WAKE: main wakes, enables it again on its own core (an edge-
 * triggered line made pending again), and its driver takes it there:
 * taken once by the shadow's
 * interrupt controller interface, handled once by the driver. That is
 * the only way a shared interrupt wakes the strong domain, and it is
 * counted (wake_irq).
 *
 * For the energy model each domain's time is split: main's into active
 * (a core busy), idle (all idle, awake) and inactive (asleep); the
 * shadow's into active and idle (in WFI).
 */
#include "k2.h"
#include "arch.h"
#include "cpu.h"
#include "irq.h"
#include "kernel.h"
#include "timer.h"

static struct k2_route *const rt = &k2_shared.route;
static spinlock_t *const route_lock = &k2_hw.hwspin[K2_HWSPIN_ROUTE];

/* ------------------------------------------------------------ main kernel */

static bool started;                /* main: K2 runs and the shadow is up */
static uint64_t inactive_after;     /* counter ticks all cores idle before the domain sleeps */
static bool say;                    /* k2.sleeps: each sleep and wake-up on the console */
static uint8_t home[IRQ_MAX];       /* 1 + the core a line's driver enabled it on; 0: none */
static uint64_t idle_mask;          /* main cores in their idle loop (bit = index) */
static uint64_t main_mask;          /* main's cores */
static uint64_t all_idle_at;        /* when the last of them went idle */
static spinlock_t dom = SPINLOCK_INIT;
enum { ACTIVE, IDLE, ASLEEP };
static unsigned dom_state;          /* under dom: what the time since `dom_since` was */
static uint64_t dom_since;

static bool all_idle(void)
{
    return (__atomic_load_n(&idle_mask, __ATOMIC_ACQUIRE) & main_mask) == main_mask;
}

/* Under dom: the time since the last change goes to the state it was in. */
static void account(uint64_t now)
{
    uint64_t *bucket = dom_state == ACTIVE ? &rt->main_active : dom_state == IDLE ? &rt->main_idle
                                                                                   : &rt->main_inactive;
    *bucket += now - dom_since;
    dom_since = now;
    dom_state = READ_ONCE(rt->inactive) ? ASLEEP : all_idle() ? IDLE : ACTIVE;
}

void k2_irq_start(void)
{
    uint64_t ms = cmdline_get_u64("k2.inactive_ms", 5000);
    inactive_after = timer_ns_to_ticks(MIN(ms, 3600000ull) * 1000000ull);
    say = cmdline_has("k2.sleeps");
    main_mask = smp_online_mask();
    /* No thread runs yet: the other cores sit in the idle loop, and from
     * now on they say when they enter and leave it. */
    for (unsigned i = 0; i < ncpus_present; i++)
        if (main_mask >> i & 1 && READ_ONCE(cpus[i].idle))
            __atomic_or_fetch(&idle_mask, 1ull << i, __ATOMIC_RELAXED);
    uint64_t flags = spin_lock_irqsave(&dom);
    dom_since = arch_counter();
    dom_state = all_idle() ? IDLE : ACTIVE;
    all_idle_at = dom_since;
    rt->shadow_start = dom_since;
    rt->shadow_idle0 = READ_ONCE(rt->shadow_idle);
    WRITE_ONCE(started, true);
    spin_unlock_irqrestore(&dom, flags);
}

/* A self test's own timeout (counter ticks); the old one. */
uint64_t k2_irq_set_inactive_after(uint64_t ticks)
{
    uint64_t old = inactive_after;
    inactive_after = ticks;
    return old;
}

bool k2_tickless(void) { return !CONFIG_K2_SHADOW && READ_ONCE(started); }

/* irq_enable_on: remember the line's core; while the domain sleeps the
 * line goes to the shadow at once. */
void k2_irq_enabled(unsigned irq, unsigned cpu)
{
    if (CONFIG_K2_SHADOW || irq < 32 || irq >= IRQ_MAX)
        return;
    home[irq] = (uint8_t)(cpu + 1);
    if (!READ_ONCE(started))
        return;
    uint64_t flags = spin_lock_irqsave(route_lock);
    if (rt->inactive) {
        irq_chip()->route(irq, k2_shared.shadow_sgi_id);
        rt->to_shadow++;
    }
    spin_unlock_irqrestore(route_lock, flags);
}

/* irq_disable (a driver masking its line while it works, or gone): the
 * line is forgotten until it is enabled again, and one the shadow holds
 * stays off. Under the routing lock, so that a wake-up cannot enable it
 * meanwhile. True if the line was disabled here. */
bool k2_irq_disable(unsigned irq)
{
    if (CONFIG_K2_SHADOW || irq < 32 || irq >= IRQ_MAX)
        return false;
    home[irq] = 0;
    if (!READ_ONCE(started))
        return false;
    uint64_t flags = spin_lock_irqsave(route_lock);
    irq_chip()->disable(irq);
    rt->held[irq / 32] &= ~(1u << (irq % 32));
    spin_unlock_irqrestore(route_lock, flags);
    return true;
}

/* Fall asleep: every enabled shared line to the shadow. Interrupts
 * masked; the decision under dom, which a core leaving the idle loop
 * takes too (k2_idle_exit), so that the domain never sleeps with a core
 * at work. */
static bool sleep_domain(void)
{
    bool slept = false;
    const struct irqchip *chip = irq_chip();
    spin_lock(&dom);
    spin_lock(route_lock);
    uint64_t now = arch_counter();
    if (!rt->inactive && all_idle() && now >= all_idle_at + inactive_after) {
        for (unsigned irq = 32; irq < chip->lines; irq++) {
            if (home[irq] && chip->enabled(irq)) {
                chip->route(irq, k2_shared.shadow_sgi_id);
                rt->to_shadow++;
            }
        }
        account(now);
        WRITE_ONCE(rt->inactive, 1);
        dom_state = ASLEEP;
        rt->sleeps++;
        slept = true;
    }
    spin_unlock(route_lock);
    spin_unlock(&dom);
    return slept;
}

/* Under dom, interrupts masked: wake (or, awake, only take back what
 * the shadow held): each line to its own core again, the held ones
 * enabled there, an edge-triggered one made pending again (a level one
 * is still asserted by its device). The domain's idle time starts again
 * now, or it would fall asleep at once. */
static bool wake_locked(bool by_irq)
{
    const struct irqchip *chip = irq_chip();
    spin_lock(route_lock);
    bool was = rt->inactive, any_held = false;
    for (unsigned w = 0; w < K2_IRQ_WORDS && !was && !any_held; w++)
        any_held = rt->held[w] != 0;
    if (!was && !any_held) {
        spin_unlock(route_lock);
        return false;
    }
    if (was) {
        uint64_t now = arch_counter();
        account(now);
        all_idle_at = now;
        WRITE_ONCE(rt->inactive, 0);
        rt->wakeups++;
        rt->wake_irq += by_irq;
    }
    for (unsigned irq = 32; irq < chip->lines; irq++) {
        bool held = rt->held[irq / 32] >> (irq % 32) & 1;
        if (!home[irq] || (!held && !(was && chip->enabled(irq))))
            continue;
        chip->enable(irq, home[irq] - 1u);      /* target, then enable */
        rt->to_main += was;
        if (held) {
            rt->held[irq / 32] &= ~(1u << (irq % 32));
            if (chip->edge(irq))
                chip->pend(irq);
        }
    }
    spin_unlock(route_lock);
    return was;
}

/* Wake the domain, for a shared interrupt the shadow held or for work. */
static void wake(bool by_irq)
{
    uint64_t flags = spin_lock_irqsave(&dom);
    bool woke = wake_locked(by_irq);
    account(arch_counter());
    spin_unlock_irqrestore(&dom, flags);
    if (woke && say)
        kprintf("k2: the strong domain wakes (%s)\n", by_irq ? "a shared interrupt" : "work");
}

void k2_wake(void)
{
    if (!CONFIG_K2_SHADOW && READ_ONCE(started))
        wake(true);
}

/* sched_idle: this core has nothing to run. */
void k2_idle_enter(void)
{
    if (!READ_ONCE(started))
        return;                     /* nothing shared on this path without K2 */
    uint64_t now = __atomic_or_fetch(&idle_mask, 1ull << this_cpu()->index, __ATOMIC_ACQ_REL);
    if ((now & main_mask) != main_mask)
        return;
    uint64_t flags = spin_lock_irqsave(&dom);
    all_idle_at = arch_counter();
    account(all_idle_at);
    spin_unlock_irqrestore(&dom, flags);
}

/* This core has work: the first of the domain's cores to have some ends
 * its idle time, and its sleep. */
void k2_idle_exit(void)
{
    if (!READ_ONCE(started))
        return;
    uint64_t was = __atomic_fetch_and(&idle_mask, ~(1ull << this_cpu()->index), __ATOMIC_ACQ_REL);
    if (READ_ONCE(rt->inactive) || (was & main_mask) == main_mask)
        wake(false);
    timer_idle_end();               /* the tick again, the periods missed counted */
}

/* Before each wait for interrupt of an idle core (interrupts masked):
 * the domain falls asleep when its time has come, and the core's timer
 * is set for its next real deadline only. */
void k2_idle_wait(void)
{
    if (!READ_ONCE(started))
        return;
    if (!READ_ONCE(rt->inactive) && all_idle() && arch_counter() >= all_idle_at + inactive_after &&
        sleep_domain() && say)
        kprintf("k2: the strong domain sleeps\n");
    timer_rearm();
}

/* After it: a main core that woke while its domain sleeps is counted. */
void k2_idle_woke(void)
{
    if (READ_ONCE(started) && READ_ONCE(rt->inactive))
        __atomic_add_fetch(&rt->inactive_irqs, 1, __ATOMIC_RELAXED);
}

/* timer_rearm: an idle core of an awake domain looks again when the
 * domain is due to sleep. Once due, not from the timer's own interrupt
 * (it would come back at once, forever): the idle loop, right after
 * it, puts the domain to sleep. */
uint64_t k2_idle_timer(void)
{
    if (!READ_ONCE(started) || !this_cpu()->idle || READ_ONCE(rt->inactive) || !all_idle())
        return ~0ull;
    uint64_t due = all_idle_at + inactive_after;
    return due > arch_counter() ? due : ~0ull;
}

static uint64_t ticks_us(uint64_t t) { return t * 1000000 / arch_counter_freq(); }

void k2_irq_report(void)
{
    if (!READ_ONCE(started))
        return;
    uint64_t flags = spin_lock_irqsave(&dom);
    uint64_t now = arch_counter();
    account(now);
    kprintf("k2: strong domain: %lu sleeps, %lu wake-ups (%lu by a shared interrupt), %lu interrupts taken "
            "asleep; active %lu us, idle %lu us, asleep %lu us\n", rt->sleeps, rt->wakeups, rt->wake_irq,
            rt->inactive_irqs, ticks_us(rt->main_active), ticks_us(rt->main_idle), ticks_us(rt->main_inactive));
    uint64_t shadow_all = now - rt->shadow_start, shadow_idle = READ_ONCE(rt->shadow_idle) - rt->shadow_idle0;
    kprintf("k2: weak domain: %lu shared interrupts held for main; active %lu us, idle %lu us; "
            "%lu line moves to the shadow, %lu back\n", rt->passed,
            ticks_us(shadow_all > shadow_idle ? shadow_all - shadow_idle : 0), ticks_us(shadow_idle),
            rt->to_shadow, rt->to_main);
    spin_unlock_irqrestore(&dom, flags);
}

/* ---------------------------------------------------------- shadow kernel */

/* A shared line came to the shadow with no handler here: its driver is
 * main's. Disable it, hold it, and wake main for it. */
bool k2_irq_pass(unsigned irq)
{
    if (!CONFIG_K2_SHADOW || irq < 32 || irq >= IRQ_MAX)
        return false;
    spin_lock(route_lock);
    irq_chip()->disable(irq);
    rt->held[irq / 32] |= 1u << (irq % 32);
    rt->passed++;
    spin_unlock(route_lock);
    k2_send(K2_CTL, k2_ctl(K2_CTL_WAKE, irq));
    return true;
}

/* Back from the shadow's wait for interrupt: the time in it was idle. */
void k2_shadow_idle(uint64_t slept)
{
    __atomic_add_fetch(&rt->shadow_idle, slept, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------- the self tests */

/* The self tests' device line, in both kernels: which kernel took it,
 * and whether that was the one the domain's state names. */
void k2_irq_test_handler(unsigned irq UNUSED, void *arg UNUSED)
{
    bool asleep = READ_ONCE(rt->inactive);
    if (CONFIG_K2_SHADOW) {
        __atomic_add_fetch(&rt->test_shadow, 1, __ATOMIC_RELEASE);
        if (!asleep)
            __atomic_add_fetch(&rt->test_wrong, 1, __ATOMIC_RELAXED);
    } else {
        rt->test_cpu = this_cpu()->index;
        __atomic_add_fetch(&rt->test_main, 1, __ATOMIC_RELEASE);
        if (asleep)
            __atomic_add_fetch(&rt->test_wrong, 1, __ATOMIC_RELAXED);
    }
}

static uint64_t test_taken(void)
{
    return __atomic_load_n(&rt->test_main, __ATOMIC_ACQUIRE) + __atomic_load_n(&rt->test_shadow, __ATOMIC_ACQUIRE);
}

/* Raise the line test_n times, each after the last was taken and
 * test_n2 us later (the first; the others test_gap_next us, if set);
 * before each, check that the line targets one core of the domain the
 * state names. */
static void raise(unsigned line, uint64_t n, uint64_t gap_us)
{
    const struct irqchip *chip = irq_chip();
    uint64_t next_us = READ_ONCE(rt->test_gap_next);
    for (uint64_t i = 0; i < n; i++, gap_us = next_us ? next_us : gap_us) {
        uint64_t deadline = arch_counter() + arch_counter_freq();
        while (test_taken() < rt->test_raised && arch_counter() < deadline)
            arch_cpu_relax();
        rt->test_late += test_taken() < rt->test_raised;
        timer_delay_us(gap_us);
        uint64_t flags = spin_lock_irqsave(route_lock);
        uint64_t t = chip->target(line);
        bool to_shadow = t == k2_shared.shadow_sgi_id;
        if (t == ~0ull || to_shadow != (rt->inactive != 0))
            rt->bad++;
        rt->test_raised++;
        chip->pend(line);
        spin_unlock_irqrestore(route_lock, flags);
    }
    uint64_t deadline = arch_counter() + arch_counter_freq();
    while (test_taken() < rt->test_raised && arch_counter() < deadline)
        arch_cpu_relax();
    rt->test_late += test_taken() < rt->test_raised;
}

void k2_irq_job(unsigned kind)
{
    unsigned line = (unsigned)READ_ONCE(k2_shared.test_arg);
    if (kind == K2_IJ_ATTACH)
        irq_register_lockless(line, k2_irq_test_handler, NULL);
    else if (kind == K2_IJ_DETACH)
        irq_unregister(line);
    else if (kind == K2_IJ_RAISE)
        raise(line, READ_ONCE(k2_shared.test_n), READ_ONCE(rt->test_n2));
}
