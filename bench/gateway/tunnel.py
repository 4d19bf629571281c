#!/usr/bin/env python3
"""bench/gateway/tunnel.py: MiB/s of a TCP echo, direct and through a CONNECT
tunnel of agentguard-gateway, in one run (see README.md).

  tunnel.py ECHO_PORT GATEWAY_PORT NAME MIB RUNS
"""
import socket
import statistics
import sys
import threading
import time


def pump(sock, total):
    chunk = b"x" * 65536
    def reader(out):
        got = 0
        while got < total:
            d = sock.recv(1 << 20)
            if not d:
                break
            got += len(d)
        out.append(got)
    out = []
    t = threading.Thread(target=reader, args=(out,))
    t.start()
    sent = 0
    while sent < total:
        sock.sendall(chunk)
        sent += len(chunk)
    t.join()
    return out[0]


def direct(port, total):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    t0 = time.perf_counter()
    got = pump(s, total)
    dt = time.perf_counter() - t0
    s.close()
    assert got == total, got
    return dt


def tunnel(gw_port, name, port, total):
    s = socket.create_connection(("127.0.0.1", gw_port), timeout=30)
    t0 = time.perf_counter()
    s.sendall(b"CONNECT %s:%d HTTP/1.1\r\n\r\n" % (name.encode(), port))
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert head.startswith(b"HTTP/1.1 200"), head
    got = pump(s, total)
    dt = time.perf_counter() - t0
    s.close()
    assert got == total, got
    return dt


def main():
    echo, gw, name, mib, runs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    total = mib << 20
    d, g = [], []
    for _ in range(runs):
        d.append(direct(echo, total))
        g.append(tunnel(gw, name, echo, total))
    dm, gm = statistics.median(d), statistics.median(g)
    print("echo %d MiB each way, median of %d runs" % (mib, runs))
    print("direct   %.3f s  %.0f MiB/s" % (dm, mib / dm))
    print("gateway  %.3f s  %.0f MiB/s" % (gm, mib / gm))
    print("ratio gateway/direct: %.2f" % (gm / dm))


if __name__ == "__main__":
    main()
