/*
 * Included first into each source file of the personality (the .c files of services/linux/)
 * when the host fuzzer builds it (tests/hostfuzz/Makefile, -include), never
 * by the personality itself:
 *
 * - every global and static variable of those files goes to the sections
 *   .lxstate.data and .lxstate.bss, which lxstate.ld gathers between
 *   __lxstate_start and __lxstate_end: the driver copies that range once
 *   before the first input and back before each input, so each input starts
 *   from the personality's state at boot. The section names have a dot, so
 *   AddressSanitizer still puts red zones around those variables;
 * - svc_alloc and svc_free carry the file and line of the call into the
 *   test double, which accounts for each allocation by where it was made.
 */
#ifndef HOSTFUZZ_LXSTATE_H
#define HOSTFUZZ_LXSTATE_H

#include "svc.h"

void *hf_alloc_at(size_t size, const char *file, int line);
void hf_free_at(void *p, size_t size, const char *file, int line);
#define svc_alloc(size) hf_alloc_at((size), __FILE__, __LINE__)
#define svc_free(p, size) hf_free_at((p), (size), __FILE__, __LINE__)

#pragma clang section bss = ".lxstate.bss" data = ".lxstate.data"

#endif
