/* Binder at a phone's process scale: 1,000 live processes, each a Binder
 * service of its own. The parent, the context manager, forks them; each
 * opens /dev/binder and registers a node of its own with a call to handle
 * 0; the parent gets each node as a handle (and acquires it, as Android's
 * service manager does, before it frees the call), checks every child is alive,
 * calls each handle and gets an answer with the child's pid, sends each a
 * one-way call that ends it, reaps them all with their own statuses and
 * closes its descriptor. On Petrel the personality's usage (/proc/petrel)
 * must come back: every record, file, thread and memory object let go.
 * Only the parent prints, counts alone, so the transcript is Linux's. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "lxtest.h"
#include "../../bench/linux/binder_rtt.h"

#define N 1000
#define CHILD_MAP 8192
#define SLACK (128 * 1024)

enum { REGISTER = 1, ASK = 2, LEAVE = 3 };

static pid_t pids[N];
static uint32_t handles[N];
static int answered[N];

/* One BINDER_WRITE_READ of `w`'s wl bytes; the node commands it reads are
 * answered in w (as the next write); the first transaction or reply in *tr
 * (its command returned, 0 if none came). */
static uint32_t step(int fd, uint8_t *w, size_t *wl, struct binder_transaction_data *tr)
{
    static uint8_t r[256];
    struct binder_write_read b = { *wl, 0, (uint64_t)w, sizeof(r), 0, (uint64_t)r };
    if (ioctl(fd, (int)BINDER_WRITE_READ, &b) != 0)
        return BR_FAILED_REPLY;
    *wl = 0;
    uint32_t got = 0;
    for (size_t at = 0; at < b.read_consumed;) {
        uint32_t cmd;
        memcpy(&cmd, r + at, 4);
        at += 4;
        if ((cmd == BR_TRANSACTION || cmd == BR_REPLY) && !got) {
            memcpy(tr, r + at, sizeof(*tr));
            got = cmd;
        } else if (cmd == BR_INCREFS || cmd == BR_ACQUIRE) {
            *wl = binder_put(w, *wl, cmd == BR_INCREFS ? BC_INCREFS_DONE : BC_ACQUIRE_DONE, r + at, 16);
        } else if (cmd == BR_DEAD_REPLY || cmd == BR_FAILED_REPLY) {
            got = cmd;
        }
        at += (cmd >> 16) & 0x3fff;
    }
    return got;
}

