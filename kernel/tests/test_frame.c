/*
 * Frame allocator tests: sizes and alignment of 4 KiB, 64 KiB and 2 MiB
 * blocks, exhaustion and full coalescing, rejection of bad frees, and
 * all cores allocating at once without handing out a frame twice.
 */
#include "ktest.h"
#include "memory.h"
#include "cpu.h"
#include "irq.h"
#include "timer.h"

KTEST(frame_basic, "frame: 4K/64K/2M blocks are aligned, distinct and returned")
{
    uint64_t before = frame_free_pages();
    paddr_t a = frame_alloc(0), b = frame_alloc(0);
    paddr_t k64 = frame_alloc(FRAME_ORDER_64K), m2 = frame_alloc(FRAME_ORDER_2M);
    KT_CHECK(a != PADDR_INVALID && b != PADDR_INVALID && a != b, "two pages");
    KT_CHECK(IS_ALIGNED(a, 4096) && IS_ALIGNED(b, 4096), "page alignment");
    KT_CHECK(k64 != PADDR_INVALID && IS_ALIGNED(k64, KiB(64)), "64K block at 0x%lx", k64);
    KT_CHECK(m2 != PADDR_INVALID && IS_ALIGNED(m2, MiB(2)), "2M block at 0x%lx", m2);
    KT_CHECK(frame_free_pages() == before - 2 - 16 - 512, "free count after allocation");
    paddr_t z = frame_alloc_zeroed(0);
    uint64_t *p = phys_to_virt(z);
    bool zero = true;
    for (int i = 0; i < 512; i++)
        zero &= p[i] == 0;
    KT_CHECK(zero, "zeroed page is not zero");
    KT_CHECK(frame_free(a, 0) == 0 && frame_free(b, 0) == 0 && frame_free(z, 0) == 0, "free pages");
    KT_CHECK(frame_free(k64, FRAME_ORDER_64K) == 0 && frame_free(m2, FRAME_ORDER_2M) == 0, "free blocks");
    KT_CHECK(frame_free_pages() == before, "free count restored: %lu vs %lu", frame_free_pages(), before);
}

KTEST(frame_bad_free, "frame: double, misaligned, wrong-order and foreign frees are refused")
{
    uint64_t before = frame_free_pages();
    paddr_t a = frame_alloc(0), big = frame_alloc(FRAME_ORDER_64K);
    KT_CHECK(frame_free(a, 0) == 0, "first free");
    KT_CHECK(frame_free(a, 0) == -E_INVAL, "double free accepted");
    KT_CHECK(frame_free(big + 4096, 0) == -E_INVAL, "free of a block's interior accepted");
    KT_CHECK(frame_free(big, 0) == -E_INVAL, "free with the wrong order accepted");
    KT_CHECK(frame_free(big + 1, FRAME_ORDER_64K) == -E_INVAL, "misaligned free accepted");
    KT_CHECK(frame_free(0x1000, 0) == -E_INVAL, "free outside RAM accepted");
    KT_CHECK(frame_free(virt_to_phys(__kernel_start), 0) == -E_INVAL, "free of the kernel image accepted");
    KT_CHECK(frame_free(big, FRAME_MAX_ORDER + 1) == -E_INVAL, "order too large accepted");
    KT_CHECK(frame_alloc(FRAME_MAX_ORDER + 1) == PADDR_INVALID, "allocation above the largest order");
    KT_CHECK(frame_free(big, FRAME_ORDER_64K) == 0, "proper free");
    KT_CHECK(frame_free_pages() == before, "free count restored");
}

KTEST(frame_exhaust, "frame: all memory can be taken page by page and coalesces back")
{
    uint64_t before = frame_free_pages();
    unsigned big_before = frame_free_blocks(FRAME_MAX_ORDER);
    paddr_t head = PADDR_INVALID;
    uint64_t n = 0;
    for (;;) {
        paddr_t p = frame_alloc(0);
        if (p == PADDR_INVALID)
            break;
        *(paddr_t *)phys_to_virt(p) = head;     /* chain through the pages */
        head = p;
        n++;
    }
    KT_CHECK(n == before, "took %lu pages, %lu were free", n, before);
    KT_CHECK(frame_free_pages() == 0, "pages left after exhaustion");
    KT_CHECK(frame_alloc(FRAME_ORDER_2M) == PADDR_INVALID, "2M block from an empty allocator");
    uint64_t bad = 0;
    while (head != PADDR_INVALID) {
        paddr_t next = *(paddr_t *)phys_to_virt(head);
        bad += frame_free(head, 0) != 0;
        head = next;
    }
    KT_CHECK(bad == 0, "%lu frees failed", bad);
    KT_CHECK(frame_free_pages() == before, "free count restored");
    KT_CHECK(frame_free_blocks(FRAME_MAX_ORDER) == big_before, "2M blocks %u, were %u (coalescing)",
             frame_free_blocks(FRAME_MAX_ORDER), big_before);
}

#define PER_CPU 256
static paddr_t got[CONFIG_MAX_CPUS][PER_CPU];
static volatile uint32_t go, finished;

/* Each core: allocate pages, stamp them with its number, check, free. */
static void stress(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg;
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        ;
    for (int i = 0; i < PER_CPU; i++) {
        got[me][i] = frame_alloc(i % 3 == 0 ? 1 : 0);
        if (got[me][i] != PADDR_INVALID)
            memset(phys_to_virt(got[me][i]), (int)me + 1, 4096);
    }
    __atomic_fetch_add(&finished, 1, __ATOMIC_ACQ_REL);
}

KTEST(frame_smp_stress, "frame: all cores allocate at once, no frame handed out twice")
{
    uint64_t before = frame_free_pages();
    go = 0;
    finished = 0;
    unsigned n = smp_online_count();
    for (unsigned c = 1; c < n; c++) {
        cpus[c].work_done = 0;
        cpus[c].work_arg = (void *)(uintptr_t)c;
        __atomic_store_n(&cpus[c].work, stress, __ATOMIC_RELEASE);
        irq_send_ipi(c, IRQ_SGI_TEST);
    }
    timer_delay_us(1000);
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    stress((void *)0);
    uint64_t deadline = arch_counter() + 5 * arch_counter_freq();
    while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < n && arch_counter() < deadline)
        ;
    KT_CHECK(finished == n, "%u of %u cores finished", finished, n);
    unsigned wrong = 0, failed = 0;
    for (unsigned c = 0; c < n; c++)
        for (int i = 0; i < PER_CPU; i++) {
            if (got[c][i] == PADDR_INVALID) {
                failed++;
                continue;
            }
            const uint8_t *p = phys_to_virt(got[c][i]);
            wrong += p[0] != c + 1 || p[4095] != c + 1;
        }
    KT_CHECK(failed == 0, "%u allocations failed", failed);
    KT_CHECK(wrong == 0, "%u pages overwritten by another core (shared frame)", wrong);
    for (unsigned c = 0; c < n; c++)
        for (int i = 0; i < PER_CPU; i++)
            if (got[c][i] != PADDR_INVALID)
                KT_CHECK(frame_free(got[c][i], i % 3 == 0 ? 1 : 0) == 0, "free");
    KT_CHECK(frame_free_pages() == before, "free count restored");
    kprintf("# %u cores x %u allocations\n", n, PER_CPU);
}
