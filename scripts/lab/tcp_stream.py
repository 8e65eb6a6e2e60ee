#!/usr/bin/env python3
# tcp_stream.py server | client HOST MB: the raw TCP throughput of the lab
# link, the ceiling any RDMA stack on it meets. The client prints MB/s.
import socket
import sys
import time

PORT = 5001
if sys.argv[1] == "server":
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("", PORT))
    ls.listen(1)
    c, _ = ls.accept()
    while c.recv(1 << 20):
        pass
    c.close()
    sys.exit(0)

host, mb = sys.argv[2], int(sys.argv[3])
for _ in range(600):
    try:
        s = socket.create_connection((host, PORT))
        break
    except OSError:
        time.sleep(0.1)
chunk = b"\0" * (1 << 20)
t0 = time.monotonic()
for _ in range(mb):
    s.sendall(chunk)
s.shutdown(socket.SHUT_WR)
s.recv(1)		# returns when the server has read everything and closed
print("%.2f" % (mb * (1 << 20) / 1e6 / (time.monotonic() - t0)))
