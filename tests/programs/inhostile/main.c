/*
 * inhostile: a client of the input and display services that does what a
 * client should not (systems/inhostile-user.toml, inhostile-kernel.toml):
 * strings and bitmaps into memory it does not have, types and axes past
 * their ends, an open without a note, a close it may not make, a reader
 * that wrecks the ring it shares with the service (its `tail` far ahead,
 * then behind), frames off the screen and more frames than may be on
 * their way, a thousand framebuffer handles. Each must fail or succeed as
 * idl/input.toml and idl/display.toml say, and afterwards both services
 * still serve: keys the test presses (QMP) arrive through a fresh ring, in
 * order, and a frame is shown.
 */
#include "petrel.h"
#include "input_if.h"
#include "display_if.h"
#include "spsc_ring.h"

#define KEY_A       30
#define KEY_B       48

static uint32_t in, disp;

/* Map a memory object the service gave, read-write; NULL if it cannot be. */
static void *map(uint32_t h, uint64_t size)
{
    uint64_t va = va_alloc(size, 0x200000);
    return sys_mem_map(self_space(), h, va, 0, size, R_READ | R_WRITE) == 0 ? (void *)va : NULL;
}

static void input_calls(void)
{
    uint8_t buf[128];
    uint64_t n = 0, id, types;
    tap_ok(input_info(in, &id, &types) == 0 && (types & 2), "input: a keyboard (EV_KEY) is there");
    tap_ok(input_name(in, 0, buf, sizeof(buf), &n) == -E_INVAL, "input: name 0 is not a string it has");
    tap_ok(input_name(in, 3, buf, sizeof(buf), &n) == -E_INVAL, "input: nor name 3");
    tap_ok(input_name(in, 1, (void *)0x10, 64, &n) == -E_FAULT, "input: its name into unmapped memory: E_FAULT");
    tap_ok(input_name(in, 1, (void *)0xffff000000001000ull, 64, &n) == -E_FAULT,
           "input: its name into the kernel's memory: E_FAULT");
    tap_ok(input_name(in, 1, buf, 0, &n) == 0 && n == 0, "input: its name into 0 bytes: none copied");
    tap_ok(input_bits(in, 0x20, buf, sizeof(buf), &n) == -E_INVAL, "input: bits of type 0x20 (past EV_MAX): E_INVAL");
    tap_ok(input_bits(in, 0xffffffffu, buf, sizeof(buf), &n) == -E_INVAL, "input: bits of type 2^32-1: E_INVAL");
    tap_ok(input_bits(in, 1, (void *)0x10, 128, &n) == -E_FAULT, "input: keys into unmapped memory: E_FAULT");
    int64_t mn, mx;
    uint32_t fuzz, flat, res;
    tap_ok(input_abs(in, 0, &mn, &mx, &fuzz, &flat, &res) == -E_INVAL, "input: a keyboard has no axis 0");
    tap_ok(input_abs(in, 0x40, &mn, &mx, &fuzz, &flat, &res) == -E_INVAL, "input: axis 0x40 (past ABS_MAX)");
    uint32_t ring = 0;
    uint64_t size = 0;
    int64_t note = sys_notify_create();
    tap_ok(input_close(in) == -E_PERM, "input: close by a client that is not the reader: E_PERM");
    tap_ok(input_open(in, (uint32_t)note, 0, &ring, &size) == -E_INVAL, "input: open with bits 0: E_INVAL");
    tap_ok(input_open(in, 0xfffff, 1, &ring, &size) < 0, "input: open with a handle it does not hold fails");
}

/* Open, wreck the ring, open again: a fresh ring the service fills. */
static struct spsc_ring *reader(uint32_t *note, uint32_t *size_out)
{
    uint32_t ring = 0;
    uint64_t size = 0;
    int64_t n = sys_notify_create();
    if (n < 0 || input_open(in, (uint32_t)n, 1, &ring, &size) != 0) {
        tap_ok(false, "input: open");
        return NULL;
    }
    struct spsc_ring *r = map(ring, size);
    tap_ok(r && spsc_attach(r, size) >= 2, "input: open gives a ring of %lu bytes the reader maps", (unsigned long)size);
    if (!r)
        return NULL;
    r->tail = ~0ull - 5;                        /* the reader's own words, gone wrong */
    r->size = 3;
    r->magic = 0;
    tap_ok(input_info(in, &(uint64_t){0}, &(uint64_t){0}) == 0, "input: the service serves with a wrecked ring");
    n = sys_notify_create();
    if (n < 0 || input_open(in, (uint32_t)n, 1, &ring, &size) != 0) {
        tap_ok(false, "input: open again");
        return NULL;
    }
    r = map(ring, size);
    uint32_t sz = r ? spsc_attach(r, size) : 0;
    tap_ok(sz >= 2 && r->head == 0 && r->tail == 0, "input: open again gives a clean ring (%u records)", sz);
    *note = (uint32_t)n;
    *size_out = sz;
    return r;
}

