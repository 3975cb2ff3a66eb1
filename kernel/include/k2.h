/*
 * K2 (docs/design/k2.md): two kernels built from this one tree share one
 * machine. The main kernel (the usual build) runs on the strong domain's
 * cores and keeps the platform; the shadow kernel (the build's second
 * pass, CONFIG_K2_SHADOW) runs on the weak domain's core. Both use the
 * same direct map (VA = KERNEL_VA_BASE + PA), so an object has one
 * address in both; each keeps its code and private statics in a local
 * region of its own that the other does not map.
 *
 * Physical layout on QEMU virt (fixed: the shadow is linked for it):
 *
 *   0x40000000  main local region (16 MiB): QEMU loads the main kernel at +0x80000
 *   0x41000000  shadow local region (16 MiB): the shadow kernel's image, then its frames
 *   0x42000000  global region, to the end of RAM: first K2's shared statics
 *               (.k2hw: mailbox rings and hardware spinlock words, 64 KiB;
 *               .k2shared: shared objects), the DSM area at 0x42200000,
 *               main's frames from 0x42600000, then from 0x43000000 the
 *               balloon pool: 16 MiB blocks that either kernel's balloon
 *               lets go of (deflate) to its allocator or takes back
 *               (inflate), main's from the pool's start up, the
 *               shadow's from its end down (k2_mem.c)
 *
 * The mailbox carries 32-bit messages as OMAP4's hardware mailbox did in
 * the paper: a 20-bit page frame number, a 3-bit type, a 9-bit sequence
 * number, in order, over a ring of K2_RING_SLOTS in each direction.
 */
#ifndef PETREL_K2_H
#define PETREL_K2_H

#include "types.h"
#include "spinlock.h"

#define K2_MAIN_LOCAL_PA    0x40000000ul
#define K2_SHADOW_LOCAL_PA  0x41000000ul
#define K2_LOCAL_SIZE       (16ul << 20)
#define K2_GLOBAL_PA        0x42000000ul
#define K2_STATICS_SIZE     (128ul << 10)   /* .k2hw and .k2shared (kernel.ld) */
#define K2_DSM_PA           (K2_GLOBAL_PA + (2ul << 20))    /* the DSM area (k2_dsm.c) */
#define K2_DSM_SIZE         (4ul << 20)
#define K2_DSM_PAGES        (K2_DSM_SIZE / 4096)
#define K2_POOL_PA          0x43000000ul
#define K2_BLOCK_SIZE       (16ul << 20)
#define K2_BLOCK_PAGES      (K2_BLOCK_SIZE / 4096)
#define K2_MAX_RAM          (2ul << 30)     /* each kernel's frame descriptors (8 MiB) fit its local region */
#define K2_MAX_BLOCKS       128

/* Message: [31:12] page frame number, [11:9] type, [8:0] sequence number. */
#define K2_PFN_BITS     20
#define K2_PFN_MAX      ((1u << K2_PFN_BITS) - 1)
#define K2_SEQ_MOD      512u

enum k2_type {
    K2_GET_EXCL = 0,        /* the DSM's requests (not yet used) */
    K2_PUT_EXCL = 1,
    K2_SUSPEND_NW = 2,      /* NightWatch threads (not yet used) */
    K2_ACK_SUSPEND_NW = 3,
    K2_RESUME_NW = 4,
    K2_MEMCTL = 5,          /* memory: payload [19:16] an operation (enum k2_memctl), [15:0] its argument */
    K2_PTUPDATE = 6,        /* device mappings (not yet used) */
    K2_CTL = 7,             /* control: payload [19:16] an operation, [15:0] its argument */
};

/* The DSM pages the self tests use (kernel/tests/test_k2.c). */
#define K2_SB_X         8
#define K2_SB_Y         600
#define K2_CROSS_P      16
#define K2_CROSS_Q      17

