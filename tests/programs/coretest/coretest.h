/* Guest tests of the microkernel core, run as the root task. */
#ifndef CORETEST_H
#define CORETEST_H

#include "petrel.h"
#include "echo.h"

#define LABEL_XFER  0x300       /* examine a transferred handle */
#define LABEL_RESULT 0x400

extern unsigned ncpus;
extern uint64_t my_pid;

uint64_t now_ns(void);
void echo_serve(uint32_t ep);
void echo_thread(void *arg);
/* A message of `len` registers with a pattern derived from seed; check the echo. */
bool echo_roundtrip(uint32_t ep, unsigned len, uint64_t seed);
int64_t spawn_peer(const char *mode, const struct spawn_grant *g, unsigned ng, int cpu, uint32_t fault_ep,
                   struct spawn_result *r);

void test_ipc(void);
void test_memory(void);
void test_sched(void);
void test_faults(void);
void test_objects(void);
void test_handles(void);
void test_fuzz(void);
void test_irq(void);
void test_review(void);
void test_trace(void);

#endif
