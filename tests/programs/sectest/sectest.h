/* Security regression tests: the root task's side (see main.c). */
#ifndef SECTEST_H
#define SECTEST_H

#include "../hostile/hostile.h"

#define KiB(x)      ((uint64_t)(x) << 10)
#define MiB(x)      ((uint64_t)(x) << 20)
#define CHILD_PRIO  100     /* below ours (128), and its threads' ceiling */

extern unsigned ncpus;

uint64_t now_ms(void);

/* An unprivileged hostile process: its own space and thread handles,
 * "parent" (an endpoint of ours it reports on) and what the test grants. */
struct child {
    uint32_t ep;            /* its "parent" endpoint, our end */
    uint32_t reply;         /* a report waiting for our answer (reply handle), or 0 */
    bool exited;            /* its exit message arrived */
    int64_t err;            /* what spawn answered */
    struct spawn_result r;
};

int64_t child_spawn(struct child *c, const char *args, uint64_t mem_limit, const struct spawn_grant *g,
                    unsigned ng);
/* Its next report (six words) within ms; it waits until child_answer. */
int64_t child_report(struct child *c, uint64_t mr[6], uint64_t ms);
void child_answer(struct child *c, uint64_t word);
/* A report answered at once. */
int64_t child_result(struct child *c, uint64_t mr[6], uint64_t ms);
/* Wait up to ms for it to exit, end what is left (space_kill) and close
 * our handles; returns what space_kill answered. */
int64_t child_end(struct child *c, uint64_t ms);
/* The common case: spawn a child with a 1 MiB limit and no grants, take
 * its one report (within ms), let it end; returns the report's status. */
int64_t child_run(const char *args, uint64_t mr[6], uint64_t ms);

/* Our space's usage of each kind (which includes every space we made). */
struct usage { int64_t of[LIMIT_KINDS]; };
void usage_now(struct usage *u);
/* One TAP line: our usage is back at `before` (counts exactly; memory
 * within a few of our own page tables, which stay). */
void check_usage_back(const char *name, const struct usage *before);
/* One TAP line: the root task still spawns a program, maps memory and
 * does IPC. */
void check_alive(const char *name);

void test_forge(void);
void test_forge0(void);
void test_stale_mapping(void);
void test_chain(void);
void test_prio(void);
void test_label(void);
void test_floods(void);
void test_space_kill(void);
void test_space_kill_nested(void);
void test_limits(void);

#endif
