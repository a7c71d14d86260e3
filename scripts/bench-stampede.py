#!/usr/bin/env python3
"""Stampede figure for the README: 1,000 concurrent cold requests for one key through unicache.

Starts a tiny upstream on 127.0.0.1 that holds its answer for --hold seconds and records the moment it
answers, starts the release build of unicache with that upstream for the `progress` domain, fires N
concurrent GETs of one cold key (raw sockets, one thread each, all released at once), then prints how
many requests the upstream received and how long after the upstream's answer the last client was answered.
"""
import argparse, http.server, json, os, re, signal, socket, subprocess, sys, tempfile, threading, time

def upstream_server(hold):
    state = {"count": 0, "answered_at": None, "lock": threading.Lock()}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def do_GET(self):
            with state["lock"]:
                state["count"] += 1
            time.sleep(hold)
            body = json.dumps({"current": 12, "longest": 40}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            state["answered_at"] = time.monotonic()
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, state

def get(port, path, results, index, start_event):
    start_event.wait()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    results[index] = (time.monotonic(), data.split(b"\r\n", 1)[0].decode(errors="replace"),
                      re.search(rb"(?i)x-cache: (\w+)", data).group(1).decode() if b"X-Cache" in data else "-")

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=0.5)
    args = parser.parse_args()

    upstream, state = upstream_server(args.hold)
    data_dir = tempfile.mkdtemp(prefix="unicache-stampede-")
    proc = subprocess.Popen(
        [args.bin, "--port", "0", "--data-dir", data_dir, "--upstream",
         f"progress=http://127.0.0.1:{upstream.server_address[1]}", "--max-connections", "4096"],
        stderr=subprocess.PIPE, text=True)
    port = None
    for line in proc.stderr:
        m = re.search(r"listening on http://[^:]+:(\d+)", line)
        if m:
            port = int(m.group(1))
            break
    if port is None:
        sys.exit("unicache did not start")
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()

    results = [None] * args.clients
    start = threading.Event()
    threads = [threading.Thread(target=get, args=(port, "/v1/users/stampede/progress/streak", results, i, start))
               for i in range(args.clients)]
    for t in threads:
        t.start()
    start.set()
    for t in threads:
        t.join()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)

    statuses = {}
    for _, status, cache in results:
        statuses[(status, cache)] = statuses.get((status, cache), 0) + 1
    last = max(r[0] for r in results)
    print(f"clients: {args.clients}, upstream requests: {state['count']}")
    print("answers:", ", ".join(f"{n} × {s} {c}" for (s, c), n in sorted(statuses.items())))
    print(f"last client answered {1000 * (last - state['answered_at']):.1f} ms after the upstream's answer")

if __name__ == "__main__":
    main()