static void display_calls(void)
{
    uint32_t w = 0, h = 0, stride = 0;
    uint64_t screen, frame = 0, shown = 0, failed = 0;
    tap_ok(display_info(disp, &w, &h, &stride, &screen) == 0 && w && h && stride >= 4 * w,
           "display: a screen of %ux%u", w, h);
    tap_ok(display_flush(disp, w, 0, 1, 1, &frame) == -E_INVAL, "display: a frame off the screen (x): E_INVAL");
    tap_ok(display_flush(disp, 0, h, 1, 1, &frame) == -E_INVAL, "display: a frame off the screen (y): E_INVAL");
    tap_ok(display_flush(disp, 0, 0, 0xffffffffu, 0xffffffffu, &frame) == 0, "display: a frame too big is clipped");
    int busy = 0, ok = 0;
    for (int i = 0; i < 64; i++) {
        int64_t r = display_flush(disp, 0, 0, 0, 0, &frame);
        busy += r == -E_BUSY, ok += r == 0;
    }
    tap_ok(ok + busy == 64 && ok >= 1, "display: 64 frames at once: %d taken, %d E_BUSY", ok, busy);
    int handles = 0;
    for (int i = 0; i < 1000; i++) {
        uint32_t fb = 0;
        uint64_t size = 0;
        if (display_framebuffer(disp, &fb, &size) == 0 && fb) {
            handles++;
            sys_handle_close(fb);
        }
    }
    tap_ok(handles == 1000, "display: a thousand framebuffer handles, each closed: %d", handles);
    int64_t note = sys_notify_create();
    tap_ok(display_watch(disp, (uint32_t)note, 1) == 0, "display: watched");
    tap_ok(display_flush(disp, 0, 0, 0, 0, &frame) == 0 || display_flush(disp, 0, 0, 0, 0, &frame) == -E_BUSY,
           "display: a frame after all that");
    for (int i = 0; i < 200 && shown < frame; i++) {
        sys_notify_wait((uint32_t)note);
        display_shown(disp, &shown, &failed);
    }
    tap_ok(shown >= frame && failed == 0, "display: frame %lu shown, none failed", (unsigned long)frame);
}

int main(void)
{
    in = start_handle("input");
    disp = start_handle("display");
    input_calls();
    display_calls();
    uint32_t note = 0, size = 0;
    struct spsc_ring *r = reader(&note, &size);
    if (!r) {
        tap_plan();
        return 1;
    }
    printf("inhostile: press\n");
    /* a press of a, then of b: each down, up and SYN_REPORT (QEMU's one sync a press) */
    uint32_t want[6][2] = { { 1, KEY_A }, { 1, KEY_A }, { 0, 0 }, { 1, KEY_B }, { 1, KEY_B }, { 0, 0 } };
    int got = 0, right = 0, waits = 0;
    while (got < 6 && waits < 100) {
        struct spsc_rec x;
        int p = spsc_pop(r, size, &x);
        if (p == 1) {
            uint32_t type = (uint32_t)(x.b >> 48), code = (uint32_t)(x.b >> 32) & 0xffff;
            right += got < 6 && type == want[got][0] && code == want[got][1];
            got++;
        } else if (p == 0 && spsc_idle(r)) {
            sys_notify_wait(note);
            waits++;
        }
    }
    tap_ok(got == 6 && right == 6, "input: the keys pressed came through the fresh ring in order (%d of 6)", right);
    uint64_t events, queued, dropped, signals, interrupts;
    tap_ok(input_stats(in, &events, &queued, &dropped, &signals, &interrupts) == 0 && signals <= queued &&
           signals >= 1, "input: %lu signals for %lu records queued (only on empty to non-empty)",
           (unsigned long)signals, (unsigned long)queued);
    tap_ok(input_close(in) == 0 && input_close(in) == -E_PERM, "input: closed, and not twice");
    tap_plan();
    return 0;
}
