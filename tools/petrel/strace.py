"""The strace view: Linux calls, as strace prints them, from the monitor's linux group.

The personality records each call it serves (services/linux/lxtrace.c):
lx_enter (process, thread, number, x0, x1), lx_args (x2..x5), lx_data (the
strings the call names and the first bytes of a buffer it writes, or after
it, of one it filled), lx_exit (the result). `Strace.feed` takes events as
they come (from a recording, or live from the recorder while the guest runs)
and gives a line for each answered call:

    [pid 5] openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 3
    [pid 5] read(3, "root:x:0:0:root:/root:/bin/sh\\n"..., 4096) = 94
    [pid 5] openat(AT_FDCWD, "/nope", O_RDONLY) = -1 ENOENT (No such file or directory)

Arguments are decoded by the table below (the calls busybox and the C
libraries make most); any other call shows its first three arguments in hex,
as strace shows a call it does not know.
"""
import errno
import os
import re

from petrel import paths

AT_FDCWD = -100

# Argument kinds: fd, dirfd (AT_FDCWD by name), str (a recorded string),
# in (a buffer passed in: recorded bytes, its length the next argument),
# out (a buffer filled: its recorded bytes once answered), int, u, x,
# oflags (open's), fdflags (O_CLOEXEC, O_NONBLOCK alone), mode (octal),
# atflags, prot, mmap, sig, whence, ptr. openat's mode shows only with
# O_CREAT or O_TMPFILE, as strace shows it.
SIGNATURES = {
    "read": ["fd", "out", "u"], "write": ["fd", "in", "u"], "pread64": ["fd", "out", "u", "int"],
    "pwrite64": ["fd", "in", "u", "int"], "readv": ["fd", "ptr", "u"], "writev": ["fd", "ptr", "u"],
    "openat": ["dirfd", "str", "oflags", "mode"], "close": ["fd"], "lseek": ["fd", "int", "whence"],
    "fstat": ["fd", "ptr"], "newfstatat": ["dirfd", "str", "ptr", "atflags"],
    "statx": ["dirfd", "str", "atflags", "x", "ptr"], "faccessat": ["dirfd", "str", "x"],
    "faccessat2": ["dirfd", "str", "x", "atflags"], "readlinkat": ["dirfd", "str", "out", "u"],
    "mkdirat": ["dirfd", "str", "mode"], "unlinkat": ["dirfd", "str", "atflags"],
    "renameat": ["dirfd", "str", "dirfd", "str"], "renameat2": ["dirfd", "str", "dirfd", "str", "x"],
    "linkat": ["dirfd", "str", "dirfd", "str", "atflags"], "symlinkat": ["str", "dirfd", "str"],
    "mknodat": ["dirfd", "str", "mode", "x"], "fchmodat": ["dirfd", "str", "mode"],
    "fchownat": ["dirfd", "str", "int", "int", "atflags"], "utimensat": ["dirfd", "str", "ptr", "atflags"],
    "chdir": ["str"], "fchdir": ["fd"], "chroot": ["str"], "getcwd": ["out", "u"], "truncate": ["str", "int"],
    "ftruncate": ["fd", "int"], "statfs": ["str", "ptr"], "fstatfs": ["fd", "ptr"],
    "getdents64": ["fd", "ptr", "u"], "dup": ["fd"], "dup3": ["fd", "fd", "fdflags"], "fcntl": ["fd", "int", "x"],
    "ioctl": ["fd", "x", "x"], "pipe2": ["ptr", "fdflags"], "execve": ["str", "ptr", "ptr"],
    "exit": ["int"], "exit_group": ["int"], "wait4": ["int", "ptr", "x", "ptr"], "kill": ["int", "sig"],
    "tgkill": ["int", "int", "sig"], "clone": ["x", "ptr", "ptr", "ptr", "ptr"], "clone3": ["ptr", "u"],
    "brk": ["ptr"], "mmap": ["ptr", "u", "prot", "mmap", "fd", "x"], "munmap": ["ptr", "u"],
    "mprotect": ["ptr", "u", "prot"], "madvise": ["ptr", "u", "int"],
    "rt_sigaction": ["sig", "ptr", "ptr", "u"], "rt_sigprocmask": ["int", "ptr", "ptr", "u"],
    "rt_sigreturn": [], "set_tid_address": ["ptr"], "set_robust_list": ["ptr", "u"],
    "getpid": [], "getppid": [], "gettid": [], "getuid": [], "geteuid": [], "getgid": [], "getegid": [],
    "uname": ["ptr"], "getrandom": ["ptr", "u", "x"], "prlimit64": ["int", "int", "ptr", "ptr"],
    "clock_gettime": ["int", "ptr"], "clock_nanosleep": ["int", "x", "ptr", "ptr"], "nanosleep": ["ptr", "ptr"],
    "sched_yield": [], "futex": ["ptr", "x", "int", "ptr"], "ppoll": ["ptr", "u", "ptr", "ptr", "u"],
    "pselect6": ["int", "ptr", "ptr", "ptr", "ptr", "ptr"], "socket": ["int", "int", "int"],
    "bind": ["fd", "ptr", "u"], "listen": ["fd", "int"], "accept4": ["fd", "ptr", "ptr", "fdflags"],
    "connect": ["fd", "ptr", "u"], "sendto": ["fd", "in", "u", "x", "ptr", "u"],
    "recvfrom": ["fd", "out", "u", "x", "ptr", "ptr"], "setsockopt": ["fd", "int", "int", "ptr", "u"],
    "getsockopt": ["fd", "int", "int", "ptr", "ptr"], "shutdown": ["fd", "int"],
    "getsockname": ["fd", "ptr", "ptr"], "getpeername": ["fd", "ptr", "ptr"],
    "umask": ["mode"], "setpgid": ["int", "int"], "getpgid": ["int"], "setsid": [],
    "mount": ["str", "str", "str", "x", "ptr"], "umount2": ["str", "x"], "memfd_create": ["str", "x"],
    "inotify_add_watch": ["fd", "str", "x"], "eventfd2": ["u", "fdflags"], "epoll_create1": ["fdflags"],
    "epoll_ctl": ["fd", "int", "fd", "ptr"], "epoll_pwait": ["fd", "ptr", "int", "int", "ptr", "u"],
    "sync": [], "fsync": ["fd"], "fdatasync": ["fd"], "rseq": ["ptr", "u", "x", "x"],
    "sendfile": ["fd", "fd", "ptr", "u"], "flock": ["fd", "x"], "sysinfo": ["ptr"],
}
# Results shown in hex (addresses).
HEX_RESULTS = {"brk", "mmap"}