enum k2_ctl {
    K2_CTL_HELLO = 1,       /* shadow -> main: up and serving */
    K2_CTL_PING = 2,        /* main -> shadow: answer with PONG and the same argument */
    K2_CTL_PONG = 3,
    K2_CTL_DATA = 4,        /* a numbered message of a flood: argument = its number mod 2^16 */
    K2_CTL_FLOOD = 5,       /* main -> shadow: send test_n DATA while receiving as many */
    K2_CTL_COUNT = 6,       /* main -> shadow: add 1 to counter test_n times under a hardware spinlock */
    K2_CTL_DONE = 7,        /* shadow -> main: the job asked for is finished */
    K2_CTL_DSM_COUNT = 8,   /* main -> shadow: add 1 to DSM page 0's first word test_n times under a hardware spinlock */
    K2_CTL_SB = 9,          /* main -> shadow: test_n rounds of the store-buffering litmus test (k2_shared.sb_*) */
    K2_CTL_CROSS = 10,      /* main -> shadow: test_n rounds of writing DSM pages 17 and 16 while main writes 16 and 17 */
    K2_CTL_TOUCH = 11,      /* main -> shadow: write the first word of DSM pages `argument`.. (test_n of them, or 1) */
    K2_CTL_FREEZE = 12,     /* main -> shadow: report your DSM pages and wait for k2_shared.thaw (k2_dsm_audit) */
    K2_CTL_READ = 13,       /* main -> shadow: read DSM pages `argument`.. (test_n of them); time the faults */
    K2_CTL_JOB = 14,        /* main -> shadow: a job (enum k2_memjob, enum k2_irqjob) with test_n and test_arg */
    K2_CTL_WAKE = 15,       /* shadow -> main: the strong domain sleeps and a shared interrupt of its drivers came */
};

enum k2_memctl {
    K2_MEMCTL_FREES = 1,    /* frames of yours wait in the free queue to you */
    K2_MEMCTL_RECLAIM = 2,  /* my balloon is empty and I am short: inflate a block if you can spare one */
    K2_MEMCTL_RECLAIMED = 3,/* argument 1: a block went back to the balloon; 0: none */
};

enum k2_memjob {            /* the shadow's memory jobs (k2_mem.c), for tests and the bench */
    K2_MJ_DEFLATE = 1,      /* deflate test_n blocks; their indexes in test_blocks */
    K2_MJ_INFLATE = 2,      /* inflate test_n blocks; their indexes in test_blocks */
    K2_MJ_CHURN = 3,        /* test_n allocations and frees of order test_arg */
    K2_MJ_GRAB = 4,         /* allocate test_n (<= K2_GRAB) frames of order test_arg into grab[] */
    K2_MJ_FREE = 5,         /* free the test_n frames of order test_arg in grab[] (main's: remote frees) */
    K2_MJ_FILL = 6,         /* allocate test_n pages, one at a time, holding them; then free them all */
    K2_MJ_TIME = 7,         /* K2_TIME_ROUNDS x: time test_n allocations of order test_arg, then their frees */
};
enum k2_irqjob {            /* the shadow's interrupt jobs (k2_irq.c), for tests */
    K2_IJ_FIRST = 16,
    K2_IJ_ATTACH = 16,      /* handle line test_arg here too (the self tests' device) */
    K2_IJ_DETACH = 17,
    K2_IJ_RAISE = 18,       /* raise line test_arg test_n times, each after the last was handled, test_n2 us apart */
};
#define K2_GRAB         64
#define K2_TIME_ROUNDS  8

/* The remote-free queue to one kernel: frames of its allocator the other
 * freed, as pa | order, single producer (under the sender's lock), single
 * consumer (the owner, when told by K2_MEMCTL_FREES). */
#define K2_FREEQ_SLOTS  256
struct k2_freeq {
    uint32_t tail;
    uint32_t pad0[15];
    uint32_t head;
    uint32_t pad1[15];
    uint64_t slot[K2_FREEQ_SLOTS];
};

