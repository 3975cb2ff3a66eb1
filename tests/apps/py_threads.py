# Python's threads (real-programs suite, tests/apps/README.md): a queue
# between producers and consumers, a thread pool, locks, conditions,
# events, barriers and thread-local data; every result is printed in an
# order that does not depend on scheduling.
import concurrent.futures
import queue
import threading

# Producers put numbers, consumers sum them; None ends a consumer.
work, sums, lock = queue.Queue(maxsize=8), [], threading.Lock()


def produce(base):
    for i in range(200):
        work.put(base + i)


def consume():
    total = 0
    while (item := work.get()) is not None:
        total += item
        work.task_done()
    work.task_done()
    with lock:
        sums.append(total)


producers = [threading.Thread(target=produce, args=(k * 1000,)) for k in range(4)]
consumers = [threading.Thread(target=consume) for _ in range(3)]
for t in producers + consumers:
    t.start()
for t in producers:
    t.join()
for _ in consumers:
    work.put(None)
for t in consumers:
    t.join()
print("queue: sum", sum(sums), "consumers", len(sums), "left", work.qsize())

# A pool of 4 threads mapping a CPU-bound function.
def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
    steps = list(pool.map(collatz, range(1, 3001)))
print("pool: max steps", max(steps), "at", steps.index(max(steps)) + 1, "total", sum(steps))

# A counter under a lock, from 8 threads.
counter = 0


def bump():
    global counter
    for _ in range(5000):
        with lock:
            counter += 1


threads = [threading.Thread(target=bump) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("lock: counter", counter)

# A condition: each waiter wakes when its turn comes.
cond, turn, order = threading.Condition(), [0], []


def in_turn(k):
    with cond:
        cond.wait_for(lambda: turn[0] == k)
        order.append(k)
        turn[0] += 1
        cond.notify_all()


threads = [threading.Thread(target=in_turn, args=(k,)) for k in reversed(range(6))]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("condition: order", order)

# An event with a timeout that expires, then one that is set.
ev = threading.Event()
print("event: timed out", ev.wait(0.05) is False)
threading.Timer(0.05, ev.set).start()
print("event: set", ev.wait(5))

# A barrier of 5, and data local to each thread.
barrier, local, seen = threading.Barrier(5), threading.local(), []


def at_barrier(k):
    local.value = k * k
    barrier.wait()
    with lock:
        seen.append(local.value)


threads = [threading.Thread(target=at_barrier, args=(k,)) for k in range(5)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("barrier: values", sorted(seen), "broken", barrier.broken)
print("threads: alive at the end", threading.active_count())
