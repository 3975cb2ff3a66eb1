"""The seed corpus of the host fuzzer (tests/hostfuzz/corpus/), written from
the sequences below.

    python3 tests/hostfuzz/mkseeds.py [DIR]     (default: tests/hostfuzz/corpus)

Each seed is an input of fuzz_personality.c: a byte for the number of
processes, then operations, each its byte (its index in ops.h, 0x80 added
to hold the threads it wakes), the actor (a tid below 0x80) and its
argument bytes as fuzz_personality.c's op_* read them. Descriptors here
are literal numbers (below 0x80): the personality hands out the lowest
free one, so a sequence knows them. HOSTFUZZ_TRACE=1 shows how a seed runs:

    HOSTFUZZ_TRACE=1 build/hostfuzz/fuzz_personality tests/hostfuzz/corpus/NAME
"""
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OPS = re.findall(r"^HF_OP\((\w+)\)", (HERE / "ops.h").read_text(), re.M)

# Arguments that name table entries of fuzz_personality.c.
STREAM, DGRAM = 0, 1
O_RDONLY, O_PATH = 0, 3                 # op_open_proc_fd's flags table
ETC_HOSTNAME, ETC_PASSWD, DEV_NULL, ETC_BIG = 0, 1, 2, 13
O_RDWR_INDEX = 2                        # op_openat's flags table
LEN_1, LEN_16, LEN_65536, LEN_100000 = 1, 4, 12, 14
SIGUSR1, SIGKILL, SIGSTOP, SIGCONT, SIGCHLD = 1, 3, 4, 5, 6     # indexes into sigs[]


# RAW's calls (fuzz_personality.c's raw_calls, by index) and its argument kind of a small number.
RAW_CALLS = re.findall(r"NR_(\w+)", re.search(r"raw_calls\[\] = \{(.*?)\};",
                       (HERE / "fuzz_personality.c").read_text(), re.S).group(1))
SMALL = 0x20


NO_ACTOR = {"CLOCK", "INJECT", "DRAIN"}


def op(name, tid=1, *args, hold=False):
    """One operation: its byte, the actor, the arguments."""
    return bytes([OPS.index(name) | (0x80 if hold else 0), tid, *args])


def op0(name, *args):
    """One operation that no thread makes (CLOCK, INJECT, DRAIN): its byte, the arguments."""
    assert name in NO_ACTOR
    return bytes([OPS.index(name), *args])


def sendmsg(tid, fd, nbytes_index, fds, flags=0):
    """sendmsg on fd of the len table's entry with SCM_RIGHTS of fds (at most 3)."""
    return op("SENDMSG", tid, fd, nbytes_index | len(fds) << 3, *fds, flags)


def seed(procs, *ops):
    return bytes([procs]) + b"".join(ops)