# AArch64's values (arch/arm64's fcntl.h: O_DIRECTORY, O_NOFOLLOW, O_DIRECT,
# O_LARGEFILE differ from x86's); the ones made of others first.
O_FLAGS = [(0o20040000, "O_TMPFILE"), (0o4010000, "O_SYNC"), (0o100, "O_CREAT"), (0o200, "O_EXCL"),
           (0o400, "O_NOCTTY"), (0o1000, "O_TRUNC"), (0o2000, "O_APPEND"), (0o4000, "O_NONBLOCK"),
           (0o10000, "O_DSYNC"), (0o40000, "O_DIRECTORY"), (0o100000, "O_NOFOLLOW"), (0o200000, "O_DIRECT"),
           (0o400000, "O_LARGEFILE"), (0o1000000, "O_NOATIME"), (0o2000000, "O_CLOEXEC"), (0o10000000, "O_PATH")]
AT_FLAGS = [(0x100, "AT_SYMLINK_NOFOLLOW"), (0x200, "AT_REMOVEDIR"), (0x400, "AT_SYMLINK_FOLLOW"),
            (0x800, "AT_NO_AUTOMOUNT"), (0x1000, "AT_EMPTY_PATH")]
PROT = [(1, "PROT_READ"), (2, "PROT_WRITE"), (4, "PROT_EXEC")]
MMAP = [(0x1, "MAP_SHARED"), (0x2, "MAP_PRIVATE"), (0x10, "MAP_FIXED"), (0x20, "MAP_ANONYMOUS"),
        (0x100, "MAP_GROWSDOWN"), (0x4000, "MAP_NORESERVE"), (0x8000, "MAP_POPULATE"), (0x20000, "MAP_STACK"),
        (0x100000, "MAP_FIXED_NOREPLACE")]
SIGNALS = ["0", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE", "SIGKILL",
           "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT",
           "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF",
           "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS"]
WHENCE = ["SEEK_SET", "SEEK_CUR", "SEEK_END", "SEEK_DATA", "SEEK_HOLE"]
WHERE_MORE, WHERE_OUT = 1 << 32, 1 << 33


def signed(v: int, bits: int = 64) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def flags(v: int, table: list, zero: str = "0") -> str:
    names, left = [], v
    for bit, name in table:
        if left & bit == bit and bit:
            names.append(name)
            left &= ~bit
    if left:
        names.append(hex(left))
    return "|".join(names) or zero


def quote(data: bytes, more: bool) -> str:
    out = []
    for b in data:
        c = chr(b)
        out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r", '"': '\\"', "\\": "\\\\"}.get(c) or
                   (c if 32 <= b < 127 else f"\\{b:o}"))
    return '"' + "".join(out) + '"' + ("..." if more else "")


def names() -> tuple:
    """Linux's call names by number and errno names by number, from the
    personality's own tables (services/linux/lx.h)."""
    from petrel import lxsyscalls
    text = (paths.REPO / "services" / "linux" / "lx.h").read_text()
    calls = {n: name for name, n in lxsyscalls.numbers(text).items()}
    errnos = {int(n): name for name, n in re.findall(r"\bLX_(E[A-Z0-9]+) = (\d+)", text)}
    return calls, errnos


def strerror(name: str) -> str:
    n = getattr(errno, name, None)
    return os.strerror(n) if n is not None else name


