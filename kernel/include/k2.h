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
 *               .k2shared: shared objects), then the main kernel's frames
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
    K2_MEMCTL = 5,          /* balloons, remote free (not yet used) */
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

/* .k2hw: what stands for the SoC's mailbox and spinlock hardware. */
struct k2_hw {
    struct k2_ring ring[2];
    spinlock_t hwspin[K2_HWSPINS];
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

#endif
