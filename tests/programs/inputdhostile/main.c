/*
 * inputdhostile: a client of the input dispatcher that does what an
 * application should not (systems/inputd-hostile-user.toml, -kernel.toml):
 * a second `wait` from another thread while one waits (on another core
 * when there is one), and then no waiting at all while 30 keys are
 * pressed, 90 events for a queue of 64. The second wait is refused, the
 * queue keeps the newest 64 and counts the rest dropped, and afterwards
 * the dispatcher still answers and hands the events over in order. Then
 * bad windows and attachments: a dead token, `attach` with no bits, a
 * window or a wait after `attach`; and the attached ring, read as a
 * service reads it, carries the next key with its device's tag.
 */
#include "petrel.h"
#include "inputd_if.h"
#include "spsc_ring.h"

static uint32_t h;
static volatile int first_done;
static volatile uint32_t first_code;

static void waiter(void *arg)
{
    (void)arg;
    uint32_t type, code, value;
    uint64_t irq, dispatched;
    if (inputd_wait(h, &type, &code, &value, &irq, &dispatched) == 0)
        first_code = code;
    __atomic_store_n(&first_done, 1, __ATOMIC_RELEASE);
}

int main(void)
{
    h = start_handle("inputd");
    uint64_t before, taken, handed, dropped, wakeups, focused;
    tap_ok(inputd_focus(h, &before) == 0 && inputd_focus(h, &focused) == 0 && before == focused,
           "inputd: the first application takes the focus");
    tap_ok(thread_spawn(waiter, NULL, 100, THREAD_ANY_CORE) > 0, "inputd: a thread waits for a key");
    static uint32_t never;
    sys_futex_wait((uint64_t)(uintptr_t)&never, 0, 100000000);    /* (100 ms: its wait is in before the second) */
    uint32_t type, code, value;
    uint64_t irq, dispatched;
    tap_ok(inputd_wait(h, &type, &code, &value, &irq, &dispatched) == -E_BUSY,
           "inputd: a second wait of the same application while one waits: E_BUSY");
    printf("inputdhostile: press\n");
    while (!__atomic_load_n(&first_done, __ATOMIC_ACQUIRE))
        sys_yield();
    tap_ok(first_code == 30, "inputd: the waiting thread got the first key (a: %u)", first_code);
    printf("inputdhostile: flood\n");
    /* 30 presses, 90 events, nobody waiting: the stats show them all taken */
    for (int i = 0; i < 100000; i++) {
        if (inputd_stats(h, &taken, &handed, &dropped, &wakeups, &focused) == 0 && taken >= 93)
            break;
        sys_yield();
    }
    tap_ok(taken >= 93 && dropped >= 26, "inputd: 90 events for a queue of 64: %lu taken, %lu dropped",
           (unsigned long)taken, (unsigned long)dropped);
    uint32_t last = 0;
    int n = 0, ordered = 1;
    while (n < 64 && inputd_wait(h, &type, &code, &value, &irq, &dispatched) == 0) {
        n++;
        if (type == 1 && value == 1) {
            ordered &= code != last;
            last = code;
        }
        if (n == 64)
            break;
    }
    tap_ok(n == 64 && last == 44, "inputd: the queue kept the newest 64, the last key z (%d events, last %u)", n,
           last);
    tap_ok(ordered, "inputd: in the order they came");
    tap_ok(inputd_stats(h, &taken, &handed, &dropped, &wakeups, &focused) == 0 && wakeups >= 1 &&
           wakeups <= taken, "inputd: %lu wakeups for %lu events (only on empty to non-empty)",
           (unsigned long)wakeups, (unsigned long)taken);

    /* Windows and attachments it should not make. */
    int64_t ep = sys_endpoint_create();
    int64_t token = ep > 0 ? sys_handle_dup((uint32_t)ep, R_WRITE | R_GRANT, 0) : ep;
    if (ep > 0)
        sys_handle_close((uint32_t)ep);         /* (the endpoint dies: nobody receives on it) */
    tap_ok(token > 0 && inputd_window(h, (uint32_t)token, 0, 0, 10, 10) == -E_INVAL,
           "inputd: a window whose token's endpoint is dead: E_INVAL");
    int64_t note = sys_notify_create();
    uint32_t ring = 0, w = 0, ht = 0;
    uint64_t size = 0;
    tap_ok(note > 0 && inputd_attach(h, (uint32_t)note, 0, &ring, &size, &w, &ht) == -E_INVAL,
           "inputd: attach with no bits to signal: E_INVAL");
    int64_t ep2 = sys_endpoint_create();
    tap_ok(ep2 > 0 && inputd_attach(h, (uint32_t)ep2, 4, &ring, &size, &w, &ht) == -E_INVAL,
           "inputd: attach with an endpoint for a note: E_INVAL");
    int64_t err = inputd_attach(h, (uint32_t)note, 4, &ring, &size, &w, &ht);
    tap_ok(err == 0 && size >= 4096, "inputd: attach: a ring of %lu bytes (%ld)", (unsigned long)size, (long)err);
    tap_ok(inputd_wait(h, &type, &code, &value, &irq, &dispatched) == -E_STATE,
           "inputd: a wait after attach: E_STATE");
    ep = sys_endpoint_create();
    token = ep > 0 ? sys_handle_dup((uint32_t)ep, R_WRITE | R_GRANT, 0) : ep;
    tap_ok(token > 0 && inputd_window(h, (uint32_t)token, 0, 0, 10, 10) == -E_STATE,
           "inputd: a window after attach: E_STATE");
    /* (mapped whole, as svc_shared_map maps it: its page may be larger) */
    int64_t whole = err ? -1 : sys_mem_size(ring);
    uint64_t va = whole >= (int64_t)size ? va_alloc((uint64_t)whole, 0x200000) : 0;
    struct spsc_ring *r = va && sys_mem_map(self_space(), ring, va, 0, (uint64_t)whole, R_READ | R_WRITE) == 0
                              ? (struct spsc_ring *)va : NULL;
    uint32_t slots = r ? spsc_attach(r, size) : 0;
    tap_ok(slots > 0, "inputd: the ring maps and holds %u records", slots);
    printf("inputdhostile: attached\n");
    int got = 0, tagged = 1;
    uint32_t codes[3] = { 0 };
    while (slots && got < 3) {
        struct spsc_rec x;
        int took = spsc_take(r, slots, &x);
        if (took < 0)
            break;
        if (took == 0) {
            sys_notify_wait((uint32_t)note);
            continue;
        }
        tagged &= (x.b >> 56) == 0;             /* (the keyboard's) */
        codes[got++] = (uint32_t)(x.b >> 32) & 0xffff;
    }
    tap_ok(got == 3 && codes[0] == 48 && codes[1] == 48 && codes[2] == 0 && tagged,
           "inputd: the attached ring carries b's press, release and SYN_REPORT, the keyboard's (%u %u %u)",
           codes[0], codes[1], codes[2]);
    tap_plan();
    return 0;
}
