/* Binder's scatter-gather transactions (BC_TRANSACTION_SG, BC_REPLY_SG):
 * buffer objects (BINDER_TYPE_PTR) copied into the receiver's buffer and
 * pointed to from their parents, an array of descriptors in a buffer
 * (BINDER_TYPE_FDA) beside a single one (BINDER_TYPE_FD), the array's
 * descriptors closed when the buffer is freed and the single one not;
 * the calls Linux refuses (too long, a parent not before, a pointer past
 * its parent, fixups out of order, an array whose parent is no buffer, a
 * parent at offset 0, an odd scatter-gather size); and the node queries
 * BINDER_GET_NODE_DEBUG_INFO and BINDER_GET_NODE_INFO_FOR_REF. The server
 * (the context manager, its node taking descriptors) prints what it got. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "lxtest.h"
#include "../../bench/linux/binder_rtt.h"

#define MAP 65536

/* The root buffer a call carries: a pointer to a second buffer, then two descriptors. */
struct root { uint64_t magic; uint64_t child; int32_t fds[2]; };

static uint8_t r[1024];
static uint8_t done_w[256];             /* BC_INCREFS_DONE and BC_ACQUIRE_DONE for what was read */
static size_t done_len;

/* One write and read on fd; the first transaction or reply into *tr, the
 * commands read named into `seen`; returns the first of BR_TRANSACTION,
 * BR_REPLY, BR_FAILED_REPLY, BR_DEAD_REPLY it read, or 0. */
static uint32_t step(int fd, const void *w, size_t wl, struct binder_transaction_data *tr)
{
    struct binder_write_read b = { wl, 0, (uint64_t)w, sizeof(r), 0, (uint64_t)r };
    if (ioctl(fd, (int)BINDER_WRITE_READ, &b) != 0)
        return 1;
    uint32_t got = 0;
    for (size_t at = 0; at < b.read_consumed;) {
        uint32_t cmd;
        memcpy(&cmd, r + at, 4);
        at += 4;
        if (!got && (cmd == BR_TRANSACTION || cmd == BR_REPLY))
            memcpy(tr, r + at, sizeof(*tr));
        if (!got && (cmd == BR_TRANSACTION || cmd == BR_REPLY || cmd == BR_FAILED_REPLY || cmd == BR_DEAD_REPLY))
            got = cmd;
        if ((cmd == BR_INCREFS || cmd == BR_ACQUIRE) && done_len + 20 <= sizeof(done_w))
            done_len = binder_put(done_w, done_len, cmd == BR_INCREFS ? BC_INCREFS_DONE : BC_ACQUIRE_DONE, r + at, 16);
        at += (cmd >> 16) & 0x3fff;
    }
    return got;
}

/* Commands alone: nothing is read. */
static void write_only(int fd, const void *w, size_t wl)
{
    struct binder_write_read b = { wl, 0, (uint64_t)w, 0, 0, 0 };
    ioctl(fd, (int)BINDER_WRITE_READ, &b);
}

static uint32_t until(int fd, const void *w, size_t wl, struct binder_transaction_data *tr)
{
    uint32_t got = step(fd, w, wl, tr);
    while (!got)
        got = step(fd, NULL, 0, tr);
    return got;
}

static const char *name(uint32_t cmd)
{
    return cmd == BR_REPLY ? "BR_REPLY" : cmd == BR_FAILED_REPLY ? "BR_FAILED_REPLY" :
           cmd == BR_DEAD_REPLY ? "BR_DEAD_REPLY" : cmd == BR_TRANSACTION ? "BR_TRANSACTION" : "?";
}

/* A scatter-gather call of `data` with objects at `offs`. */
static uint32_t sg_call(int fd, uint32_t code, uint32_t flags, const void *data, size_t len, const uint64_t *offs,
                        size_t noff, uint64_t buffers, struct binder_transaction_data *tr)
{
    struct binder_transaction_data_sg sg = { { 0 }, buffers };
    sg.tr.target = 0;
    sg.tr.code = code;
    sg.tr.flags = flags;
    sg.tr.data_size = len;
    sg.tr.buffer = (uint64_t)data;
    sg.tr.offsets_size = noff * 8;
    sg.tr.offsets = (uint64_t)offs;
    uint8_t w[128];
    size_t wl = binder_put(w, 0, BC_TRANSACTION_SG, &sg, sizeof(sg));
    return until(fd, w, wl, tr);
}

