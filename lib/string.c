/* The string and memory routines shared by the kernel and the user runtime. */
#include "pstring.h"
#include <stdbool.h>

void *memset(void *d, int c, size_t n)
{
    uint8_t *p = d;
    while (n && ((uintptr_t)p & 7)) { *p++ = (uint8_t)c; n--; }
    uint64_t w = (uint8_t)c * 0x0101010101010101ull;
    for (; n >= 8; n -= 8, p += 8)
        *(uint64_t *)p = w;
    while (n--)
        *p++ = (uint8_t)c;
    return d;
}

/* An 8-byte load from any address. Normal memory takes unaligned loads
 * (SCTLR_EL1.A is clear: boot.S), so this is one instruction; the
 * compiler's own unaligned access would be eight byte loads under
 * -mstrict-align. Never for device registers. */
static inline uint64_t load64_any(const uint8_t *p)
{
    uint64_t v;
    __asm__("ldr %0, [%1]" : "=r"(v) : "r"(p), "m"(*(const uint8_t (*)[8])p));
    return v;
}

/* An 8-byte store to any address (as load64_any). */
static inline void store64_any(uint8_t *p, uint64_t v)
{
    __asm__("str %1, [%2]" : "=m"(*(uint8_t (*)[8])p) : "r"(v), "r"(p) : );
}

