#!/usr/bin/env python3
"""tests/fakes/netcanary.py: loopback test gear for the egress gateway tests.

Real sockets on addresses the test owns (127.0.0.0/8 only); nothing here
forwards anywhere. Every server binds port 0 (or --port), writes its port to
--port-file, logs one line per contact to --log (flushed), and exits after
--max contacts or --lifetime seconds, whichever comes first. A TCP server
drops a connection idle for --idle seconds (default 5).

  dns   --table FILE    a DNS responder over UDP. Table lines:
                          NAME A ADDR[,ADDR...]     answers for type A
                          NAME AAAA ADDR[,ADDR...]  answers for type AAAA
                          NAME REBIND ADDR1,ADDR2   type A alternates ADDR1, ADDR2, ...
                          NAME REFUSED -            every query: rcode REFUSED
                        A known name without the asked type: NOERROR, no
                        answer; an unknown name: NXDOMAIN. Log line:
                        "query name=NAME type=A|AAAA|N"
  http  [--redirect-to URL]  an HTTP canary. Log line: "METHOD TARGET host=HOST".
                        /redirect answers 302 with Location: URL ("{port}"
                        in URL becomes the canary's own port); anything
                        else 200 "CANARY-OK\n".
  echo [--echo-max N]   a TCP echo. Log line: "conn"; echoes until EOF
                        (at most N bytes, default 1 MiB).
  client --proxy HOST:PORT --send BYTES-FILE [--expect-tunnel LINE]
                        sends the file's bytes, prints what comes back
                        (bounded: 64 KiB, --wait seconds per read, default 5),
                        for raw and CONNECT probes.
"""
import argparse
import ipaddress
import os
import socket
import struct
import sys
import threading
import time


def bounded_bind(sock, addr, port, port_file):
    ip = ipaddress.ip_address(addr)
    if not ip.is_loopback:
        sys.exit("netcanary: refusing to bind a non-loopback address")
    sock.bind((addr, port))
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % sock.getsockname()[1])
    os.rename(port_file + ".tmp", port_file)


def bounded(args, sock, op):
    """Yields op() results: at most --max of them, until --lifetime is over."""
    deadline = time.time() + args.lifetime
    for _ in range(args.max):
        left = deadline - time.time()
        if left <= 0:
            return
        sock.settimeout(left)
        try:
            yield op()
        except socket.timeout:
            return


def logline(path, text):
    with open(path, "a") as f:
        f.write(text + "\n")
        f.flush()


def dns(args):
    table = {}
    for line in open(args.table):
        parts = line.split()
        if len(parts) != 3:
            continue
        name, kind, addrs = parts[0].lower(), parts[1].upper(), parts[2].split(",")
        table.setdefault(name, {})[kind] = addrs
    turn = {}
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    bounded_bind(s, args.bind, args.port, args.port_file)
    for pkt, peer in bounded(args, s, lambda: s.recvfrom(512)):
        if len(pkt) < 17:
            continue
        qid, flags, qd = struct.unpack("!HHH", pkt[:6])
        if qd != 1:
            continue
        i, labels = 12, []
        while i < len(pkt) and pkt[i] != 0 and len(labels) < 64:
            n = pkt[i]
            labels.append(pkt[i + 1:i + 1 + n].decode("ascii", "replace"))
            i += 1 + n
        i += 1
        if i + 4 > len(pkt):
            continue
        qtype, qclass = struct.unpack("!HH", pkt[i:i + 4])
        question = pkt[12:i + 4]
        name = ".".join(labels).lower()
        tname = {1: "A", 28: "AAAA"}.get(qtype, str(qtype))
        logline(args.log, "query name=%s type=%s" % (name, tname))
        entry = table.get(name)
        answers, rcode = [], 0
        if entry is None:
            rcode = 3
        elif "REFUSED" in entry:
            rcode = 5
        elif tname == "A" and "REBIND" in entry:
            k = turn.get(name, 0)
            turn[name] = k + 1
            answers = [entry["REBIND"][k % len(entry["REBIND"])]]
        else:
            answers = entry.get(tname, [])
        body = b""
        for a in answers:
            if tname == "A":
                rdata = socket.inet_pton(socket.AF_INET, a)
            else:
                rdata = socket.inet_pton(socket.AF_INET6, a)
            body += struct.pack("!HHHIH", 0xC00C, qtype, 1, 0, len(rdata)) + rdata
        head = struct.pack("!HHHHHH", qid, 0x8180 | (flags & 0x0100) | rcode, 1,
                           len(answers), 0, 0)
        s.sendto(head + question + body, peer)


