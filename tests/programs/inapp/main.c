/*
 * inapp: a native application of the input path (systems/input-native.toml):
 * it asks the input dispatcher (services/inputd) for its events until it
 * has the press and release of the key `key=` (a Linux key code) and the
 * SYN_REPORT after them, and prints each with what it cost: from the input
 * service's interrupt to the dispatcher (obtaining the event), from the
 * dispatcher to here (dispatching it), and end to end, in nanoseconds of
 * the system clock (under -icount, instructions). With `focus=1` it takes
 * the focus first; afterwards it takes it again and says whose it was.
 * It exits with status 0 if all that went right.
 *
 * With `presses=N` it is the input path's benchmark (./petrel bench, the
 * rows input_obtain, input_dispatch and input_path_e2e of Petrel's own
 * path): it prints "inapp: press I" and waits for a press of any key, N
 * times, then the three rows' averages over the presses (each press's
 * first event: the later ones of a press wait while it prints).
 */
#include "petrel.h"
#include "inputd_if.h"

static unsigned number(const char *name, unsigned dflt)
{
    char arg[16] = "";
    if (!start_arg(name, arg, sizeof(arg)) || !arg[0])
        return dflt;
    unsigned n = 0;
    for (const char *c = arg; *c >= '0' && *c <= '9'; c++)
        n = n * 10 + (unsigned)(*c - '0');
    return n;
}

static void row(const char *metric, uint64_t sum, unsigned n)
{
    uint64_t ps = sum * 1000 / n;
    printf("BENCH %s - %lu.%03lu %u\n", metric, (unsigned long)(ps / 1000), (unsigned long)(ps % 1000), n);
}

/* The benchmark: n presses, the costs of each one's first event. */
static int bench(uint32_t h, unsigned n)
{
    uint64_t sum[3] = { 0, 0, 0 }, before;
    if (inputd_focus(h, &before) != 0) {        /* (the dispatcher opens the device: before any press) */
        printf("BENCH-SKIP input_path_e2e inputd-focus-failed\n");
        return 1;
    }
    for (unsigned i = 1; i <= n; i++) {
        printf("inapp: press %u\n", i);
        for (;;) {
            uint32_t type, code, value;
            uint64_t irq, dispatched;
            if (inputd_wait(h, &type, &code, &value, &irq, &dispatched) != 0) {
                printf("BENCH-SKIP input_path_e2e inputd-wait-failed\n");
                return 1;
            }
            uint64_t now = clock_ns();
            if (type == 1 && value == 1) {
                sum[0] += dispatched - irq, sum[1] += now - dispatched, sum[2] += now - irq;
                break;
            }
        }
    }
    row("input_obtain", sum[0], n);
    row("input_dispatch", sum[1], n);
    row("input_path_e2e", sum[2], n);
    printf("BENCH-END\n");
    return 0;
}

int main(void)
{
    char name[16] = "app";
    start_arg("name", name, sizeof(name));
    unsigned key = number("key", 30);
    uint32_t h = start_handle("inputd");
    uint64_t before = 0, me = 0;
    int64_t err = number("focus", 0) ? inputd_focus(h, &before) : 0;
    if (err) {
        printf("%s: focus: error %ld\n", name, (long)err);
        return 1;
    }
    if (number("presses", 0))
        return bench(h, number("presses", 0));
    printf("%s: waiting\n", name);
    int pressed = 0, released = 0, done = 0, others = 0;
    while (!done) {
        uint32_t type, code, value;
        uint64_t irq, dispatched;
        err = inputd_wait(h, &type, &code, &value, &irq, &dispatched);
        uint64_t now = clock_ns();
        if (err) {
            printf("%s: wait: error %ld\n", name, (long)err);
            return 1;
        }
        printf("%s: event %u %u %u ~ obtained in %lu ns, dispatched in %lu ns, %lu ns end to end\n", name, type,
               code, value, (unsigned long)(dispatched - irq), (unsigned long)(now - dispatched),
               (unsigned long)(now - irq));
        if (type == 1 && code == key)
            pressed += value == 1, released += value == 0;
        else if (type != 0)
            others++;
        done = released && type == 0;
    }
    /* (asked before the lines below: the focus is checked while this application is still there) */
    int mine = inputd_focus(h, &before) == 0 && inputd_focus(h, &me) == 0 && before == me;
    printf("%s: got key %u pressed %d, released %d, other keys %d\n", name, key, pressed, released, others);
    printf("%s: the focus was %s when its key came\n", name, mine ? "its own" : "another's");
    return pressed == 1 && released == 1 && others == 0 && mine ? 0 : 1;
}
