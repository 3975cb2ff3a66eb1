# Pseudo-terminals from Python (real-programs suite): os.openpty, termios,
# pty.fork with a program on the slave, and an interactive dash in a pty
# with job control (a job stopped with ^Z, listed, brought back with fg).
import os
import pty
import select
import termios
import time
import tty


def read_until(fd, marker, timeout=20.0):
    """Everything fd gives until `marker` has come (or end of file, EIO)."""
    got = b""
    end = time.monotonic() + timeout
    while marker.encode() not in got and time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            break
        if not chunk:
            break
        got += chunk
    return got.decode(errors="replace")


def show(what, text):
    print(f"{what}: {text!r}")


# os.openpty: a pair, its names, the line discipline.
m, s = os.openpty()
print("slave name", os.ttyname(s).startswith("/dev/pts/"), "isatty", os.isatty(m), os.isatty(s))
attrs = termios.tcgetattr(s)
print("lflag ICANON", bool(attrs[3] & termios.ICANON), "ECHO", bool(attrs[3] & termios.ECHO),
      "oflag ONLCR", bool(attrs[1] & termios.ONLCR))
os.write(m, b"line one\n")
show("slave reads", os.read(s, 100))
show("master's echo", read_until(m, "\r\n"))
os.write(s, b"out\nput\n")
show("slave's output", read_until(m, "put\r\n"))
tty.setraw(s)
os.write(m, b"raw\r")
time.sleep(0.2)
show("raw input", os.read(s, 100))
os.close(s)
try:
    os.read(m, 10)
except OSError as e:
    print("master after the slave closed:", e.strerror)
os.close(m)

# pty.fork: a program on the slave, its controlling terminal.
pid, fd = pty.fork()
if pid == 0:
    os.execvp("sh", ["sh", "-c", "tty | cut -c1-9; stty -echo; echo ready; read x; echo \"got $x\"; exit 7"])
show("child", read_until(fd, "ready\r\n").replace("\r", ""))
os.write(fd, b"secret\n")
show("child", read_until(fd, "\x00").replace("\r", ""))
_, status = os.waitpid(pid, 0)
print("child exit", os.waitstatus_to_exitcode(status))

# An interactive dash in a pty: job control.
pid, fd = pty.fork()
if pid == 0:
    os.environ["PS1"] = "$ "
    os.environ["ENV"] = ""
    os.execvp("dash", ["dash", "-i"])
print(read_until(fd, "$ ").replace("\r", "").strip() or "(prompt)")
for line, marker in (("echo hello from dash", "$ "), ("sh -c 'echo started; exec cat'", "started\r\n"), ("\x1a", "$ "), ("jobs", "$ "),
                     ("fg", "cat\"\r\n"), ("typed to cat", "typed to cat\r\ntyped to cat\r\n"), ("\x04", "$ "),
                     ("jobs; echo none left", "$ "), ("exit 3", "\x00")):
    os.write(fd, (line if line in ("\x1a", "\x04") else line + "\n").encode())
    # (Linux may echo ^Z before or after dash reports the stop: its echo is not shown)
    out = read_until(fd, marker).replace("\r", "").replace("^Z", "")
    print("dash", repr(line), "->", repr(out))
_, status = os.waitpid(pid, 0)
print("dash exit", os.waitstatus_to_exitcode(status))
print("pty done")
