/*
 * contest: the console service from a client's side, the same in both
 * placements (systems/console-kernel.toml and console-user.toml differ
 * only there). It prints through the service, and reads the lines the
 * test runner types on the serial console. TAP.
 */
#include "petrel.h"
#include "console_if.h"

static uint32_t con;

int main(void *info)
{
    con = start_handle("console");
    if (!con) {
        puts("contest: no console endpoint");
        return 1;
    }
    const char *hello = "contest: printed through the console service\n";
    uint64_t n = 0;
    tap_ok(console_print(con, (void *)hello, strlen(hello), &n) == 0 && n == strlen(hello),
           "console: print writes every byte");
    tap_ok(console_print(con, (void *)0x10, 8, &n) == -E_FAULT, "console: an unreachable buffer is refused");
    puts("contest: waiting for input");
    /* Both lines are read before anything is printed: the console echoes
     * typed characters as they arrive, and a report printed while the
     * second line is still being echoed would be cut up by it. */
    char lines[2][121];
    uint32_t lens[2] = { 0, 0 };
    int64_t errs[2];
    for (int i = 0; i < 2; i++) {
        errs[i] = console_read_line(con, lines[i], &lens[i]);
        lines[i][errs[i] ? 0 : lens[i]] = 0;
    }
    for (int i = 0; i < 2; i++) {
        printf("contest: line %d: \"%s\"\n", i + 1, lines[i]);
        tap_ok(errs[i] == 0 && lens[i] > 0, "console: line %d arrives by interrupt (%u bytes)", i + 1, lens[i]);
    }
    tap_ok(strcmp(lines[1], "second line") == 0, "console: lines arrive whole and in order");
    uint32_t waiting = 99;
    tap_ok(console_pending(con, &waiting) == 0 && waiting == 0, "console: nothing left waiting");
    tap_plan();
    return 0;
}
