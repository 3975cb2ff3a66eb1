/*
 * hostile: the unprivileged attacker of sectest. It holds only its
 * own space and thread handles, "parent" (an endpoint to report on) and
 * whatever the test grants, and it runs under the test's limits. Each
 * mode replays one attack an independent review found and reports what
 * the kernel answered; the test judges.
 *
 * mode=echo       serve echo requests on "ep" (a healthy process)
 * mode=forge      forge a handle through a torn-down space (attack 1)
 * mode=forge0     a thread in a torn-down space, nothing mapped (2)
 * mode=stalemap   a mapping record outliving its space (3)
 * mode=chain      spaces holding each other in a chain (4, 7c)
 * mode=prio       a dangling endpoint server pointer (5)
 * mode=label      rewrite a queued sender's message word (6)
 * mode=flood      exhaust one kind of kernel memory (7): what=lazy2m,
 *                 threads, elsewhere, endpoints, tables or mappings
 * mode=park       many threads parked or spinning, to be killed (8)
 * mode=limits     reach every limit at once (9)
 */
#include "hostile_int.h"
#include "../coretest/echo.h"

int64_t report(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f)
{
    struct petrel_msg m = { MSG_INFO(LABEL_REPORT, 6, 0), { a, b, c, d, e, f }, 0, 0 };
    int64_t err = sys_ipc_call(start_handle("parent"), &m);
    return err ? err : (int64_t)m.mr[0];
}

static void echo(uint32_t ep)
{
    echo_loop(ep);
}

int main(void *info)
{
    static const struct { const char *name; void (*fn)(void); } modes[] = {
        { "forge", attack_forge }, { "forge0", attack_forge0 }, { "stalemap", attack_stale_mapping },
        { "chain", attack_chain }, { "prio", attack_prio }, { "label", attack_label },
        { "flood", attack_flood }, { "park", attack_park }, { "limits", attack_limits },
    };
    char mode[16] = "";
    start_arg("mode", mode, sizeof(mode));
    if (!strcmp(mode, "echo")) {
        echo(start_handle("ep"));
        return 0;
    }
    for (unsigned i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        if (!strcmp(mode, modes[i].name)) {
            modes[i].fn();
            return 0;
        }
    }
    printf("hostile: unknown mode \"%s\"\n", mode);
    return 1;
}