/* w[0..7] to 64 bytes at any address: four store pairs off one base. */
static inline void store64x8_any(uint8_t *p, const uint64_t w[8])
{
    __asm__("stp %1, %2, [%9]\n\tstp %3, %4, [%9, #16]\n\tstp %5, %6, [%9, #32]\n\tstp %7, %8, [%9, #48]"
            : "=m"(*(uint8_t (*)[64])p)
            : "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]), "r"(w[4]), "r"(w[5]), "r"(w[6]), "r"(w[7]), "r"(p));
}

/* 64 bytes from any address into w[0..7]: four unaligned load pairs off
 * one base register. (load64_any eight times took an address register a
 * load: memcpy's unaligned round was 24 instructions; with this, 13.) */
static inline void load64x8_any(const uint8_t *p, uint64_t w[8])
{
    __asm__("ldp %0, %1, [%8]\n\tldp %2, %3, [%8, #16]\n\tldp %4, %5, [%8, #32]\n\tldp %6, %7, [%8, #48]"
            : "=&r"(w[0]), "=&r"(w[1]), "=&r"(w[2]), "=&r"(w[3]), "=&r"(w[4]), "=&r"(w[5]), "=&r"(w[6]), "=&r"(w[7])
            : "r"(p), "m"(*(const uint8_t (*)[64])p));
}

/*
 * Copies of 2, 4 or 8 bytes between addresses aligned to that size are one
 * load and one store (single-copy atomic), as the kernel's get_user and
 * put_user are on Linux: a futex or lock word read from (or written into)
 * memory that other threads change meanwhile is never seen half old, half
 * new. Byte by byte, a word going from 0x451 to 0 to 0x452 could read as
 * 0x52.
 */
static inline bool copy_word(void *d, const void *s, size_t n)
{
    uintptr_t both = (uintptr_t)d | (uintptr_t)s;
    if (n == 8 && !(both & 7))
        *(volatile uint64_t *)d = *(const volatile uint64_t *)s;
    else if (n == 4 && !(both & 3))
        *(volatile uint32_t *)d = *(const volatile uint32_t *)s;
    else if (n == 2 && !(both & 1))
        *(volatile uint16_t *)d = *(const volatile uint16_t *)s;
    else
        return false;
    return true;
}

/* n bytes (a multiple of 64) from s to d (8-byte aligned), 64 a round in
 * general registers: eight loads, then eight stores. */
static inline void copy_rounds_regs(uint8_t *dp, const uint8_t *sp, size_t n)
{
    if (((uintptr_t)sp & 7) == 0) {
        for (; n; n -= 64, dp += 64, sp += 64) {   /* (paired by the compiler) */
            const uint64_t *a = (const uint64_t *)sp;
            uint64_t *b = (uint64_t *)dp;
            uint64_t w0 = a[0], w1 = a[1], w2 = a[2], w3 = a[3], w4 = a[4], w5 = a[5], w6 = a[6], w7 = a[7];
            b[0] = w0, b[1] = w1, b[2] = w2, b[3] = w3, b[4] = w4, b[5] = w5, b[6] = w6, b[7] = w7;
        }
        return;
    }
    /* The source is not aligned like the destination: unaligned loads. */
    for (; n; n -= 64, dp += 64, sp += 64) {
        uint64_t w[8];
        load64x8_any(sp, w);
        uint64_t *b = (uint64_t *)dp;
        b[0] = w[0], b[1] = w[1], b[2] = w[2], b[3] = w[3], b[4] = w[4], b[5] = w[5], b[6] = w[6], b[7] = w[7];
    }
}

/* User space's copy_rounds: general registers (a program that never
 * touched FP/SIMD would otherwise start paying for its state at every
 * switch: kernel/arch/aarch64/fpu.c). The kernel has its own. */
__attribute__((weak)) void copy_rounds(uint8_t *d, const uint8_t *s, size_t n)
{
    copy_rounds_regs(d, s, n);
}

void *memcpy(void *d, const void *s, size_t n)
{
    uint8_t *dp = d;
    const uint8_t *sp = s;
    if (n < 16) {
        if (!copy_word(d, s, n))
            while (n--)
                *dp++ = *sp++;
        return d;
    }
    uint8_t *end_d = dp + n;
    const uint8_t *end_s = sp + n;
    if (n < 64) {
        /* Words, then one that ends where the copy does (its first bytes
         * written again with the same values). */
        for (; n >= 8; n -= 8, dp += 8, sp += 8)
            store64_any(dp, load64_any(sp));
        if (n)
            store64_any(end_d - 8, load64_any(end_s - 8));
        return d;
    }
    /* The stores aligned: one unaligned word covers the bytes before the
     * first aligned one (a copy in pieces, as copy_client's, pays this on
     * each piece: byte by byte it was up to 7 rounds). */
    if ((uintptr_t)dp & 7) {
        size_t k = 8 - ((uintptr_t)dp & 7);
        store64_any(dp, load64_any(sp));
        dp += k, sp += k, n -= k;
    }
    size_t rounds = n & ~(size_t)63;
    if (rounds >= COPY_WIDE_MIN)
        copy_rounds(dp, sp, rounds);
    else
        copy_rounds_regs(dp, sp, rounds);
    dp += rounds, sp += rounds, n -= rounds;
    /* The last 0-63 bytes: the 64 that end where the copy does, in one
     * round (those copied already are written again with the same values;
     * word by word the rest took up to 7 rounds of 6 instructions). */
    if (n) {
        uint64_t w[8];
        load64x8_any(end_s - 64, w);
        store64x8_any(end_d - 64, w);
    }
    return d;
}

void *memmove(void *d, const void *s, size_t n)
{
    uint8_t *dp = d;
    const uint8_t *sp = s;
    /* memcpy copies forwards, but writes up to 64 bytes before what it
     * reads last (its last round ends where the copy does): a destination
     * less than 64 bytes below an overlapping source goes a word at a time
     * (or a byte, closer than a word). */
    if (dp >= sp + n || sp >= dp + n || sp >= dp + 64)
        return memcpy(d, s, n);
    if (dp < sp) {
        size_t i = 0;
        if (sp >= dp + 8)
            for (; i + 8 <= n; i += 8)
                store64_any(dp + i, load64_any(sp + i));
        for (; i < n; i++)
            dp[i] = sp[i];
        return d;
    }
    while (n--)
        dp[n] = sp[n];
    return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const uint8_t *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] - y[i];
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

size_t strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

int strcmp(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (; n; n--, a++, b++) {
        if (*a != *b)
            return (unsigned char)*a - (unsigned char)*b;
        if (!*a)
            return 0;
    }
    return 0;
}

