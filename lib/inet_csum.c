/*
 * The Internet checksum (lib/include/inet_csum.h).
 *
 * One's complement addition does not depend on byte order (RFC 1071
 * 2(B)): the words are added as the machine loads them (little-endian),
 * and the folded sum swapped to network order at the end. Eight bytes at
 * a time from an aligned address (the kernel builds with strict
 * alignment), each load added as two 32-bit halves into a 64-bit sum, so
 * no carry is lost for any length an IP datagram has (2^32 loads would be
 * needed to overflow it); an odd start is summed as if the data began one
 * byte earlier with a zero, and swapped back (RFC 1071 2(B) again).
 */
#include "inet_csum.h"

typedef uint64_t __attribute__((may_alias)) csum_word;

static uint64_t fold(uint64_t s)
{
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return s;
}

static uint64_t swap16(uint64_t s)
{
    return (s >> 8 | s << 8) & 0xffff;
}

/* The folded sum of p's little-endian 16-bit words, the first at p (even). */
static uint64_t sum_even(const uint8_t *p, uint32_t len)
{
    uint64_t s = 0;
    for (; ((uintptr_t)p & 7) && len >= 2; p += 2, len -= 2)
        s += (uint32_t)(p[0] | p[1] << 8);
    const csum_word *w = (const csum_word *)p;
    for (; len >= 32; w += 4, len -= 32) {
        s += (uint32_t)w[0] + (w[0] >> 32) + (uint32_t)w[1] + (w[1] >> 32);
        s += (uint32_t)w[2] + (w[2] >> 32) + (uint32_t)w[3] + (w[3] >> 32);
    }
    for (; len >= 8; w++, len -= 8)
        s += (uint32_t)*w + (*w >> 32);
    p = (const uint8_t *)w;
    for (; len >= 2; p += 2, len -= 2)
        s += (uint32_t)(p[0] | p[1] << 8);
    if (len)
        s += p[0];
    return fold(s);
}

uint16_t inet_checksum(const uint8_t *p, uint32_t len, uint32_t sum)
{
    uint64_t s;
    if (((uintptr_t)p & 1) && len)
        s = swap16(fold(((uint64_t)p[0] << 8) + sum_even(p + 1, len - 1)));
    else
        s = sum_even(p, len);
    return (uint16_t)~fold(swap16(s) + sum);
}