/* What each kernel's memory manager publishes (k2_shared.mem[role]). */
struct k2_mem_stats {
    uint64_t deflates, inflates, inflate_busy;  /* balloon operations */
    uint64_t sync_deflates;         /* deflates an allocation had to wait for (the probe was late) */
    uint64_t probes;                /* allocations that found free pages below the low mark */
    uint64_t reclaims_asked, reclaims_given;
    uint64_t remote_frees, remote_drained, remote_bad;
    uint64_t free_pages, managed_pages;     /* as of the last publish */
    uint64_t deflate_ticks, inflate_ticks;  /* counter ticks the balloon operations took */
};

static inline uint32_t k2_msg(uint32_t pfn, unsigned type, unsigned seq)
{
    return (pfn & K2_PFN_MAX) << 12 | (type & 7u) << 9 | (seq % K2_SEQ_MOD);
}
static inline uint32_t k2_msg_pfn(uint32_t m) { return m >> 12; }
static inline unsigned k2_msg_type(uint32_t m) { return (m >> 9) & 7u; }
static inline unsigned k2_msg_seq(uint32_t m) { return m & 511u; }
static inline uint32_t k2_ctl(unsigned op, unsigned arg) { return (uint32_t)(op & 15u) << 16 | (arg & 0xffffu); }

/* One direction of the mailbox: single producer (the sending kernel, under
 * its own lock), single consumer. Free-running indices; the sender owns
 * tail, the receiver head, each on a cache line of its own. */
#define K2_RING_SLOTS   4           /* OMAP4's mailbox FIFO depth */
struct k2_ring {
    uint32_t tail;
    uint32_t pad0[15];
    uint32_t head;
    uint32_t pad1[15];
    uint32_t slot[K2_RING_SLOTS];
    uint32_t pad2[16 - K2_RING_SLOTS];
};

#define K2_TO_SHADOW    0
#define K2_TO_MAIN      1
#define K2_HWSPINS      32          /* OMAP4 has 32 hardware spinlocks */
#define K2_HWSPIN_CONSOLE 0         /* one console line at a time, from either kernel */
#define K2_HWSPIN_TEST  1
#define K2_HWSPIN_POOL  2           /* the pool's ownership counts */
#define K2_HWSPIN_ROUTE 3           /* the shared interrupts' routing and the strong domain's state */

/* .k2hw: what stands for the SoC's mailbox and spinlock hardware. */
struct k2_hw {
    struct k2_ring ring[2];
    spinlock_t hwspin[K2_HWSPINS];
};

/* Shared interrupts and the strong domain's sleep (k2_irq.c), under
 * hwspin K2_HWSPIN_ROUTE. Times in counter ticks. */
#define K2_IRQ_WORDS    32          /* IRQ_MAX / 32 */
struct k2_route {
    uint32_t inactive;              /* the strong domain sleeps: every shared line targets the shadow */
    uint32_t held[K2_IRQ_WORDS];    /* lines the shadow took for main's drivers, disabled until main wakes */
    uint64_t to_shadow, to_main;    /* lines retargeted each way */
    uint64_t sleeps, wakeups;       /* the strong domain's transitions */
    uint64_t wake_irq;              /* wake-ups a shared interrupt caused (held lines) */
    uint64_t passed;                /* shared interrupts the shadow took and held for main */
    uint64_t inactive_irqs;         /* interrupts a main core took while its domain slept */
    uint64_t bad;                   /* an enabled line found targeting the wrong domain, or none */
    /* time per domain, for the energy model */
    uint64_t main_active, main_idle, main_inactive;     /* some core busy; all idle; asleep */
    uint64_t shadow_start, shadow_idle, shadow_idle0;  /* the shadow's active time: since main's start, less idle */
    /* the self tests' device line (K2_IJ_*) */
    uint32_t test_line;
    uint64_t test_raised, test_main, test_shadow, test_wrong;
    uint64_t test_late;             /* raises not taken within a second */
    uint64_t test_n2, test_gap_next;    /* the first raise's gap (us), the others' (0: the same) */
    uint64_t test_cpu;              /* the main core that took the line last */
};

