/*
 * inputdhostile: a client of the input dispatcher that does what an
 * application should not (systems/inputd-hostile-user.toml, -kernel.toml):
 * a second `wait` from another thread while one waits (on another core
 * when there is one), and then no waiting at all while 30 keys are
 * pressed, 90 events for a queue of 64. The second wait is refused, the
 * queue keeps the newest 64 and counts the rest dropped, and afterwards
 * the dispatcher still answers and hands the events over in order.
 */
#include "petrel.h"
#include "inputd_if.h"

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
    tap_plan();
    return 0;
}
