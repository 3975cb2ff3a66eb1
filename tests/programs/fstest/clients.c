/*
 * Two clients of the file service: fstest and fspeer (this program with
 * role=peer, a process of its own). fstest drives, calling fspeer through
 * the "pair" endpoint one step at a time; fspeer acts as the second
 * client and answers with what the service told it. fstest alone prints
 * the results (TAP).
 *
 *   step 1  fspeer tries fstest's private file, its descriptor, its shared
 *           file and its directory (bits: each check as expected)
 *   step 2  fspeer reads through its descriptor of the shared file, which
 *           fstest has meanwhile unlinked
 *   step 3  fspeer creates inodes until refused
 *   step 4  fspeer fills its files until refused, then opens until refused,
 *           and holds all of it while fstest goes on working
 *   step 5  fspeer lets everything go and ends
 */
#include "fstest.h"

enum { STEP_TRESPASS = 1, STEP_REVOKED, STEP_INODES, STEP_FILL, STEP_RELEASE };

/* Bits of step 1's answer. */
enum {
    T_OPEN = 1,             /* the private file: no open to read, write or truncate */
    T_REMOVE = 2,           /* ... no unlink, rename, or rename over it */
    T_FD = 4,               /* fstest's descriptor: refused for read, write, seek, close */
    T_OWN_FD = 8,           /* the same number, opened by fspeer, names fspeer's own file */
    T_SHARED = 16,          /* the shared file: read yes; write, truncate, unlink no */
    T_DIR = 32,             /* fstest's directory: no mkdir or create inside */
    T_STAT = 64,            /* stat: the private file is not writable for fspeer */
};

static uint64_t step(uint32_t pair, uint64_t label, uint64_t arg, struct petrel_msg *m)
{
    *m = (struct petrel_msg){ MSG_INFO(label, 1, 0), { arg }, 0, 0 };
    int64_t err = sys_ipc_call(pair, m);
    return err ? (uint64_t)err : m->mr[0];
}

/* ---------------------------------------------------------------- fstest */

void clients(void)
{
    uint32_t pair = start_handle("pair"), fd = 0, sfd = 0;
    uint64_t n, pos;
    struct petrel_msg m;
    if (!pair) {
        tap_ok(false, "fs: no \"pair\" endpoint to the second client");
        return;
    }
    char buf[16] = { 0 };
    bool made = fs_mkdir(fs, P("/tmp/adir")) == 0 &&
                fs_open(fs, P("/tmp/private"), FS_O_READ | FS_O_WRITE | FS_O_CREATE, &fd) == 0 &&
                fs_write(fs, fd, "secret", 6, &n) == 0 &&
                fs_open(fs, P("/tmp/shared"), FS_O_WRITE | FS_O_CREATE | FS_O_SHARED, &sfd) == 0 &&
                fs_write(fs, sfd, "hello", 5, &n) == 0 && fs_close(fs, sfd) == 0;
    tap_ok(made && fd == 1, "fs: a private file, a shared file and a directory made (descriptor %u)", fd);

    uint64_t bits = step(pair, STEP_TRESPASS, fd, &m);
    tap_ok(bits & T_OPEN, "fs: another client cannot open a private file to read, write or truncate it");
    tap_ok(bits & T_REMOVE, "fs: another client cannot unlink or rename a private file, nor rename over it");
    tap_ok(bits & T_FD, "fs: another client's use of this client's descriptor is refused");
    tap_ok(bits & T_OWN_FD, "fs: descriptors are numbered per client (the same number names the other's own file)");
    tap_ok(bits & T_SHARED, "fs: a shared file is readable by another client, not writable or removable");
    tap_ok(bits & T_DIR, "fs: another client cannot add entries to this client's directory");
    tap_ok(bits & T_STAT, "fs: stat says another client's file is not writable");
    tap_ok(fs_seek(fs, fd, 0, 0, &pos) == 0 && fs_read(fs, fd, buf, sizeof(buf), &n) == 0 && n == 6 &&
           memcmp(buf, "secret", 6) == 0, "fs: the private file is intact after the other client's attempts");
    fs_close(fs, fd);

    tap_ok(fs_unlink(fs, P("/tmp/shared")) == 0, "fs: the owner unlinks its shared file while another client reads it");
    int64_t r = (int64_t)step(pair, STEP_REVOKED, 0, &m);
    tap_ok(r == -E_BADHANDLE, "fs: ... and the reader's descriptor is closed (%s)", error_str(r));

    r = (int64_t)step(pair, STEP_INODES, 0, &m);
    tap_ok(r == FS_CLIENT_INODES && (int64_t)m.mr[1] == -E_LIMIT && (int64_t)m.mr[2] == -E_LIMIT,
           "fs: a client's inodes stop at its quota of %d with E_LIMIT (%ld created; %s, mkdir %s)",
           FS_CLIENT_INODES, (long)r, error_str((int64_t)m.mr[1]), error_str((int64_t)m.mr[2]));
    r = (int64_t)step(pair, STEP_FILL, 0, &m);
    tap_ok(r == FS_CLIENT_BLOCKS && (int64_t)m.mr[1] == -E_LIMIT,
           "fs: a client's blocks stop at its quota of %d with E_LIMIT (%ld written; %s)", FS_CLIENT_BLOCKS,
           (long)r, error_str((int64_t)m.mr[1]));
    tap_ok(m.mr[2] == FS_CLIENT_OPEN && (int64_t)m.mr[3] == -E_LIMIT,
           "fs: a client's open files stop at its quota of %d with E_LIMIT (%lu opened; %s)", FS_CLIENT_OPEN,
           (unsigned long)m.mr[2], error_str((int64_t)m.mr[3]));

    /* The other client holds all it may: this one still works. */
    bool works = fs_mkdir(fs, P("/tmp/still")) == 0 &&
                 write_file("/tmp/still/big", big, sizeof(big)) == (int64_t)sizeof(big) &&
                 read_file("/tmp/still/big", back, sizeof(back)) == (int64_t)sizeof(big) &&
                 memcmp(big, back, sizeof(big)) == 0;
    uint32_t fds[4] = { 0 };
    for (int i = 0; i < 4; i++)
        works = works && fs_open(fs, P("/boot/fstest"), FS_O_READ, &fds[i]) == 0;
    for (int i = 0; i < 4; i++)
        fs_close(fs, fds[i]);
    tap_ok(works, "fs: while another client is at all its quotas, this one creates, opens and writes files");
    bool mine = fs_unlink(fs, P("/tmp/still/big")) == 0 && fs_unlink(fs, P("/tmp/still")) == 0 &&
                fs_unlink(fs, P("/tmp/private")) == 0 && fs_unlink(fs, P("/tmp/adir")) == 0;
    r = (int64_t)step(pair, STEP_RELEASE, 0, &m);
    tap_ok(mine && r == 0, "fs: both clients remove what they made (%s)", error_str(r));
}