/* .k2shared: the boot block and the shared objects. */
struct k2_shared {
    uint64_t shadow_hwid;           /* main -> shadow, before CPU_ON */
    uint64_t main_sgi_id;           /* the main kernel's doorbell core */
    uint64_t shadow_sgi_id;         /* shadow -> main, before HELLO */
    uint64_t shadow_free_kib;       /* the shadow's frames, at HELLO */
    uint64_t shadow_managed_kib;
    uint64_t shadow_main_mapped;    /* pages of main's local region the shadow maps (0) */
    /* self tests (ktest k2) */
    uint64_t test_n;
    uint64_t counter;               /* under hwspin K2_HWSPIN_TEST */
    uint64_t shadow_data_rx, shadow_data_bad, shadow_full_waits, shadow_seq_bad;
    uint64_t sb_round, sb_ready, sb_done, sb_r2;    /* the litmus and crossed tests' start and rounds */
    uint64_t shadow_dsm_faults, shadow_fault_ticks;
    /* the DSM audit: the frozen shadow's Valid pages and disagreements */
    uint32_t frozen, thaw;
    uint64_t audit_bad;
    uint8_t audit_valid[K2_DSM_PAGES / 8];
    /* memory (k2_mem.c): the pool's blocks, main's from the start, the
     * shadow's from the end (under hwspin K2_HWSPIN_POOL) */
    uint32_t pool_blocks, main_blocks, shadow_blocks, main_floor;
    struct k2_mem_stats mem[2];     /* [0] main, [1] shadow */
    struct k2_freeq freeq[2];       /* [K2_TO_SHADOW], [K2_TO_MAIN] */
    uint64_t test_arg, test_blocks[16], test_ticks[2], test_fail;
    uint64_t grab[K2_GRAB];
    struct k2_route route;
};

extern struct k2_hw k2_hw;
extern struct k2_shared k2_shared;

void console_share_lock(spinlock_t *l);     /* printk.c: console lines under this lock from now on */

/* Main kernel. */
void k2_layout(void);               /* after mem_discover, before the console: K2's regions, with `k2` */
void k2_cores(void);                /* after smp_discover: the shadow's core leaves main's list */
void k2_start(void);                /* after the secondaries: start the shadow, wait for HELLO */
bool k2_on(void);                   /* the shadow kernel runs beside this one */
void k2_shutdown_report(void);      /* before power-off */

/* Shadow kernel: everything from the boot stub on. */
NORETURN void k2_shadow_main(paddr_t dtb_pa);
void boot_cpu_and_tree(paddr_t dtb_pa);     /* main.c: both kernels' first steps */

/* Both. */
void k2_send(unsigned type, uint32_t pfn);  /* spins while the ring is full, handling what arrives */
void k2_send_nohandle(unsigned type, uint32_t pfn); /* ... only taking in what arrives */
bool k2_handling_here(void);        /* this core is in a message's handler */
void k2_poll(void);                 /* take and handle what arrived */
void k2_pull(void);                 /* only move what arrived into the inbox */
struct k2_stats {
    uint64_t sent, received, full_waits, seq_bad, doorbells;
    uint64_t pongs, data_rx, data_bad, done, hello;
    uint64_t last_pong, pong_bad;
};
const struct k2_stats *k2_stats(void);
void k2_reset_test_counts(void);
uint64_t k2_ping(unsigned n);       /* main: n round trips; the counter ticks they took */
NORETURN void k2_bench(void);       /* main, boot argument k2.bench: the k2 suite's rows, then power off */
uint64_t k2_pages_mapped(paddr_t base, uint64_t size);  /* pages of that range this kernel maps */

/* The DSM (k2_dsm.c). */
struct k2_dsm_stats {
    uint64_t faults, fault_ticks;   /* this kernel's accesses that waited for a page, and how long */
    uint64_t puts_sent, puts_got, lines, splits;
    uint64_t owed;                  /* requests answered only after the page's hold */
};
struct k2_audit {
    unsigned both;                  /* pages Valid in both kernels: must be 0 */
    unsigned main_bad, shadow_bad;  /* pages whose mapping disagrees with their state */
    unsigned main_valid, shadow_valid;
};
int k2_dsm_init_main(void);
int k2_dsm_init_shadow(void);
bool k2_dsm_fault(uint64_t far, uint64_t esr);  /* exc_el1_sync: true if resolved */
void k2_dsm_get(uint32_t pfn);
void k2_dsm_put(uint32_t pfn);
void k2_dsm_freeze(void);
void k2_dsm_poll(void);             /* answer requests owed (k2_poll) */
void k2_tick(void);                 /* the timer tick, lockless: whatever waits in the mailbox */
uint64_t k2_timer_next(void);       /* the counter value a request owed may be answered at, or ~0 */
struct k2_audit k2_dsm_audit(void);
void *k2_dsm_page(unsigned i);
bool k2_dsm_is_block(unsigned i);
const struct k2_dsm_stats *k2_dsm_stats(void);

