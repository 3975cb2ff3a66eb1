# Python's data modules and sockets (real-programs suite): the sqlite3
# module (transactions, rollback, aggregates, a file database reopened),
# json, AF_UNIX stream and datagram sockets between threads, and hashlib,
# zlib, lzma and bz2 over the same bytes.
import bz2
import hashlib
import json
import lzma
import os
import socket
import sqlite3
import tempfile
import threading
import zlib

path = os.path.join(tempfile.mkdtemp(dir="/tmp"), "t.db")
db = sqlite3.connect(path)
db.execute("create table t(k integer primary key, name text, v real)")
with db:
    db.executemany("insert into t(name, v) values (?, ?)", [(f"n{i}", i / 4) for i in range(500)])
try:
    with db:
        db.execute("insert into t(name, v) values ('gone', 0)")
        raise RuntimeError("roll back")
except RuntimeError:
    pass
print("sqlite:", db.execute("select count(*), sum(v), max(name) from t").fetchone())
db.close()
db = sqlite3.connect(path)
print("reopened:", db.execute("select name from t where k in (1, 250, 500) order by k").fetchall())
print("gone:", db.execute("select count(*) from t where name = 'gone'").fetchone()[0])
db.close()

doc = {"name": "petrel", "cores": [1, 2], "nested": {"pi": 3.25, "ok": True, "none": None}, "text": "é\n"}
text = json.dumps(doc, sort_keys=True)
print("json:", text)
print("json round trip:", json.loads(text) == doc, json.dumps(doc, indent=1, sort_keys=True).count("\n"))

sock_path = os.path.join(os.path.dirname(path), "s")
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sock_path)
server.listen(1)


def serve():
    conn, _ = server.accept()
    with conn:
        while data := conn.recv(4096):
            conn.sendall(data.upper())


t = threading.Thread(target=serve)
t.start()
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
client.connect(sock_path)
client.sendall(b"over a unix socket " * 1000)
client.shutdown(socket.SHUT_WR)
got = b""
while data := client.recv(65536):
    got += data
client.close()
t.join()
print("unix stream:", len(got), got[:19])
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
for word in (b"one", b"two", b"three"):
    a.send(word)
print("unix datagrams:", [b.recv(100) for _ in range(3)])

data = b"".join(str(i).encode() for i in range(20000))
print("hash:", hashlib.sha256(data).hexdigest()[:16], hashlib.md5(data).hexdigest()[:16])
for name, mod in (("zlib", zlib), ("lzma", lzma), ("bz2", bz2)):
    packed = mod.compress(data)
    print(f"{name}:", mod.decompress(packed) == data, len(packed) < len(data))
