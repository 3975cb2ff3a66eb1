/*
 * inputdapp: one short-lived application of the input dispatcher
 * (systems/inputd-slots-user.toml, -kernel.toml; the case
 * services/inputd-slots). Twenty of them take the focus and end, one
 * after the other (application n starts 40 ms after n - 1): seventeen
 * with a thread left waiting for a key (mode=wait), three without
 * (mode=focus). The dispatcher has sixteen application slots and no
 * window tells it when these end: it must let the slots of ended ones
 * go (a `wait` whose caller is gone, an application that holds nothing),
 * or the last ones, and every application after them, would be refused
 * (E_LIMIT). Then mode=check, started last, asks once more.
 */
#include "petrel.h"
#include "inputd_if.h"

static uint32_t h;

static void waiter(void *arg)
{
    (void)arg;
    uint32_t type, code, value;
    uint64_t irq, dispatched;
    inputd_wait(h, &type, &code, &value, &irq, &dispatched);  /* (no key comes: it ends with its process) */
}

int main(void *info)
{
    (void)info;
    char mode[8] = "", n[8] = "";
    start_arg("mode", mode, sizeof(mode));
    start_arg("n", n, sizeof(n));
    h = start_handle("inputd");
    uint64_t before;
    if (!strcmp(mode, "check")) {
        sleep_ms(1200);                         /* (the twenty have ended) */
        int64_t r = inputd_focus(h, &before);
        uint64_t taken, handed, dropped, wakeups, focused;
        int64_t s = inputd_stats(h, &taken, &handed, &dropped, &wakeups, &focused);
        printf("inputdapp: after twenty applications ended, one more takes the focus: %s (%ld, stats %ld)\n",
               r == 0 && s == 0 ? "yes" : "no", (long)r, (long)s);
        return r == 0 && s == 0 ? 0 : 1;
    }
    uint64_t k = 0;
    for (const char *c = n; *c >= '0' && *c <= '9'; c++)
        k = k * 10 + (uint64_t)(*c - '0');
    sleep_ms(40 * k);                           /* (one at a time) */
    int64_t r = inputd_focus(h, &before);
    if (r) {
        printf("inputdapp: application %s refused the focus (%ld)\n", n, (long)r);
        return 1;
    }
    if (!strcmp(mode, "wait")) {
        if (thread_spawn(waiter, NULL, 100, THREAD_ANY_CORE) <= 0)
            return 1;
        sleep_ms(20);                           /* (its wait kept in the dispatcher) */
    }
    printf("inputdapp: application %s took the focus\n", n);
    exit_process(0);                            /* (its waiting thread ends with it) */
    return 0;
}
