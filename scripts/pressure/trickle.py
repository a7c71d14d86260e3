#!/usr/bin/env python3
"""A trickling flood for scripts/pressure.sh: COUNT connections from each source address, each sending a request
line one byte every PACE seconds and connecting again as soon as the service closes it, until killed. One process,
non-blocking sockets, so that 5,000 connections cost the machine little.

    trickle.py PORT PACE COUNT SOURCE [SOURCE ...]     e.g. trickle.py 8080 5 1000 127.0.0.2 127.0.0.3
"""
import errno
import resource
import selectors
import socket
import sys
import time

REQUEST = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"


def main():
    port, pace, count, sources = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    selector = selectors.DefaultSelector()
    # socket -> [source, bytes sent, when the next byte is due]
    state = {}

    def open_one(source, due):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.bind((source, 0))
        try:
            sock.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        except OSError as error:
            if error.errno not in (errno.EINPROGRESS, errno.EAGAIN):
                sock.close()
                return
        state[sock] = [source, 0, due]
        selector.register(sock, selectors.EVENT_READ)

    def reopen(sock):
        source = state.pop(sock)[0]
        selector.unregister(sock)
        sock.close()
        open_one(source, time.monotonic())

    for source in sources:
        for _ in range(count):
            open_one(source, time.monotonic())
    reconnects = 0
    last_report = time.monotonic()
    while True:
        now = time.monotonic()
        for sock in [s for s, entry in state.items() if entry[2] <= now]:
            entry = state[sock]
            try:
                sock.send(REQUEST[entry[1] % len(REQUEST):entry[1] % len(REQUEST) + 1])
                entry[1] += 1
                entry[2] = now + pace
            except BlockingIOError:
                entry[2] = now + 0.05   # still connecting: its first byte follows shortly
            except OSError:
                reopen(sock)
                reconnects += 1
        for key, _ in selector.select(timeout=0.05):
            sock = key.fileobj
            try:
                data = sock.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:   # closed by the service (or refused): connect again, as a flood does
                reopen(sock)
                reconnects += 1
        if now - last_report >= 5:
            print(f"trickle: {len(state)} connections, {reconnects} reconnects", file=sys.stderr, flush=True)
            last_report = now


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
