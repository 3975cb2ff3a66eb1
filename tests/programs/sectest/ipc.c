/* Attacks 5 and 6: priority through a dead server, kernel labels
 * through a rewritten message word. */
#include "sectest.h"

/* Attack 5: a thread receives on endpoints A and B without waiting and
 * dies; threads at priority 10 come; a thread at 90 calls A (first
 * without waiting, then waiting until it is killed). */
void test_prio(void)
{
    struct usage before;
    usage_now(&before);
    uint64_t mr[6];
    int64_t r = child_run("mode=prio", mr, 10000);
    int64_t recv_a = (int64_t)mr[0], recv_b = (int64_t)mr[1], call_nb = (int64_t)mr[2];
    tap_ok(r == 0 && recv_a == -E_AGAIN && recv_b == -E_AGAIN && call_nb == -E_AGAIN && mr[3] == 1,
           "prio: set-up: receives and a non-blocking call with nobody there say E_AGAIN (%s, %s, %s), "
           "the call then waits (%s)", error_str(recv_a), error_str(recv_b), error_str(call_nb),
           mr[3] ? "yes" : "no");
    tap_ok(r == 0 && mr[4] == 10 && mr[5] == 10,
           "prio: a call at 90 on an endpoint whose receiver died lends nobody its priority "
           "(threads at 10 stay at %lu while it waits, %lu after it is killed)", (unsigned long)mr[4],
           (unsigned long)mr[5]);
    check_usage_back("prio", &before);
    check_alive("prio");
}

/* Attack 6: a sender waiting in ipc_send gets its x1 rewritten to
 * MSG_INFO(LABEL_FAULT, 40) | 0xfe00 before the receive. */
void test_label(void)
{
    struct usage before;
    usage_now(&before);
    uint64_t mr[6];
    int64_t r = child_run("mode=label", mr, 10000);
    int64_t wr = (int64_t)mr[1], rr = (int64_t)mr[2];
    uint64_t info = mr[3];
    tap_ok(r == 0 && mr[0] == 1 && rr == 0 && info == MSG_INFO(LABEL_SENT, 2, 0) && mr[4] == 0x5e1f &&
           mr[5] == 0xd00d, "label: a queued message word rewritten to a kernel label and 40 words arrives as sent "
           "(label 0x%lx, %u words; the register write: %s)", (unsigned long)MSG_LABEL(info), MSG_LEN(info),
           error_str(wr));
    check_usage_back("label", &before);
    check_alive("label");
}
