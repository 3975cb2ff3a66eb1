/*
 * What sectest (the test, a root task) and hostile (the
 * unprivileged attacker it spawns) agree on. The child reports with a
 * call on its "parent" endpoint: label LABEL_REPORT, up to six words;
 * the test's reply (MR0) lets it go on. Its exit comes as the
 * runtime's LABEL_EXIT message on the same endpoint.
 */
#ifndef HOSTILE_H
#define HOSTILE_H

#include "petrel.h"

#define LABEL_REPORT    0x400
#define LABEL_ROUND     0x401       /* a call from a hand-built thread (stale mapping) */
#define LABEL_SENT      0x123       /* the label of the message whose word is rewritten */
#define LABEL_EXIT      0x45584954  /* the runtime's exit message (user/rt/start.c) */

/* mode=park nest=1: the counter (a word of "shm") its nested thread spins on. */
#define NESTED_COUNTER  32

/* The chain and flood modes stop at this many objects if never refused. */
#define CHAIN_MAX       8192

#endif
