/* Attacks 1-4: dead spaces forging handles and keeping mappings, and
 * chains of spaces torn down at once. */
#include "sectest.h"

/* A torn-down space's handle_give may say E_STATE (the target's state)
 * or E_CLOSED (its table): both refuse. */
static bool refused_closed(int64_t r)
{
    return r == -E_CLOSED || r == -E_STATE;
}

/* Attack 1: a fake handle slot and system object mapped at 0 of a dead
 * space, used by a new thread there (handle_info(1), system_off(1)). */
void test_forge(void)
{
    struct usage before;
    usage_now(&before);
    uint64_t mr[6];
    int64_t r = child_run("mode=forge", mr, 5000);
    int64_t map0 = (int64_t)mr[0], map_high = (int64_t)mr[1], give = (int64_t)mr[2], thread = (int64_t)mr[3];
    int64_t own0 = (int64_t)mr[4], own_low = (int64_t)mr[5];
    tap_ok(r == 0 && thread == -E_CLOSED, "forge: a torn-down space takes no new thread (%s), so nothing "
           "runs on its freed handle table", error_str(r ? r : thread));
    tap_ok(r == 0 && map_high == -E_CLOSED && refused_closed(give),
           "forge: a torn-down space takes no new mapping (%s) or handle (%s)", error_str(map_high), error_str(give));
    tap_ok(r == 0 && map0 == -E_INVAL && own0 == -E_INVAL && own_low == -E_INVAL,
           "forge: nothing maps below USER_VA_MIN, in a dead space (%s) or a live one (%s at 0, %s just below)",
           error_str(map0), error_str(own0), error_str(own_low));
    check_usage_back("forge", &before);
    check_alive("forge");
}

/* Attack 2: a thread in a dead space, nothing mapped at 0, looks up a
 * handle (it panicked the kernel). */
void test_forge0(void)
{
    struct usage before;
    usage_now(&before);
    uint64_t mr[6];
    int64_t r = child_run("mode=forge0", mr, 5000);
    int64_t space = (int64_t)mr[0], map = (int64_t)mr[1], thread = (int64_t)mr[2];
    tap_ok(r == 0 && space > 0 && thread == -E_CLOSED && map == -E_CLOSED,
           "forge0: no thread can be made to look up handles in a torn-down space (%s; mapping code there: %s)",
           error_str(r ? r : thread), error_str(map));
    check_usage_back("forge0", &before);
    check_alive("forge0");
}

/* Attack 3: a mapping into a dead space at 0x100000, the space closed,
 * a new space's thread with its UTCB there, then a clone of the object. */
void test_stale_mapping(void)
{
    struct usage before;
    usage_now(&before);
    uint64_t mr[6];
    int64_t r = child_run("mode=stalemap", mr, 10000);
    int64_t map = (int64_t)mr[0], setup = (int64_t)mr[1], first = (int64_t)mr[2], clone = (int64_t)mr[3];
    int64_t second = (int64_t)mr[4];
    tap_ok(r == 0 && map == -E_CLOSED, "stalemap: mapping into a torn-down space is refused (%s)",
           error_str(r ? r : map));
    tap_ok(r == 0 && setup == 0 && first == 0 && clone > 0 && second == 1,
           "stalemap: the next space's thread (UTCB at 0x100000) runs and does IPC through a clone of the object "
           "(set-up %s, rounds %ld and %ld, clone %s)", error_str(setup), (long)first, (long)second, error_str(clone));
    check_usage_back("stalemap", &before);
    check_alive("stalemap");
}

/* Attack 4: chains of spaces, each holding a handle to the one before. */
void test_chain(void)
{
    struct usage before;
    usage_now(&before);
    struct child c;
    uint64_t mr[6];
    child_spawn(&c, "mode=chain n=300 close=1", MiB(64), NULL, 0);
    int64_t r = child_result(&c, mr, 20000);
    child_end(&c, 5000);
    tap_ok(r == 0 && mr[0] == 300 && mr[1] == 0 && mr[2] == 300 && mr[4] == 0 && mr[5] == 0,
           "chain: closing the head of a chain of 300 spaces tears them all down (%lu made, %ld left: %s)",
           (unsigned long)mr[0], (long)mr[5], error_str(r ? r : (int64_t)mr[1]));

    child_spawn(&c, "mode=chain", MiB(64), NULL, 0);
    r = child_report(&c, mr, 30000);
    struct usage during;
    usage_now(&during);                 /* while it holds the chain */
    child_answer(&c, 0);
    child_end(&c, 10000);
    tap_ok(r == 0 && mr[0] >= 1000 && (int64_t)mr[1] == -E_LIMIT && mr[2] == mr[0] && mr[3] <= MiB(64),
           "chain: a chain as long as 64 MiB allows (%lu spaces) ends with E_LIMIT (%s) and goes when its "
           "maker exits", (unsigned long)mr[0], error_str(r ? r : (int64_t)mr[1]));
    tap_ok(r == 0 && during.of[LIMIT_SPACES] - before.of[LIMIT_SPACES] == (int64_t)mr[0] + 1,
           "chain: our usage counts every space of the chain (%ld of %lu + 1)",
           (long)(during.of[LIMIT_SPACES] - before.of[LIMIT_SPACES]), (unsigned long)mr[0]);
    check_usage_back("chain", &before);
    check_alive("chain");
}
