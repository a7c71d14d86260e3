#!/usr/bin/env python3
"""Stampede figure for the README: 1,000 concurrent cold requests for one key through unicache.

Starts a tiny upstream on 127.0.0.1 that holds its answer for --hold seconds and records the moment it
answers, starts the release build of unicache with that upstream for the `progress` domain, fires N
concurrent GETs of one cold key with Benchmarks/stampede-client (C, one thread, epoll: the client's own cost
stays out of the figure; keep-alive connections, or `Connection: close` with --close), then prints how many
requests the upstream received and how long after the upstream's answer the last client had its whole answer
(both sides read CLOCK_MONOTONIC).
"""
import argparse, http.server, json, os, re, signal, subprocess, sys, tempfile, threading, time

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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIENT_SOURCE = os.path.join(ROOT, "Benchmarks", "stampede-client", "stampede-client.c")

def build_client():
    binary = os.path.join(tempfile.mkdtemp(prefix="stampede-client-"), "stampede-client")
    subprocess.run(["cc", "-O2", "-D_GNU_SOURCE", "-o", binary, CLIENT_SOURCE], check=True)
    return binary

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=0.5)
    parser.add_argument("--close", action="store_true", help="clients send Connection: close (default keep-alive)")
    args = parser.parse_args()

    client_binary = build_client()
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

    client = subprocess.run(
        [client_binary, str(port), "/v1/users/stampede/progress/streak", str(args.clients)]
        + (["close"] if args.close else []),
        capture_output=True, text=True, check=True)
    results = []
    for line in client.stdout.splitlines():
        ended, status, cache = line.split()
        results.append((float(ended), status, cache))
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
