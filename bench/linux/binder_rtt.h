/*
 * A Binder round trip over /dev/binder (Linux's binder UAPI), shared by
 * bench.c (Linux's binder_linux beside Petrel's IPC) and lxbench.c (the
 * same client on Linux and on Petrel's personality): a context manager
 * that answers every call with the call's own bytes, and a client that
 * calls handle 0 and frees each reply's buffer with its next call.
 */
#ifndef BINDER_RTT_H
#define BINDER_RTT_H

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../../services/include/binder_uapi.h"

#define BINDER_RTT_MAX  4096            /* bytes of a call at most */

struct binder { int fd; };

__attribute__((unused)) static int binder_open(struct binder *b)
{
    b->fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
    if (b->fd < 0)
        return -1;
    return mmap(NULL, 128 * 1024, PROT_READ, MAP_PRIVATE, b->fd, 0) == MAP_FAILED ? -1 : 0;
}

static int binder_io(struct binder *b, void *wbuf, size_t wsize, void *rbuf, size_t rsize, size_t *got)
{
    struct binder_write_read bwr = { wsize, 0, (uint64_t)wbuf, rsize, 0, (uint64_t)rbuf };
    int r = ioctl(b->fd, (int)BINDER_WRITE_READ, &bwr);
    *got = bwr.read_consumed;
    return r;
}

/* Append a command and its payload to a write buffer. */
static size_t binder_put(uint8_t *w, size_t at, uint32_t cmd, const void *data, size_t len)
{
    memcpy(w + at, &cmd, 4);
    memcpy(w + at + 4, data, len);
    return at + 4 + len;
}

/* Append a transaction command (BC_TRANSACTION, BC_REPLY) to a write buffer:
 * to `handle` with `code` and `flags`, len bytes of data and noff offsets. */
__attribute__((unused)) static size_t binder_put_txn(uint8_t *w, size_t at, uint32_t cmd, uint32_t handle,
                                                     uint32_t code, uint32_t flags, const void *data, size_t len,
                                                     const uint64_t *offsets, size_t noff)
{
    struct binder_transaction_data tr = { 0 };
    tr.target = handle;
    tr.code = code;
    tr.flags = flags;
    tr.data_size = len;
    tr.buffer = (uint64_t)data;
    tr.offsets_size = noff * 8;
    tr.offsets = (uint64_t)offsets;
    return binder_put(w, at, cmd, &tr, sizeof(tr));
}

/* The context manager: reply to every transaction with its own data
 * (never returns; exits 1 when it cannot serve). `before`, if not NULL,
 * runs before each reply; `ready`, if not -1, gets a byte once it is the
 * context manager. */
__attribute__((unused)) static void binder_serve(void (*before)(const struct binder_transaction_data *), int ready)
{
    struct binder b;
    if (binder_open(&b) || ioctl(b.fd, (int)BINDER_SET_CONTEXT_MGR, 0) < 0)
        _exit(1);
    if (ready >= 0 && write(ready, "r", 1) != 1)
        _exit(1);
    static uint8_t w[256], r[512];
    static char reply[BINDER_RTT_MAX];
    size_t wl = binder_put(w, 0, BC_ENTER_LOOPER, NULL, 0), got;
    for (;;) {
        if (binder_io(&b, w, wl, r, sizeof(r), &got) < 0)
            _exit(1);
        wl = 0;
        for (size_t at = 0; at < got; ) {
            uint32_t cmd;
            memcpy(&cmd, r + at, 4);
            at += 4;
            if (cmd == BR_TRANSACTION) {
                struct binder_transaction_data tr;
                memcpy(&tr, r + at, sizeof(tr));
                at += sizeof(tr);
                size_t len = tr.data_size < sizeof(reply) ? tr.data_size : sizeof(reply);
                memcpy(reply, (void *)tr.buffer, len);
                wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
                if (tr.flags & 1)
                    continue;                   /* (a one-way call: no reply) */
                if (before)
                    before(&tr);
                struct binder_transaction_data rp = { 0 };
                rp.data_size = len;
                rp.buffer = (uint64_t)reply;
                wl = binder_put(w, wl, BC_REPLY, &rp, sizeof(rp));
            } else if (cmd == BR_NOOP || cmd == BR_TRANSACTION_COMPLETE) {
                continue;
            } else {
                at += (cmd >> 16) & 0x3fff;
            }
        }
    }
}

/* One call of len bytes to handle 0 and its reply; *pending_free: the
 * last reply's buffer, freed by this call. 0, or -1 (no reply, or not
 * all of the bytes back). */
__attribute__((unused)) static int binder_call(struct binder *b, const char *data, size_t len, uint64_t *pending_free)
{
    uint8_t w[256], r[512];
    size_t wl = 0, got;
    if (*pending_free)
        wl = binder_put(w, wl, BC_FREE_BUFFER, pending_free, 8);
    struct binder_transaction_data tr = { 0 };
    tr.target = 0;
    tr.code = 1;
    tr.data_size = len;
    tr.buffer = (uint64_t)data;
    wl = binder_put(w, wl, BC_TRANSACTION, &tr, sizeof(tr));
    for (;;) {
        if (binder_io(b, w, wl, r, sizeof(r), &got) < 0)
            return -1;
        wl = 0;
        for (size_t at = 0; at < got; ) {
            uint32_t cmd;
            memcpy(&cmd, r + at, 4);
            at += 4;
            if (cmd == BR_REPLY) {
                struct binder_transaction_data rp;
                memcpy(&rp, r + at, sizeof(rp));
                *pending_free = rp.buffer;
                return rp.data_size == len ? 0 : -1;
            }
            if (cmd == BR_DEAD_REPLY || cmd == BR_FAILED_REPLY)
                return -1;                      /* (no context manager yet, or it is gone) */
            at += (cmd >> 16) & 0x3fff;
        }
    }
}

__attribute__((unused)) static void binder_server(void)
{
    binder_serve(NULL, -1);
}

#endif