class Call:
    def __init__(self, e):
        self.pid, self.tid, self.nr = e.args[0] & 0xffffffff, e.args[1] & 0xffffffff, e.args[2]
        self.args = [e.args[3], e.args[4], 0, 0, 0, 0]
        self.data = {}                              # (argument, came back) -> (bytes, more)

    def add_data(self, where: int, d: tuple) -> None:
        arg, piece, total = where & 0xff, (where >> 8) & 0xff, (where >> 16) & 0xffff
        key = (arg, bool(where & WHERE_OUT))
        got = self.data.get(key, (b"", False))[0]
        chunk = b"".join(x.to_bytes(8, "little") for x in d)
        if piece * 24 == len(got):
            got += chunk
        self.data[key] = (got[:total], bool(where & WHERE_MORE))


class Strace:
    """Lines of answered calls from events in the order of each thread's."""

    def __init__(self, tab):
        byid = tab.by_id()
        self.ids = {p.name: p.id for p in byid.values()}
        self.calls, self.errnos = names()
        self.open = {}                              # tid -> its call being served

    def feed(self, events) -> list:
        out = []
        ids = self.ids
        for e in events:
            if e.id == ids["lx_enter"]:
                c = Call(e)
                self.open[c.tid] = c
            elif e.id == ids["lx_args"]:
                c = self.open.get(e.args[0] & 0xffffffff)
                if c:
                    c.args[2:6] = list(e.args[1:5])
                    if self.name(c.nr) in ("exit", "exit_group"):       # (never answered)
                        del self.open[c.tid]
                        out.append(f"[pid {c.pid}] {self.name(c.nr)}({self.arglist(c)}) = ?")
                        if self.name(c.nr) == "exit_group":
                            out.append(f"[pid {c.pid}] +++ exited with {c.args[0] & 0xff} +++")
            elif e.id == ids["lx_data"]:
                c = self.open.get(e.args[0] & 0xffffffff)
                if c:
                    c.add_data(e.args[1], e.args[2:5])
            elif e.id == ids["lx_exit"]:
                tid = e.args[1] & 0xffffffff
                c = self.open.pop(tid, None)
                if c is None or c.nr != e.args[2]:
                    c = Call(e)                     # (its entry was before the recording, or missed)
                    c.args = None
                out.append(self.line(c, e.args[3]))
            elif e.id == 0:                         # a lost-events record
                out.append(f"--- {e.args[0]} events lost (the rings overwrote them) ---")
        return out

    def unfinished(self) -> list:
        return [f"[pid {c.pid}] {self.name(c.nr)}({self.arglist(c)} <unfinished ...>" for c in self.open.values()]

    def name(self, nr: int) -> str:
        return self.calls.get(nr, f"syscall_{nr:#x}")

    def arglist(self, c: Call) -> str:
        if c.args is None:
            return "..."
        name = self.name(c.nr)
        kinds = SIGNATURES.get(name, ["x", "x", "x"])
        if name == "openat" and not c.args[2] & (0o100 | 0o20000000):
            kinds = kinds[:3]                       # (no O_CREAT, no O_TMPFILE: no mode)
        return ", ".join(self.arg(c, i, k) for i, k in enumerate(kinds))

    def arg(self, c: Call, i: int, kind: str) -> str:
        v = c.args[i]
        if kind in ("fd", "int"):
            return str(signed(v, 32) if kind == "fd" else signed(v))
        if kind == "dirfd":
            return "AT_FDCWD" if signed(v, 32) == AT_FDCWD else str(signed(v, 32))
        if kind in ("str", "in", "out"):
            got = c.data.get((i, kind == "out"))
            if got is not None:
                data, more = got
                if self.name(c.nr) == "getcwd" and data.endswith(b"\0"):
                    data = data[:-1]                # (its length counts the NUL; strace shows the string)
                return quote(data, more)
            return "NULL" if v == 0 else hex(v)
        if kind == "u":
            return str(v)
        if kind == "oflags":
            acc = ["O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"][v & 3]
            rest = flags(v & ~3, O_FLAGS, "")
            return acc + ("|" + rest if rest else "")
        if kind == "fdflags":
            return flags(v, O_FLAGS)
        if kind == "mode":
            return f"0{v:o}"
        if kind == "atflags":
            return flags(v, AT_FLAGS)
        if kind == "prot":
            return flags(v, PROT, "PROT_NONE")
        if kind == "mmap":
            return flags(v, MMAP)
        if kind == "sig":
            return SIGNALS[v] if v < len(SIGNALS) else str(v)
        if kind == "whence":
            return WHENCE[v] if v < len(WHENCE) else str(v)
        if kind == "ptr":
            return "NULL" if v == 0 else hex(v)
        return hex(v)

    def line(self, c: Call, result: int) -> str:
        r = signed(result)
        name = self.name(c.nr)
        if -4096 < r < 0:
            e = self.errnos.get(-r, f"E{-r}")
            shown = f"-1 {e} ({strerror(e)})"
        elif name in HEX_RESULTS:
            shown = hex(result)
        else:
            shown = str(r)
        return f"[pid {c.pid}] {name}({self.arglist(c)}) = {shown}"
