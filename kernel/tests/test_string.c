/*
 * memcpy and memmove against a byte-by-byte model: every alignment of
 * source and destination within 16 bytes, every length up to 300 and some
 * long ones, with guard bytes on both sides that must stay untouched;
 * memmove also over every overlap distance to 80 in both directions.
 */
#include "ktest.h"
#include "pstring.h"

#define GUARD   32u
#define AREA    (GUARD + 16 + 4200 + 80 + GUARD)

static uint8_t src_area[AREA], dst_area[AREA], model[AREA];

/* A pattern with no period that a shifted copy could match by chance. */
static uint8_t pattern(unsigned i, unsigned salt)
{
    uint32_t x = (i + 1) * 2654435761u ^ salt * 40503u;
    return (uint8_t)(x >> 13);
}

static void fill(uint8_t *a, unsigned from, unsigned to, unsigned salt)
{
    for (unsigned i = from; i < to; i++)
        a[i] = pattern(i, salt);
}

/* The first byte in [from, to) where dst_area differs from the model, or -1. */
static int first_diff(unsigned from, unsigned to)
{
    for (unsigned i = from; i < to; i++)
        if (dst_area[i] != model[i])
            return (int)i;
    return -1;
}

/* memcpy into dst_area + GUARD + doff: dst_area and the model hold
 * pattern 2 between cases; the copy is checked with GUARD bytes around
 * it, then put back. */
static bool copy_case(unsigned so, unsigned doff, unsigned len)
{
    unsigned at = GUARD + doff, lo = at - GUARD, hi = at + len + GUARD;
    for (unsigned i = 0; i < len; i++)
        model[at + i] = src_area[GUARD + so + i];
    void *r = memcpy(dst_area + at, src_area + GUARD + so, len);
    int bad = first_diff(lo, hi);
    bool ok = KT_CHECK(r == dst_area + at && bad < 0, "memcpy src+%u dst+%u len %u: byte %d wrong", so, doff, len,
                       bad - (int)at);
    fill(dst_area, lo, hi, 2);
    fill(model, lo, hi, 2);
    return ok;
}

KTEST(string_memcpy, "string: memcpy at every alignment of source and destination and every length to 300")
{
    static const unsigned longs[] = { 511, 512, 513, 1000, 4095, 4096, 4097, 4200 };
    fill(src_area, 0, AREA, 1);
    fill(dst_area, 0, AREA, 2);
    fill(model, 0, AREA, 2);
    bool ok = true;
    for (unsigned so = 0; so < 16 && ok; so++)
        for (unsigned doff = 0; doff < 16 && ok; doff++) {
            for (unsigned len = 0; len <= 300 && ok; len++)
                ok = copy_case(so, doff, len);
            for (unsigned i = 0; i < ARRAY_SIZE(longs) && ok; i++)
                ok = copy_case(so, doff, longs[i]);
        }
}

/* memmove of len bytes from offset `from` to offset `to` of dst_area:
 * the span of both, with GUARD bytes around it, checked and put back. */
static bool move_case(unsigned from, unsigned to, unsigned len)
{
    for (unsigned i = 0; i < len; i++)
        src_area[i] = dst_area[GUARD + from + i];
    for (unsigned i = 0; i < len; i++)
        model[GUARD + to + i] = src_area[i];
    void *r = memmove(dst_area + GUARD + to, dst_area + GUARD + from, len);
    unsigned lo = from < to ? from : to, hi = (from < to ? to : from) + len + 2 * GUARD;
    int bad = first_diff(lo, hi);
    bool ok = KT_CHECK(r == dst_area + GUARD + to && bad < 0, "memmove %u -> %u len %u: byte %d wrong", from, to,
                       len, bad - (int)(GUARD + to));
    fill(dst_area, lo, hi, 2);
    fill(model, lo, hi, 2);
    return ok;
}

KTEST(string_memmove, "string: memmove over every overlap distance to 80, both ways, at every length to 200")
{
    static const unsigned longs[] = { 1000, 4096 };
    fill(dst_area, 0, AREA, 2);
    fill(model, 0, AREA, 2);
    bool ok = true;
    for (unsigned base = 0; base < 8 && ok; base++)
        for (unsigned dist = 0; dist <= 80 && ok; dist++) {
            for (unsigned len = 0; len <= 200 && ok; len++)
                ok = move_case(base + dist, base, len) && move_case(base, base + dist, len);
            for (unsigned i = 0; i < ARRAY_SIZE(longs) && ok; i++)
                ok = move_case(base + dist, base, longs[i]) && move_case(base, base + dist, longs[i]);
        }
}
