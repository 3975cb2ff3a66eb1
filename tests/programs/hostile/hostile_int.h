/* Inside the hostile program: helpers and one function per attack. */
#ifndef HOSTILE_INT_H
#define HOSTILE_INT_H

#include "hostile.h"

/* Where hand-built spaces get their threads' UTCB pages. */
#define FOREIGN_UTCB    0x7fffffe000ull
/* Where attack 3 maps into a dead space, then puts a new space's UTCB. */
#define STALE_VA        0x100000

/* Report six words to the test; returns its answer (MR0) or an error. */
int64_t report(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f);
/* The number given as `key=` in the arguments, or dflt. */
/* A new space whose only thread was created and killed, so it is torn
 * down: its handle, or an error. */
int64_t dead_space(void);

/* Machine code copied into hand-built spaces (blobs.c). */
extern const char forge_code[], forge_code_end[];
extern const char info5_code[], info5_code_end[];
extern const char round_code[], round_code_end[];
extern const char spin_code[], spin_code_end[];

void attack_forge(void);
void attack_forge0(void);
void attack_stale_mapping(void);
void attack_chain(void);
void attack_prio(void);
void attack_label(void);
void attack_flood(void);
void attack_park(void);
void attack_limits(void);

#endif
