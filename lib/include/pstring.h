/* Memory and string routines shared by kernel and user runtime (lib/string.c). */
#ifndef PETREL_PSTRING_H
#define PETREL_PSTRING_H

#include <stddef.h>
#include <stdint.h>

void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

/* memcpy's bulk of a long copy (COPY_WIDE_MIN bytes or more): n bytes, a
 * multiple of 64, from s to d, d 8-byte aligned, s anywhere. lib/string.c
 * has one in general registers (weak: user space's); the kernel's moves
 * 128 bytes a round through the SIMD registers (kernel/arch/aarch64/copy.S). */
#define COPY_WIDE_MIN   512u
void copy_rounds(uint8_t *d, const uint8_t *s, size_t n);

#endif
