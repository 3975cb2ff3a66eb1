/* The string and memory routines shared by the kernel and the user runtime. */
#include "pstring.h"

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

void *memcpy(void *d, const void *s, size_t n)
{
    uint8_t *dp = d;
    const uint8_t *sp = s;
    if ((((uintptr_t)dp | (uintptr_t)sp) & 7) == 0) {
        /* 64 bytes a round: eight loads, then eight stores (paired by the compiler). */
        for (; n >= 64; n -= 64, dp += 64, sp += 64) {
            const uint64_t *a = (const uint64_t *)sp;
            uint64_t *b = (uint64_t *)dp;
            uint64_t w0 = a[0], w1 = a[1], w2 = a[2], w3 = a[3], w4 = a[4], w5 = a[5], w6 = a[6], w7 = a[7];
            b[0] = w0, b[1] = w1, b[2] = w2, b[3] = w3, b[4] = w4, b[5] = w5, b[6] = w6, b[7] = w7;
        }
        for (; n >= 8; n -= 8, dp += 8, sp += 8)
            *(uint64_t *)dp = *(const uint64_t *)sp;
    }
    while (n--)
        *dp++ = *sp++;
    return d;
}

void *memmove(void *d, const void *s, size_t n)
{
    uint8_t *dp = d;
    const uint8_t *sp = s;
    if (dp <= sp || dp >= sp + n)
        return memcpy(d, s, n);
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