/* BINDER_GET_EXTENDED_ERROR: the last transaction's fate (its number is
 * Linux's debug id, which only says whether there was one). */
static void extended(int fd)
{
    struct binder_extended_error ee = { 7, 7, 7 };
    int e = ioctl(fd, (int)BINDER_GET_EXTENDED_ERROR, &ee);
    printf("client: extended error: %d, a transaction %d, %s, param %d\n", e, ee.id != 0,
           ee.command == BR_OK ? "BR_OK" : name(ee.command), ee.param);
}

static int is_open(int fd)
{
    return fcntl(fd, F_GETFD) >= 0;
}

static void server(int ready)
{
    int fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
    char *map = mmap(NULL, MAP, PROT_READ, MAP_PRIVATE, fd, 0);
    struct flat_binder_object self = { BINDER_TYPE_BINDER, FLAT_BINDER_FLAG_ACCEPTS_FDS, 0x5150, 0x77 };
    /* (Linux lets a dead manager's context go in a work queue: the last
     * program's may still hold it for a moment) */
    int set = -1;
    for (int tries = 0; map != MAP_FAILED && tries < 200 && (set = ioctl(fd, (int)BINDER_SET_CONTEXT_MGR_EXT, &self)) &&
                        errno == EBUSY; tries++)
        usleep(10000);
    if (set)
        _exit(2);
    struct binder_node_debug_info di = { 0 };
    int e = ioctl(fd, (int)BINDER_GET_NODE_DEBUG_INFO, &di);
    printf("server: node debug info after 0: %d ptr %llx cookie %llx strong %u weak %u\n", e,
           (unsigned long long)di.ptr, (unsigned long long)di.cookie, di.has_strong_ref, di.has_weak_ref);
    di = (struct binder_node_debug_info){ 0x5150, 0, 0, 0 };
    e = ioctl(fd, (int)BINDER_GET_NODE_DEBUG_INFO, &di);
    printf("server: node debug info after %x: %d ptr %llx\n", 0x5150, e, (unsigned long long)di.ptr);
    write(ready, "r", 1);
    uint8_t w[256];
    size_t wl = binder_put(w, 0, BC_ENTER_LOOPER, NULL, 0);
    struct binder_transaction_data tr;
    uint32_t handle = 0;
    for (;;) {
        uint32_t got = until(fd, w, wl, &tr);
        wl = 0;
        if (got != BR_TRANSACTION)
            continue;
        const uint8_t *data = (const uint8_t *)tr.buffer;
        if (tr.code == 1) {
            /* header, PTR root, PTR child, FDA, FD */
            struct binder_buffer_object root, child;
            struct flat_binder_object one;
            memcpy(&root, data + 8, sizeof(root));
            memcpy(&child, data + 48, sizeof(child));
            memcpy(&one, data + 120, sizeof(one));
            const struct root *rt = (const struct root *)root.buffer;
            int in_map = root.buffer >= (uint64_t)map && root.buffer < (uint64_t)map + MAP &&
                         child.buffer >= (uint64_t)map && child.buffer < (uint64_t)map + MAP;
            printf("server: both buffers in our mapping %d, root's pointer is the child's copy %d, child says '%s'\n",
                   in_map, rt->child == child.buffer, (const char *)child.buffer);
            int a = rt->fds[0], b = rt->fds[1], c = (int)one.binder;
            char x[8] = { 0 }, y[8] = { 0 }, z[8] = { 0 };
            read(a, x, sizeof(x) - 1);
            read(b, y, sizeof(y) - 1);
            read(c, z, sizeof(z) - 1);
            printf("server: descriptors read '%s' '%s' '%s', close on exec %d %d %d\n", x, y, z,
                   fcntl(a, F_GETFD) == FD_CLOEXEC, fcntl(b, F_GETFD) == FD_CLOEXEC, fcntl(c, F_GETFD) == FD_CLOEXEC);
            write_only(fd, w, binder_put(w, 0, BC_FREE_BUFFER, &tr.buffer, 8));
            printf("server: after the free the array's are open %d %d, the single one %d\n", is_open(a), is_open(b),
                   is_open(c));
            close(c);
            /* A scatter-gather reply: one buffer. */
            static char text[] = "a reply in pieces";
            struct binder_buffer_object rp = { BINDER_TYPE_PTR, 0, (uint64_t)text, sizeof(text), 0, 0 };
            static uint8_t rdata[48];
            static uint64_t roffs[1] = { 8 };
            memcpy(rdata + 8, &rp, sizeof(rp));
            struct binder_transaction_data_sg sg = { { 0 }, 24 };
            sg.tr.data_size = sizeof(rdata);
            sg.tr.buffer = (uint64_t)rdata;
            sg.tr.offsets_size = 8;
            sg.tr.offsets = (uint64_t)roffs;
            wl = binder_put(w, 0, BC_REPLY_SG, &sg, sizeof(sg));
        } else if (tr.code == 3) {
            /* A node of the client's, as a handle of ours, kept. */
            struct flat_binder_object h;
            memcpy(&h, data, sizeof(h));
            handle = (uint32_t)h.binder;
            wl = binder_put(w, 0, BC_ACQUIRE, &handle, 4);
            wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
            struct binder_transaction_data rp = { 0 };
            wl = binder_put(w, wl, BC_REPLY, &rp, sizeof(rp));
        } else if (tr.code == 4) {
            /* ... its counts, once the client has answered for them. */
            wl = binder_put(w, 0, BC_FREE_BUFFER, &tr.buffer, 8);
            write_only(fd, w, wl);
            struct binder_node_info_for_ref info = { handle, 0, 0, 0, 0, 0 };
            e = ioctl(fd, (int)BINDER_GET_NODE_INFO_FOR_REF, &info);
            printf("server: info for our handle: %d strong %u weak %u\n", e, info.strong_count, info.weak_count);
            info = (struct binder_node_info_for_ref){ handle, 0, 0, 1, 0, 0 };
            e = ioctl(fd, (int)BINDER_GET_NODE_INFO_FOR_REF, &info);
            printf("server: with a reserved field set: %d %s\n", e, e ? errname(errno) : "");
            info = (struct binder_node_info_for_ref){ 999, 0, 0, 0, 0, 0 };
            e = ioctl(fd, (int)BINDER_GET_NODE_INFO_FOR_REF, &info);
            printf("server: for a handle we lack: %d %s\n", e, e ? errname(errno) : "");
            wl = binder_put(w, 0, BC_RELEASE, &handle, 4);
            struct binder_transaction_data rp = { 0 };
            wl = binder_put(w, wl, BC_REPLY, &rp, sizeof(rp));
        } else {
            wl = binder_put(w, 0, BC_FREE_BUFFER, &tr.buffer, 8);
            struct binder_transaction_data rp = { 0 };
            wl = binder_put(w, wl, BC_REPLY, &rp, sizeof(rp));
        }
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int ready[2];
    if (pipe(ready))
        return 1;
    pid_t s = fork();
    if (s == 0) {
        close(ready[0]);
        server(ready[1]);
    }
    char c;
    close(ready[1]);
    if (read(ready[0], &c, 1) != 1) {
        printf("no server\n");
        return 1;
    }
    int fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
    if (fd < 0 || mmap(NULL, MAP, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
        return 1;
    int p1[2], p2[2], p3[2];
    if (pipe(p1) || pipe(p2) || pipe(p3))
        return 1;
    write(p1[1], "one", 3);
    write(p2[1], "two", 3);
    write(p3[1], "three", 5);

    /* header (8), PTR root (40) @8, PTR child (40) @48, FDA (32) @88, FD (24) @120 */
    static char hello[] = "hello scatter";
    static struct root root;
    root = (struct root){ 0x524f4f54, 0, { p1[0], p2[0] } };
    static uint8_t data[144];
    struct binder_buffer_object rb = { BINDER_TYPE_PTR, 0, (uint64_t)&root, sizeof(root), 0, 0 };
    struct binder_buffer_object cb = { BINDER_TYPE_PTR, BINDER_BUFFER_FLAG_HAS_PARENT, (uint64_t)hello, sizeof(hello),
                                       0, 8 };
    struct binder_fd_array_object fa = { BINDER_TYPE_FDA, 0, 2, 0, 16 };
    struct flat_binder_object one = { BINDER_TYPE_FD, 0, (uint64_t)p3[0], 0 };
    memcpy(data + 8, &rb, sizeof(rb));
    memcpy(data + 48, &cb, sizeof(cb));
    memcpy(data + 88, &fa, sizeof(fa));
    memcpy(data + 120, &one, sizeof(one));
    static uint64_t offs[4] = { 8, 48, 88, 120 };
    struct binder_transaction_data tr;
    uint32_t got = sg_call(fd, 1, TF_ACCEPT_FDS, data, sizeof(data), offs, 4, 24 + 16, &tr);
    printf("client: the call: %s", name(got));
    if (got == BR_REPLY) {
        struct binder_buffer_object rp;
        memcpy(&rp, (const uint8_t *)tr.buffer + 8, sizeof(rp));
        printf(", the reply's buffer says '%s'", (const char *)rp.buffer);
        uint8_t w[16];
        write_only(fd, w, binder_put(w, 0, BC_FREE_BUFFER, &tr.buffer, 8));
    }
    printf("\n");
    extended(fd);

    /* The calls Linux refuses. */
    struct { const char *what; uint64_t buffers; void (*edit)(uint8_t *); } bad[] = {
        { "a buffer longer than the scatter-gather bytes", 24, NULL },
        { "an odd scatter-gather size", 41, NULL },
    };
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        got = sg_call(fd, 2, TF_ACCEPT_FDS, data, sizeof(data), offs, 4, bad[i].buffers, &tr);
        printf("client: %s: %s\n", bad[i].what, name(got));
        extended(fd);
    }
    extended(fd);                               /* (read: cleared) */
    struct binder_transaction_data nowhere = { 0 };
    nowhere.target = 77;
    uint8_t wn[80];
    printf("client: a call to a handle it lacks: %s\n",
           name(until(fd, wn, binder_put(wn, 0, BC_TRANSACTION, &nowhere, sizeof(nowhere)), &tr)));
    extended(fd);
    uint8_t copy[144];
    /* a child whose parent comes after it */
    memcpy(copy, data, sizeof(copy));
    cb.parent = 1;
    memcpy(copy + 48, &cb, sizeof(cb));
    printf("client: a parent not before its child: %s\n",
           name(sg_call(fd, 2, TF_ACCEPT_FDS, copy, 88, offs, 2, 40, &tr)));
    /* a pointer past its parent's end */
    cb.parent = 0;
    cb.parent_offset = sizeof(root) - 4;
    memcpy(copy + 48, &cb, sizeof(cb));
    printf("client: a pointer past its parent's end: %s\n",
           name(sg_call(fd, 2, TF_ACCEPT_FDS, copy, 88, offs, 2, 40, &tr)));
    /* fixups out of order: the array at 16, then a child at 8 of the same parent */
    cb.parent_offset = 8;
    struct binder_fd_array_object late = { BINDER_TYPE_FDA, 0, 1, 0, 16 };
    static uint8_t order[128];
    memcpy(order + 8, &rb, sizeof(rb));
    memcpy(order + 48, &late, sizeof(late));
    memcpy(order + 80, &cb, sizeof(cb));
    static uint64_t ooffs[3] = { 8, 48, 80 };
    printf("client: an array at 16 then a pointer at 8 of one parent: %s\n",
           name(sg_call(fd, 2, TF_ACCEPT_FDS, order, 120, ooffs, 3, 40, &tr)));
    memcpy(order + 48, &cb, sizeof(cb));        /* ... and the other way round: both in order */
    memcpy(order + 88, &late, sizeof(late));
    static uint64_t goffs[3] = { 8, 48, 88 };
    got = sg_call(fd, 2, TF_ACCEPT_FDS, order, 120, goffs, 3, 40, &tr);
    printf("client: a pointer at 8 then an array at 16: %s\n", name(got));
    if (got == BR_REPLY) {
        uint8_t w[16];
        write_only(fd, w, binder_put(w, 0, BC_FREE_BUFFER, &tr.buffer, 8));
    }
    /* an array whose parent is a descriptor */
    struct binder_fd_array_object orphan = { BINDER_TYPE_FDA, 0, 1, 0, 0 };
    static uint8_t odata[64];
    memcpy(odata + 8, &one, sizeof(one));
    memcpy(odata + 32, &orphan, sizeof(orphan));
    static uint64_t o2[2] = { 8, 32 };
    printf("client: an array whose parent is no buffer: %s\n",
           name(sg_call(fd, 2, TF_ACCEPT_FDS, odata, sizeof(odata), o2, 2, 0, &tr)));
    /* a parent at data offset 0 (Linux never fixes up in it) */
    static uint8_t zdata[80];
    memcpy(zdata, &rb, sizeof(rb));
    memcpy(zdata + 40, &cb, sizeof(cb));
    static uint64_t z2[2] = { 0, 40 };
    printf("client: a parent at offset 0: %s\n", name(sg_call(fd, 2, TF_ACCEPT_FDS, zdata, 80, z2, 2, 40, &tr)));

    /* A node of ours for the server to count. */
    struct flat_binder_object node = { BINDER_TYPE_BINDER, 0, 0xabc0, 0xdef };
    static uint64_t n1[1] = { 0 };
    struct binder_transaction_data call = { 0 };
    call.code = 3;
    call.data_size = sizeof(node);
    call.buffer = (uint64_t)&node;
    call.offsets_size = 8;
    call.offsets = (uint64_t)n1;
    uint8_t w[128];
    size_t wl = binder_put(w, 0, BC_TRANSACTION, &call, sizeof(call));
    got = until(fd, w, wl, &tr);
    printf("client: the node's call: %s\n", name(got));
    wl = binder_put(w, 0, BC_FREE_BUFFER, &tr.buffer, 8);
    memcpy(w + wl, done_w, done_len);           /* (what the node's counts asked for) */
    wl += done_len;
    call = (struct binder_transaction_data){ 0 };
    call.code = 4;
    wl = binder_put(w, wl, BC_TRANSACTION, &call, sizeof(call));
    printf("client: the counts' call: %s\n", name(until(fd, w, wl, &tr)));
    struct binder_node_info_for_ref info = { 0, 0, 0, 0, 0, 0 };
    int e = ioctl(fd, (int)BINDER_GET_NODE_INFO_FOR_REF, &info);
    printf("client: node info, not the context manager: %d %s\n", e, e ? errname(errno) : "");
    struct binder_node_debug_info di = { 0 };
    e = ioctl(fd, (int)BINDER_GET_NODE_DEBUG_INFO, &di);
    printf("client: its node debug info: %d ptr %llx cookie %llx\n", e, (unsigned long long)di.ptr,
           (unsigned long long)di.cookie);
    /* The queries with addresses that are no memory. */
    e = ioctl(fd, (int)BINDER_GET_NODE_DEBUG_INFO, (void *)8);
    printf("client: node debug info at a bad address: %d %s\n", e, e ? errname(errno) : "");
    e = ioctl(fd, (int)BINDER_GET_NODE_INFO_FOR_REF, (void *)8);
    printf("client: node info at a bad address: %d %s\n", e, e ? errname(errno) : "");
    until(fd, wn, binder_put(wn, 0, BC_TRANSACTION, &nowhere, sizeof(nowhere)), &tr);
    e = ioctl(fd, (int)BINDER_GET_EXTENDED_ERROR, (void *)8);
    printf("client: extended error to a bad address: %d %s\n", e, e ? errname(errno) : "");
    extended(fd);                               /* (cleared all the same) */
    kill(s, SIGKILL);
    waitpid(s, NULL, 0);
    printf("bindersg: done\n");
    return 0;
}