/* ---------------------------------------------------------------- fspeer */

static uint8_t block[4096];

/* Step 1: fstest's private file, descriptor `theirs`, shared file and
 * directory, as a stranger. */
static uint64_t trespass(uint32_t theirs, uint32_t *shared_fd)
{
    uint64_t bits = 0, size, n;
    uint32_t fd, kind, writable;
    char buf[8];
    if (fs_open(fs, P("/tmp/private"), FS_O_READ, &fd) == -E_PERM &&
        fs_open(fs, P("/tmp/private"), FS_O_WRITE, &fd) == -E_PERM &&
        fs_open(fs, P("/tmp/private"), FS_O_READ | FS_O_TRUNC, &fd) == -E_PERM &&
        fs_open(fs, P("/tmp/private"), FS_O_WRITE | FS_O_CREATE | FS_O_TRUNC, &fd) == -E_PERM)
        bits |= T_OPEN;
    if (fs_unlink(fs, P("/tmp/private")) == -E_PERM && fs_rename(fs, P("/tmp/private"), P("/tmp/stolen")) == -E_PERM &&
        write_file("/tmp/decoy", "x", 1) == 1 && fs_rename(fs, P("/tmp/decoy"), P("/tmp/private")) == -E_PERM &&
        fs_unlink(fs, P("/tmp/decoy")) == 0)
        bits |= T_REMOVE;
    if (fs_read(fs, theirs, buf, sizeof(buf), &n) == -E_BADHANDLE && fs_write(fs, theirs, "x", 1, &n) == -E_BADHANDLE &&
        fs_seek(fs, theirs, 0, 0, &n) == -E_BADHANDLE && fs_close(fs, theirs) == -E_BADHANDLE)
        bits |= T_FD;
    bool read = fs_open(fs, P("/tmp/shared"), FS_O_READ, shared_fd) == 0 &&
                fs_read(fs, *shared_fd, buf, sizeof(buf), &n) == 0 && n == 5 && memcmp(buf, "hello", 5) == 0;
    if (read && *shared_fd == theirs)
        bits |= T_OWN_FD;
    if (read && fs_open(fs, P("/tmp/shared"), FS_O_WRITE, &fd) == -E_PERM &&
        fs_open(fs, P("/tmp/shared"), FS_O_READ | FS_O_APPEND, &fd) == -E_PERM &&
        fs_open(fs, P("/tmp/shared"), FS_O_READ | FS_O_TRUNC, &fd) == -E_PERM &&
        fs_unlink(fs, P("/tmp/shared")) == -E_PERM)
        bits |= T_SHARED;
    if (fs_mkdir(fs, P("/tmp/adir/mine")) == -E_PERM &&
        fs_open(fs, P("/tmp/adir/mine"), FS_O_WRITE | FS_O_CREATE, &fd) == -E_PERM &&
        write_file("/tmp/decoy", "x", 1) == 1 && fs_rename(fs, P("/tmp/decoy"), P("/tmp/adir/mine")) == -E_PERM &&
        fs_unlink(fs, P("/tmp/decoy")) == 0)
        bits |= T_DIR;
    if (fs_stat(fs, P("/tmp/private"), &size, &kind, &writable) == 0 && size == 6 && !writable &&
        fs_stat(fs, P("/tmp"), &size, &kind, &writable) == 0 && writable)
        bits |= T_STAT;
    return bits;
}