SEEDS = {
    # a) socket.c's purge re-entered through lx_file_put: y, still a descriptor, names a freed file.
    "lifetimes-scm-purge": seed(0,
        op("SOCKETPAIR", 1, STREAM),            # a0 = 3, a1 = 4
        op("SOCKETPAIR", 1, STREAM),            # b0 = 5, b1 = 6
        op("OPENAT", 1, ETC_HOSTNAME, 0),       # x = 7
        op("OPENAT", 1, ETC_PASSWD, 0),         # y = 8
        sendmsg(1, 5, 1, [7, 8]),               # x, y in flight to b1
        op("CLOSE", 1, 7),
        op("OPENAT", 1, DEV_NULL, 0),           # z = 7
        sendmsg(1, 3, 1, [6, 7]),               # b1, z in flight to a1
        op("CLOSE", 1, 6), op("CLOSE", 1, 5), op("CLOSE", 1, 7),
        op("CLOSE", 1, 4),                      # a1's queue goes, b1's with it
        op("READ", 1, 8, LEN_16)),
    # b) a pipe write that waited after moving some bytes; another thread closes the descriptor.
    "lifetimes-pipe-partial-write": seed(0,
        op("PIPE2", 1, 0),                      # 3, 4
        op("DUP", 1, 4),                        # 5: the write end stays open
        op("THREAD", 1, 0),                     # tid 2
        op("WRITE", 1, 4, LEN_100000),          # 65536 go, then it waits
        op("CLOSE", 2, 4),
        op("READ", 2, 3, LEN_65536),            # room: tid 1 runs its write again
        op("WRITE", 1, 5, LEN_16),              # must return at most 16
        op("READ", 2, 3, LEN_65536)),
    # c) a cycle of eight epoll instances, then a wait on one of them.
    "lifetimes-epoll-cycle": seed(0,
        *[op("EPOLL_CREATE1", 1, 0) for _ in range(8)],     # 3 .. 10
        *[op("EPOLL_CTL", 1, 3 + i, 0, 4 + i) for i in range(7)],
        op("EPOLL_CTL", 1, 10, 0, 3),
        op("EPOLL_PWAIT", 1, 3, 0)),
    # d) /proc/self/fd/N of an O_PATH descriptor of a closed pipe, after another pipe took its slot.
    "lifetimes-proc-pipe-reopen": seed(0,
        op("PIPE2", 1, 0),                      # 3, 4
        op("OPEN_PROC_FD", 1, 0, 3, O_PATH),    # 5
        op("CLOSE", 1, 3), op("CLOSE", 1, 4),
        op("PIPE2", 1, 0),                      # 3, 4: another pipe
        op("OPEN_PROC_FD", 1, 0, 5, O_RDONLY),
        op("WRITE", 1, 4, LEN_16),
        op("READ", 1, 6, LEN_16)),
    # Found by the fuzzer, kept as it found it: a stopped vfork child with signal 64 pending (a
    # handler without room for its frame) gets SIGKILL, whose continuing delivers 64 first and so
    # ends the process inside the sending of SIGKILL.
    "sigkill-continues-into-a-fatal-frame": bytes.fromhex("05017a65726f17312104ffffffffff5dff0f00007100000001100000000000006f102affffffff2afffffffffff3ff6f"),
    # Found by the fuzzer: a vfork child sends its parent a fatal signal (SIGUSR2) and so ends in its own call.
    "vfork-child-kills-parent": seed(0,
        op("VFORK", 1),                         # pid 2, in 1's memory
        op("KILL", 2, 3, 12)),                  # its parent, SIGUSR2
    # Found by the fuzzer: a socket's own end in flight in its queue when it is read without room for it.
    "scm-own-end-read": seed(0,
        op("SOCKETPAIR", 1, STREAM),            # 3, 4
        sendmsg(1, 3, 1, [4, 1]),               # 4 itself in flight to 4
        op("READ", 1, 4, LEN_16),
        op("CLOSE", 1, 4),
        op("CLOSE", 1, 3)),
    # Found by the fuzzer: a write at the start of a file of the archive bigger than a page, then a read of it all.
    "rootfs-reserve-overflow": seed(0,
        op("OPENAT", 1, ETC_BIG, O_RDWR_INDEX), # 3
        op("WRITE", 1, 3, LEN_16),
        op("READ", 1, 3, LEN_65536)),
    # Found by the fuzzer: a stream sendmsg with a descriptor that fills the queue, waits and runs again:
    # the run again took the descriptor's reference again and kept it (a leak once every process ended).
    "sendmsg-restart-leak": seed(0,
        op("SOCKETPAIR", 1, STREAM),            # 3, 4
        op("OPENAT", 1, ETC_HOSTNAME, 0),       # 5
        op("THREAD", 1, 0),                     # tid 2
        sendmsg(1, 3, 6, [5]),                  # 250000 bytes: the queue takes 212992, then it waits
        op("READ", 2, 4, LEN_65536)),           # room: it runs again
    # fork, a parent waiting in wait4, the child's exit waking it.
    "fork-wait": seed(0,
        op("FORK", 1),                          # pid 2
        op("WAIT4", 1, 0, 0),
        op("EXIT", 2, 3),
        op("WAIT4", 1, 0, 1)),
    # listen, connect, accept, data and descriptors over the connection.
    "sockets-listen-accept": seed(0,
        op("SOCKET", 1, STREAM),                # 3
        op("BIND", 1, 3, 0),
        op("LISTEN", 1, 3, 1),
        op("SOCKET", 1, STREAM),                # 4
        op("CONNECT", 1, 4, 0),
        op("ACCEPT4", 1, 3, 0),                 # 5
        op("PIPE2", 1, 0),                      # 6, 7
        sendmsg(1, 4, 2, [6, 7, 4]),
        op("RECVMSG", 1, 5, LEN_16, 3),
        op("SHUTDOWN", 1, 4, 1),
        op("RECVMSG", 1, 5, LEN_16, 0)),
    # A signal with SA_RESTART interrupts a read that waits; the handler returns; the read goes on.
    "signal-restart": seed(0,
        op("SIGACTION", 1, SIGUSR1, 2 | 1 << 2),    # handler, SA_RESTART
        op("PIPE2", 1, 0),                      # 3, 4
        op("THREAD", 1, 1),                     # tid 2
        op("READ", 1, 3, LEN_16),
        op("KILL", 2, 2, SIGUSR1),              # to its own process
        op("SIGRETURN", 1),
        op("WRITE", 2, 4, LEN_1),
        op("TGKILL", 2, 0, SIGUSR1 | 1 << 4)),
    # vfork: the parent waits until the child execs.
    "vfork-exec": seed(0,
        op("VFORK", 1),                         # pid 2 runs in 1's memory
        op("EXECVE", 2, 0),
        op("FORK", 1),
        op("KILL", 1, 4, SIGKILL)),
    # Threads that end one by one, then the process.
    "threads-exit": seed(0,
        op("THREAD", 1, 0), op("THREAD", 1, 1), op("THREAD", 2, 2),
        op("EXIT", 3, 0), op("FUTEX", 2, 0), op("EXIT", 2, 0),
        op("EXIT_GROUP", 4, 7)),
    # An eventfd watched by epoll; a thread waits in epoll_pwait; another writes.
    "epoll-eventfd": seed(0,
        op("EVENTFD2", 1, 0),                   # 3
        op("EPOLL_CREATE1", 1, 0),              # 4
        op("EPOLL_CTL", 1, 4, 0, 3),
        op("THREAD", 1, 0),                     # tid 2
        op("EPOLL_PWAIT", 1, 4, 1 << 2),        # waits for ever
        op("WRITE", 2, 3, 3),                   # 8 bytes
        op("READ", 2, 3, 3),
        op("TIMERFD_CREATE", 2, 0),             # 5
        op("TIMERFD_SETTIME", 2, 5, 2 | 1 << 2),
        op("EPOLL_CTL", 2, 4, 0, 5),
        op("EPOLL_PWAIT", 1, 4, 1 << 2),
        op0("CLOCK", 2)),
    # Timed waits: nanosleep and a timerfd read woken by the clock.
    "timers": seed(0,
        op("THREAD", 1, 0),
        op("NANOSLEEP", 1, 2),
        op("TIMERFD_CREATE", 2, 0),             # 3
        op("TIMERFD_SETTIME", 2, 3, 1),
        op("READ", 2, 3, 3),
        op0("CLOCK", 1),
        op0("CLOCK", 1)),
    # mmap and munmap of anonymous and file memory, and faults.
    "memory": seed(0,
        op("MMAP", 1, 3, 0),                    # 4 pages, read-write, private anonymous
        op("OPENAT", 1, ETC_PASSWD, 0),         # 3
        op("MMAP", 1, 0, 1 | 2 << 2, 3),        # a private mapping of the file
        op("MMAP", 1, 1, 1 << 2),               # shared anonymous
        op("FORK", 1),
        op("MUNMAP", 2, 0, 0x40),
        op("FAULT", 2, 0 | 4 << 2),             # a data abort in a mapping
        op("FAULT", 1, 0),                      # at 0x10: SIGSEGV ends the process
        op("MUNMAP", 2, 1, 0)),
    # Several processes, a socket pair shared across a fork, descriptors passed between them.
    "processes-scm": seed(1,
        op("SOCKETPAIR", 1, STREAM),            # 3, 4
        op("FORK", 1),
        op("PIPE2", 1, 0),                      # 5, 6
        sendmsg(1, 3, 1, [5, 6]),
        op("CLOSE", 1, 5), op("CLOSE", 1, 6),
        op("RECVMSG", 3, 4, LEN_16, 2),
        op("OPEN_PROC_FD", 1, 1, 0x80, O_RDONLY),
        op("KILL", 1, 5 | 2 << 3, SIGSTOP),     # the third process: the child
        op("KILL", 1, 5 | 2 << 3, SIGCONT),
        op("WAIT4", 1, 0, 2)),
    # Failures on purpose: the n-th next allocation, thread and space.
    "inject": seed(0,
        op0("INJECT", 0 | 0 << 3),
        op("PIPE2", 1, 0),
        op0("INJECT", 4 | 0 << 3),
        op("THREAD", 1, 0),
        op0("INJECT", 3 | 0 << 3),
        op("FORK", 1),
        op0("INJECT", 1 | 1 << 3),
        op("MMAP", 1, 2, 0),
        op("SOCKETPAIR", 1, DGRAM)),
    # /proc: the descriptor directory, its links, another process's descriptors.
    # The tables made at first use stay, one each, when every process has ended: files.c's first
    # chunk of open files and vfs.c's sendfile buffer, both from heap.c's one line for large
    # allocations (the check told them apart by that line alone and took them for a leak).
    "sendfile-buffer-stays": seed(0,
        op("OPENAT", 1, ETC_HOSTNAME, 0),       # 3
        op("OPENAT", 1, DEV_NULL, 1),           # 4, O_WRONLY
        op("RAW", 1, RAW_CALLS.index("sendfile"), SMALL | 4, SMALL | 3, SMALL | 0, SMALL | 16, SMALL, SMALL,
           *bytes(32))),
    "procfs": seed(1,
        op("OPENAT", 1, 6, 0),                  # /proc/self/fd: 3
        op("GETDENTS", 1, 3, 3),
        op("PIPE2", 1, 0),                      # 4, 5
        op("READLINK", 1, 4),
        op("OPEN_PROC_FD", 1, 1, 4, O_PATH),
        op("OPEN_PROC_FD", 1, 0, 4, O_PATH),    # 6
        op("OPEN_PROC_FD", 1, 0, 6, 1),         # reopen for writing
        op("FAST", 1, 2, 6),
        op("CLOSE_RANGE", 1, 3, 0xff, 0)),
}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else HERE / "corpus"
    out.mkdir(parents=True, exist_ok=True)
    for name, data in SEEDS.items():
        (out / name).write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
