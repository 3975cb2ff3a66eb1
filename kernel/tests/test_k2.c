/*
 * K2's mailbox (core/k2.c): the message format on its own, and, when the
 * shadow kernel runs beside this one (boot argument k2), round trips, a
 * flood each way at once through the four-slot rings, and a counter both
 * kernels add to under a hardware spinlock. Run with `ktest=k2` (the
 * k2/mailbox cases of tests/guest/cases.toml); k2.n sets the flood's
 * length (default 1,000,000 each way).
 */
#include "ktest.h"
#include "k2.h"
#include "space.h"

KTEST(k2_formats, "k2: messages keep a 20-bit frame number, a 3-bit type and a 9-bit sequence number")
{
    static const uint32_t pfns[] = { 0, 1, 0x12345, K2_PFN_MAX - 1, K2_PFN_MAX };
    unsigned bad = 0, n = 0;
    for (unsigned p = 0; p < ARRAY_SIZE(pfns); p++)
        for (unsigned type = 0; type < 8; type++)
            for (unsigned seq = 0; seq < 2 * K2_SEQ_MOD; seq += 7) {
                uint32_t m = k2_msg(pfns[p], type, seq);
                bad += k2_msg_pfn(m) != pfns[p] || k2_msg_type(m) != type || k2_msg_seq(m) != seq % K2_SEQ_MOD;
                n++;
            }
    KT_CHECK(bad == 0, "%u of %u messages decoded wrong", bad, n);
    KT_CHECK(k2_msg_seq(k2_msg(0, 0, 511)) == 511 && k2_msg_seq(k2_msg(0, 0, 512)) == 0, "sequence 511 -> 0");
    KT_CHECK(k2_msg(K2_PFN_MAX, 7, 511) == 0xffffffffu && k2_msg(0, 0, 0) == 0, "all ones and all zeros");
    KT_CHECK(k2_msg_pfn(k2_msg(K2_PFN_MAX + 1, 0, 0)) == 0, "a frame number past 20 bits is cut, not spilled");
    KT_CHECK(k2_msg_type(k2_msg(0, 8, 0)) == 0 && k2_msg_seq(k2_msg(0, 7, 0)) == 0, "no field spills into another");
}

/* Wait until *word reaches want, handling the mailbox; false after 60 s. */
static bool wait_for(const uint64_t *word, uint64_t want)
{
    uint64_t deadline = arch_counter() + 60 * arch_counter_freq();
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < want) {
        if (arch_counter() > deadline)
            return false;
        k2_poll();
        arch_cpu_relax();
    }
    return true;
}

KTEST(k2_roundtrip, "k2: round trips to the shadow kernel")
{
    if (!k2_on()) {
        ktest_result(true, "# SKIP no shadow kernel (boot argument k2)");
        return;
    }
    k2_reset_test_counts();
    unsigned n = 10000;
    uint64_t ticks = k2_ping(n);
    KT_CHECK(k2_stats()->pongs == n, "%lu answers to %u pings", k2_stats()->pongs, n);
    kprintf("# %u round trips, %lu ns each\n", n, ticks * 1000000000 / arch_counter_freq() / n);
}

KTEST(k2_flood, "k2: a flood each way at once: nothing lost, repeated or reordered, the rings fill")
{
    if (!k2_on()) {
        ktest_result(true, "# SKIP no shadow kernel (boot argument k2)");
        return;
    }
    const struct k2_stats *st = k2_stats();
    uint64_t n = cmdline_get_u64("k2.n", 1000000);
    uint64_t full0 = st->full_waits, seq0 = st->seq_bad, sent0 = st->sent, rx0 = st->received;
    k2_reset_test_counts();
    k2_shared.test_n = n;
    k2_send(K2_CTL, k2_ctl(K2_CTL_FLOOD, 0));
    for (uint64_t i = 0; i < n; i++)
        k2_send(K2_CTL, k2_ctl(K2_CTL_DATA, (unsigned)i));
    KT_CHECK(wait_for(&st->data_rx, n), "main received %lu of %lu", st->data_rx, n);
    KT_CHECK(wait_for(&st->done, 1), "the shadow did not finish");
    KT_CHECK(st->data_bad == 0, "main: %lu out of order", st->data_bad);
    KT_CHECK(st->seq_bad == seq0, "main: %lu sequence numbers wrong", st->seq_bad - seq0);
    KT_CHECK(k2_shared.shadow_data_rx == n, "shadow received %lu of %lu", k2_shared.shadow_data_rx, n);
    KT_CHECK(k2_shared.shadow_data_bad == 0, "shadow: %lu out of order", k2_shared.shadow_data_bad);
    KT_CHECK(k2_shared.shadow_seq_bad == 0, "shadow: %lu sequence numbers wrong", k2_shared.shadow_seq_bad);
    KT_CHECK(st->full_waits > full0, "main never found the ring full");
    KT_CHECK(k2_shared.shadow_full_waits > 0, "the shadow never found the ring full");
    kprintf("# %lu each way: main sent %lu and received %lu; the ring was full %lu times for main, %lu for the shadow\n",
            n, st->sent - sent0, st->received - rx0, st->full_waits - full0, k2_shared.shadow_full_waits);
}

KTEST(k2_counter, "k2: both kernels add to one counter under a hardware spinlock")
{
    if (!k2_on()) {
        ktest_result(true, "# SKIP no shadow kernel (boot argument k2)");
        return;
    }
    const struct k2_stats *st = k2_stats();
    uint64_t n = 100000;
    k2_reset_test_counts();
    k2_shared.counter = 0;
    k2_shared.test_n = n;
    k2_send(K2_CTL, k2_ctl(K2_CTL_COUNT, 0));
    spinlock_t *l = &k2_hw.hwspin[K2_HWSPIN_TEST];
    for (uint64_t i = 0; i < n; i++) {
        spin_lock(l);
        k2_shared.counter++;
        spin_unlock(l);
    }
    KT_CHECK(wait_for(&st->done, 1), "the shadow did not finish");
    KT_CHECK(k2_shared.counter == 2 * n, "counter %lu, expected %lu", k2_shared.counter, 2 * n);
}

KTEST(k2_private, "k2: neither kernel maps the other's local region")
{
    if (!k2_on()) {
        ktest_result(true, "# SKIP no shadow kernel (boot argument k2)");
        return;
    }
    KT_CHECK(k2_pages_mapped(K2_GLOBAL_PA, K2_STATICS_SIZE) == K2_STATICS_SIZE / 4096,
             "the shared statics are not all mapped here (the walk itself is wrong)");
    uint64_t mapped = k2_pages_mapped(K2_SHADOW_LOCAL_PA, K2_LOCAL_SIZE);
    KT_CHECK(mapped == 0, "%lu pages of the shadow's local region mapped here", mapped);
    KT_CHECK(k2_shared.shadow_main_mapped == 0, "the shadow maps %lu pages of main's local region",
             k2_shared.shadow_main_mapped);
    KT_CHECK(k2_shared.shadow_managed_kib > 0 && k2_shared.shadow_managed_kib <= K2_LOCAL_SIZE / 1024,
             "the shadow manages %lu KiB, beyond its local region", k2_shared.shadow_managed_kib);
}