static void name_of(char *name, size_t size, unsigned i)
{
    snprintf(name, size, "/tmp/p%u", i);
}

/* Step 3: files until refused. The count, the refusal and mkdir's then. */
static void fill_inodes(struct petrel_msg *m)
{
    char name[32];
    unsigned i = 0;
    int64_t err = 0;
    for (; i < 1000 && err == 0; i++) {
        name_of(name, sizeof(name), i);
        err = write_file(name, "", 0);
    }
    m->mr[0] = i - 1;
    m->mr[1] = (uint64_t)err;
    m->mr[2] = (uint64_t)fs_mkdir(fs, P("/tmp/pdir"));
    m->info = MSG_INFO(0, 3, 0);
}

/* Step 4: blocks, file after file, until refused; then opens until
 * refused, kept open. Blocks written, the refusal, opens, the refusal. */
static void fill_blocks_and_opens(struct petrel_msg *m)
{
    char name[32];
    uint64_t blocks = 0, n;
    int64_t err = 0;
    uint32_t fd;
    for (unsigned i = 0; i < 1000 && (err == 0 || err == -E_RANGE); i++) {
        name_of(name, sizeof(name), i);
        fd = 0;
        err = fs_open(fs, P(name), FS_O_WRITE, &fd);
        while (err == 0 && (err = fs_write(fs, fd, block, sizeof(block), &n)) == 0 && n == sizeof(block))
            blocks++;
        fs_close(fs, fd);
    }
    m->mr[0] = blocks;
    m->mr[1] = (uint64_t)err;
    uint64_t opens = 0;
    err = 0;
    for (; opens < 1000 && err == 0; opens++)
        err = fs_open(fs, P("/boot/fstest"), FS_O_READ, &fd);
    m->mr[2] = opens - 1;
    m->mr[3] = (uint64_t)err;
    m->info = MSG_INFO(0, 4, 0);
}

/* Step 5: close everything (descriptors 1 up) and remove every file. */
static int64_t release(void)
{
    char name[32];
    int64_t err = 0;
    for (uint32_t fd = 1; fd <= FS_CLIENT_OPEN; fd++)
        if (fs_close(fs, fd) != 0)
            err = -E_BADHANDLE;
    for (unsigned i = 0; i < FS_CLIENT_INODES; i++) {
        name_of(name, sizeof(name), i);
        int64_t r = fs_unlink(fs, P(name));
        err = err ? err : r;
    }
    return err;
}

void peer(void)
{
    uint32_t pair = start_handle("pair"), shared_fd = 0;
    struct petrel_msg m = { 0 };
    if (!pair || sys_ipc_recv(pair, &m) != 0) {
        puts("fspeer: no \"pair\" endpoint");
        return;
    }
    for (;;) {
        uint64_t label = MSG_LABEL(m.info), arg = m.mr[0];
        uint64_t n;
        m = (struct petrel_msg){ MSG_INFO(0, 1, 0), { 0 }, 0, 0 };
        if (label == STEP_TRESPASS)
            m.mr[0] = trespass((uint32_t)arg, &shared_fd);
        else if (label == STEP_REVOKED)
            m.mr[0] = (uint64_t)fs_read(fs, shared_fd, block, 8, &n);
        else if (label == STEP_INODES)
            fill_inodes(&m);
        else if (label == STEP_FILL)
            fill_blocks_and_opens(&m);
        else if (label == STEP_RELEASE) {
            m.mr[0] = (uint64_t)release();
            sys_ipc_reply(0, &m);
            return;
        }
        if (sys_ipc_reply_recv(pair, &m) != 0)
            return;
    }
}
