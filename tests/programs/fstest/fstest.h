/* fstest's pieces: the file service endpoint and helpers (main.c), the
 * two-client tests (clients.c). */
#ifndef FSTEST_H
#define FSTEST_H

#include "petrel.h"
#include "fs_if.h"
#include "fs_abi.h"

#define P(s) (s), (uint32_t)strlen(s)

extern uint32_t fs;
extern uint8_t big[40000], back[40000];

/* Create or truncate `path` and write `len` bytes: the count or an error. */
int64_t write_file(const char *path, const void *data, uint64_t len);
/* Read up to `len` bytes of `path`: the count or an error. */
int64_t read_file(const char *path, void *buf, uint64_t len);

/* The two-client tests: fstest's side and fspeer's (role=peer). */
void clients(void);
void peer(void);
/* 1 MiB reads: whole, interrupted by a better thread, on two cores, killed, suspended (long.c). */
void long_requests(void);

#endif