/* A child: register node i, answer ASK with (pid, i * 3), end on LEAVE. */
static void child(int i, int go)
{
    char b;
    if (read(go, &b, 1) != 0)           /* end of file: the context manager is there */
        _exit(101);
    int fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
    if (fd < 0 || mmap(NULL, CHILD_MAP, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
        _exit(102);
    uint8_t w[256];
    struct binder_transaction_data tr;
    struct flat_binder_object obj = { .type = BINDER_TYPE_BINDER, .binder = 0x1000 + (uint64_t)i,
                                      .cookie = (uint64_t)i };
    uint64_t off = 0;
    size_t wl = binder_put_txn(w, 0, BC_TRANSACTION, 0, REGISTER, 0, &obj, sizeof(obj), &off, 1);
    uint32_t got;
    while (!(got = step(fd, w, &wl, &tr)))
        ;
    if (got != BR_REPLY)
        _exit(103);
    wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
    wl = binder_put(w, wl, BC_ENTER_LOOPER, NULL, 0);
    for (;;) {
        got = step(fd, w, &wl, &tr);
        if (got != BR_TRANSACTION) {
            if (got)
                _exit(104);
            continue;
        }
        uint32_t code = tr.code;
        if (code == LEAVE)
            _exit(getpid() % 200);      /* its buffer, node and mapping go with it */
        wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
        if (code != ASK || tr.target != 0x1000 + (uint64_t)i || tr.cookie != (uint64_t)i)
            _exit(105);
        static int32_t answer[2];
        answer[0] = getpid(), answer[1] = i * 3;
        wl = binder_put_txn(w, wl, BC_REPLY, 0, 0, 0, answer, sizeof(answer), NULL, 0);
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct petrel_usage before, after;
    petrel_usage_read(&before);
    int go[2];
    if (pipe(go))
        return 1;
    int made = 0;
    for (; made < N; made++) {
        pid_t pid = fork();
        if (pid == 0) {
            close(go[1]);
            child(made, go[0]);
        }
        if (pid < 0)
            break;
        pids[made] = pid;
    }
    close(go[0]);
    printf("forked %d children\n", made);

    int fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
    void *map = fd < 0 ? MAP_FAILED : mmap(NULL, 128 * 1024, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED || ioctl(fd, (int)BINDER_SET_CONTEXT_MGR, 0) != 0) {
        printf("context manager: %s\n", errname(errno));
        return 1;
    }
    close(go[1]);                       /* every child goes on */

    uint8_t w[512];
    size_t wl = binder_put(w, 0, BC_ENTER_LOOPER, NULL, 0);
    struct binder_transaction_data tr;
    int registered = 0, as_handles = 0, strangers = 0;
    while (registered + strangers < made) {
        uint32_t got = step(fd, w, &wl, &tr);
        if (!got)
            continue;
        if (got != BR_TRANSACTION)
            break;
        struct flat_binder_object obj;
        int k = -1;
        for (int j = 0; j < made; j++)
            if (pids[j] == tr.sender_pid)
                k = j;
        memcpy(&obj, (void *)tr.buffer, sizeof(obj));
        if (k >= 0 && tr.code == REGISTER && tr.data_size == sizeof(obj) && !handles[k]) {
            registered++;
            as_handles += obj.type == BINDER_TYPE_HANDLE && (uint32_t)obj.binder != 0;
            handles[k] = (uint32_t)obj.binder;
            wl = binder_put(w, wl, BC_ACQUIRE, &handles[k], 4);     /* kept past the buffer's free */
        } else {
            strangers++;
        }
        wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
        wl = binder_put_txn(w, wl, BC_REPLY, 0, 0, 0, NULL, 0, NULL, 0);
    }
    step(fd, w, &wl, &tr);              /* the last reply goes out */
    static uint8_t seen[65536];
    int distinct = 1;
    for (int j = 0; j < made; j++) {
        distinct &= handles[j] < sizeof(seen) && !seen[handles[j]];
        if (handles[j] < sizeof(seen))
            seen[handles[j]] = 1;
    }
    printf("registered %d nodes, each a handle of ours %d, distinct %d, strangers %d\n", registered, as_handles,
           distinct, strangers);

    int alive = 0;
    for (int j = 0; j < made; j++)
        alive += kill(pids[j], 0) == 0;
    printf("alive at once: %d\n", alive);

    int right = 0;
    for (int j = 0; j < made; j++) {
        int32_t ask = j;
        wl = binder_put_txn(w, wl, BC_TRANSACTION, handles[j], ASK, 0, &ask, sizeof(ask), NULL, 0);
        uint32_t got;
        while (!(got = step(fd, w, &wl, &tr)))
            ;
        if (got != BR_REPLY)
            continue;
        int32_t answer[2];
        memcpy(answer, (void *)tr.buffer, sizeof(answer));
        answered[j] = tr.data_size == sizeof(answer) && answer[0] == pids[j] && answer[1] == j * 3;
        right += answered[j];
        wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
    }
    printf("answered %d calls, each with its own pid and number\n", right);

    for (int j = 0; j < made; j++) {          /* each read gets the call's BR_TRANSACTION_COMPLETE */
        wl = binder_put_txn(w, wl, BC_TRANSACTION, handles[j], LEAVE, TF_ONE_WAY, NULL, 0, NULL, 0);
        step(fd, w, &wl, &tr);
    }
    int reaped = 0, statuses = 0, status;
    for (int j = made - 1; j >= 0; j--) {
        if (waitpid(pids[j], &status, 0) == pids[j]) {
            reaped++;
            statuses += WIFEXITED(status) && WEXITSTATUS(status) == pids[j] % 200;
        }
    }
    int none_left = waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD;
    printf("reaped %d, each with its own status %d, none left: %d\n", reaped, statuses, none_left);
    munmap(map, 128 * 1024);
    close(fd);
    int back = petrel_usage_back(&before, &after, SLACK);
    printf("the personality's usage back: %d\n", back);
    int ok = made == N && registered == N && as_handles == N && distinct && !strangers && alive == N &&
             right == N && reaped == N && statuses == N && none_left && back;
    printf("binder1k: %s\n", ok ? "done" : "FAILED");
    return ok ? 0 : 1;
}