def serve_tcp(args, handle):
    fam = socket.AF_INET6 if ":" in args.bind else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    bounded_bind(s, args.bind, args.port, args.port_file)
    args.own_port = s.getsockname()[1]
    s.listen(16)
    for c, _peer in bounded(args, s, s.accept):
        c.settimeout(args.idle)
        threading.Thread(target=handle, args=(c,), daemon=True).start()


def http(args):
    def handle(c):
        try:
            data = b""
            while b"\r\n\r\n" not in data and len(data) < 65536:
                chunk = c.recv(4096)
                if not chunk:
                    break
                data += chunk
            head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
            lines = head.split("\r\n")
            req = lines[0].split(" ")
            host = ""
            for h in lines[1:]:
                if h.lower().startswith("host:"):
                    host = h[5:].strip()
            logline(args.log, "%s %s host=%s" % (req[0], req[1] if len(req) > 1 else "", host))
            if len(req) > 1 and req[1].startswith("/redirect"):
                resp = ("HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n"
                        "Connection: close\r\n\r\n"
                        % args.redirect_to.replace("{port}", str(args.own_port)))
            else:
                resp = ("HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\n"
                        "CANARY-OK\n")
            c.sendall(resp.encode())
        except OSError:
            pass
        finally:
            c.close()
    serve_tcp(args, handle)


def echo(args):
    def handle(c):
        logline(args.log, "conn")
        try:
            total = 0
            while total < args.echo_max:
                d = c.recv(4096)
                if not d:
                    break
                total += len(d)
                c.sendall(d)
        except OSError:
            pass
        finally:
            c.close()
    serve_tcp(args, handle)


def client(args):
    host, port = args.proxy.rsplit(":", 1)
    data = open(args.send, "rb").read()
    c = socket.create_connection((host, int(port)), timeout=args.wait)
    out = b""
    try:
        if args.then:
            # CONNECT first, then the payload once the tunnel is up.
            c.sendall(data)
            while b"\r\n\r\n" not in out and len(out) < 65536:
                d = c.recv(4096)
                if not d:
                    break
                out += d
            if out.startswith(b"HTTP/1.1 200"):
                c.sendall(open(args.then, "rb").read())
                while len(out) < 65536:
                    d = c.recv(4096)
                    if not d:
                        break
                    out += d
                    if out.endswith(b"\n") and b"\r\n\r\n" in out and \
                            out.split(b"\r\n\r\n", 1)[1]:
                        break
        else:
            c.sendall(data)
            while len(out) < 65536:
                d = c.recv(4096)
                if not d:
                    break
                out += d
    except OSError as e:
        out += ("\n[client: %s]" % e).encode()
    c.close()
    sys.stdout.write(out.decode("latin-1"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["dns", "http", "echo", "client"])
    p.add_argument("--bind", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file")
    p.add_argument("--log")
    p.add_argument("--table")
    p.add_argument("--redirect-to", default="http://other.test/")
    p.add_argument("--max", type=int, default=1000)
    p.add_argument("--lifetime", type=float, default=300)
    p.add_argument("--proxy")
    p.add_argument("--send")
    p.add_argument("--then")
    p.add_argument("--wait", type=float, default=5)
    p.add_argument("--echo-max", type=int, default=1 << 20)
    p.add_argument("--idle", type=float, default=5)
    args = p.parse_args()
    {"dns": dns, "http": http, "echo": echo, "client": client}[args.mode](args)


if __name__ == "__main__":
    main()