/* Shared interrupts (k2_irq.c). */
void k2_irq_start(void);            /* main, once the shadow is up: the strong domain may sleep */
void k2_irq_enabled(unsigned irq, unsigned cpu);   /* main: a line was enabled on that core */
bool k2_irq_disable(unsigned irq);  /* main: disable a line (true), held or not */
void k2_idle_enter(void);           /* main: this core has nothing to run (sched_idle) */
void k2_idle_wait(void);            /* main: before a wait for interrupt in the idle loop */
void k2_idle_woke(void);            /* main: after it */
void k2_idle_exit(void);            /* main: this core has work again */
uint64_t k2_idle_timer(void);       /* main: when this idle core should look at the domain again, or ~0 */
bool k2_tickless(void);             /* main: an idle core stops its tick */
void k2_wake(void);                 /* main: a K2_CTL_WAKE came */
bool k2_irq_pass(unsigned irq);     /* shadow: a shared line with no handler here: held for main */
void k2_irq_job(unsigned kind);     /* shadow: a K2_IJ_* job */
void k2_shadow_idle(uint64_t slept);    /* shadow: back from its wait for interrupt, counter ticks in it */
void k2_irq_report(void);           /* main, at power-off */
void k2_irq_test_handler(unsigned irq, void *arg);     /* the self tests' device line, in both */
uint64_t k2_irq_set_inactive_after(uint64_t ticks);    /* main, self tests: the domain's timeout; the old one */

/* Memory (k2_mem.c): balloons, the pressure probe, remote frees. */
void k2_mem_layout(void);           /* main, in k2_layout: withhold the pool */
void k2_mem_boot(void);             /* main, after frame_init: deflate its first blocks */
void k2_mem_off(void);              /* main, K2 given up: every block to main */
int k2_mem_init_shadow(void);       /* shadow, before frame_init */
void k2_mem_start(void);            /* both, once the mailbox runs: probes and remote frees on */
int k2_balloon_deflate(void);       /* the block now this kernel's, or -E_NOMEM */
int k2_balloon_inflate(void);       /* the block given back, -E_NOMEM (none to give), -E_BUSY */
void k2_mem_pressure(void);         /* frame_alloc: below the low mark */
bool k2_mem_deflate_now(void);      /* frame_alloc: nothing left; true if a block came in */
bool k2_mem_remote(paddr_t pa);     /* frame_free: the other kernel's frame? */
int k2_mem_free_remote(paddr_t pa, unsigned order);
void k2_mem_handle(unsigned op, unsigned arg);  /* a K2_MEMCTL message */
void k2_mem_poll(void);             /* k2_poll: the probe's deflate, in the background */
bool k2_mem_pending(void);          /* k2_poll: the probe rang */
void k2_mem_tick(void);             /* k2_tick: a probe that could not act tries again */
void k2_mem_publish(void);          /* k2_shared.mem[this kernel] up to date */
void k2_mem_job(unsigned kind);     /* shadow: a K2_CTL_JOB */
struct k2_mem_stats *k2_mem_mine(void);
unsigned k2_mem_block_of(paddr_t pa);       /* the pool block holding pa, or K2_MAX_BLOCKS */
paddr_t k2_mem_block_pa(unsigned b);
uint64_t k2_mem_time_allocs(paddr_t *pa, unsigned n, unsigned order, uint64_t *free_ticks, uint64_t *fail);

#endif
