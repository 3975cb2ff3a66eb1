# Python's processes (real-programs suite): subprocess with pipes, input
# and exit statuses, multiprocessing's pool, queue, pipe, shared values and
# locks (POSIX semaphores in /dev/shm), and os.fork with os.waitpid.
import multiprocessing
import os
import signal
import subprocess
import sys

os.environ["PATH"] = "/usr/bin:/bin"       # Debian's programs first (busybox's applets are in /bin)

r = subprocess.run(["/bin/echo", "hello", "from", "echo"], capture_output=True, text=True)
print("run:", repr(r.stdout), r.returncode)
r = subprocess.run(["tr", "a-z", "A-Z"], input="piped through tr\n", capture_output=True, text=True)
print("input:", repr(r.stdout))
r = subprocess.run(["sh", "-c", "echo to stderr >&2; exit 7"], capture_output=True, text=True)
print("status:", r.returncode, repr(r.stderr))
p1 = subprocess.Popen(["seq", "1", "2000"], stdout=subprocess.PIPE)
p2 = subprocess.Popen(["wc", "-l"], stdin=p1.stdout, stdout=subprocess.PIPE, text=True)
p1.stdout.close()
print("pipeline:", p2.communicate()[0].strip(), p1.wait(), p2.returncode)
try:
    subprocess.run(["sleep", "5"], timeout=0.2)
except subprocess.TimeoutExpired as e:
    print("timeout: expired,", e.cmd)   # (e.timeout is what was left when the wait began: it varies)
try:
    subprocess.run(["/no/such/program"])
except FileNotFoundError as e:
    print("missing:", e.errno, e.strerror)
p = subprocess.Popen(["sleep", "5"])
p.send_signal(signal.SIGTERM)
print("signalled:", p.wait())
print("check_output:", subprocess.check_output("echo $((6 * 7))", shell=True, text=True).strip())

pid = os.fork()
if pid == 0:
    os._exit(3)
print("fork: child status", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))


def square(x):
    return x * x


def worker(q, lock, total, conn):
    for i in range(100):
        with lock:
            total.value += i
    q.put(("from", os.getpid() != parent))
    conn.send(sum(range(10)))
    conn.close()


if __name__ == "__main__":
    parent = os.getpid()
    with multiprocessing.Pool(3) as pool:
        print("pool:", pool.map(square, range(12)))
        print("pool async:", pool.apply_async(square, (11,)).get(timeout=30))
    q, lock = multiprocessing.Queue(), multiprocessing.Lock()
    total = multiprocessing.Value("i", 0)
    here, there = multiprocessing.Pipe()
    procs = [multiprocessing.Process(target=worker, args=(q, lock, total, there)) for _ in range(3)]
    for p in procs:
        p.start()
    got = [q.get(timeout=30) for _ in procs]
    sums = [here.recv() for _ in procs]
    for p in procs:
        p.join()
    print("processes:", got, sums, total.value, [p.exitcode for p in procs])
    sys.stdout.flush()
