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
    char line[121];
    uint32_t len = 0;
    puts("contest: waiting for input");
    for (int i = 1; i <= 2; i++) {
        int64_t err = console_read_line(con, line, &len);
        line[err ? 0 : len] = 0;
        printf("contest: line %d: \"%s\"\n", i, line);
        tap_ok(err == 0 && len > 0, "console: line %d arrives by interrupt (%u bytes)", i, len);
    }
    tap_ok(strcmp(line, "second line") == 0, "console: lines arrive whole and in order");
    uint32_t waiting = 99;
    tap_ok(console_pending(con, &waiting) == 0 && waiting == 0, "console: nothing left waiting");
    tap_plan();
    return 0;
}
