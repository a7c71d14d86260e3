#!/usr/bin/env python3
"""Stampede figure for the README: 1,000 concurrent cold requests for one key through unicache.

Starts a tiny upstream on 127.0.0.1 that holds each answer for --hold seconds and records the moment it
answers, then, --runs times: starts the release build of unicache with that upstream for the `progress`
domain and fires two stampedes at it, one after the other, each N concurrent GETs of a key nobody asked
for before, sent by Benchmarks/stampede-client (C, one thread, epoll: the client's own cost stays out of
the figure; keep-alive connections, or `Connection: close` with --close):

  first  - the first stampede after start-up (fresh process: every page of memory touched for the first time)
  warmed - the second one (a service that has been running)

For each it checks that the upstream got exactly one request and that every client got a 200, and reports
how long after the upstream's answer the last client had its whole answer (both sides read CLOCK_MONOTONIC),
the figure; and when the first client had its answer: the serial part (the fill stored and the waiters
released), the rest being the 1,000 answers sent through two shared CPUs.
Prints every run, then the median and the worst of each kind.

With --fleet N (CONTRACT §6, §10.4): a redis-server on a free loopback port and N instances sharing it (one
--redis-prefix), the clients spread over them in turn; the upstream must still see one request per stampede.
"""
import argparse, http.server, json, os, re, signal, socket, statistics, subprocess, sys, tempfile, threading, time
import urllib.error, urllib.request

def upstream_server(hold):
    """Counts requests and remembers when it answered, per path."""
    state = {"count": {}, "answered_at": {}, "lock": threading.Lock()}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def do_GET(self):
            with state["lock"]:
                state["count"][self.path] = state["count"].get(self.path, 0) + 1
            time.sleep(hold)
            body = json.dumps({"current": 12, "longest": 40}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            with state["lock"]:
                state["answered_at"][self.path] = time.monotonic()
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

def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]

def start_redis():
    """A redis-server of its own on a free loopback port; returns the process and the port once it answers PING."""
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True, text=True).stdout.strip() == "PONG":
            return proc, port
        time.sleep(0.05)
    sys.exit("redis-server did not start")

def start_unicache(binary, upstream_port, redis=None):
    """One instance; with redis=(port, prefix) it joins that fleet and is returned once its shared tier is connected."""
    data_dir = tempfile.mkdtemp(prefix="unicache-stampede-")
    fleet = ["--redis", f"redis://127.0.0.1:{redis[0]}", "--redis-prefix", redis[1]] if redis else []
    proc = subprocess.Popen(
        [binary, "--port", "0", "--data-dir", data_dir, "--upstream",
         f"progress=http://127.0.0.1:{upstream_port}", "--max-connections", "4096"] + fleet,
        stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        m = re.search(r"listening on http://[^:]+:(\d+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            port = int(m.group(1))
            for _ in range(200):
                if not redis or '"sharedTier":"connected"' in readyz(port):
                    return proc, port
                time.sleep(0.05)
            sys.exit("unicache did not connect to Redis")
    sys.exit("unicache did not start")

def readyz(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
            return answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.read().decode()

def stampede(client_binary, ports, user, clients, close, state):
    """One stampede on a fresh key, the clients spread over the ports in turn; returns ms from the upstream's answer
    to the first and to the last client's answer, and the outcomes."""
    target = f"/v1/users/{user}/progress/streak"
    client = subprocess.run(
        [client_binary, ",".join(map(str, ports)), target, str(clients)] + (["close"] if close else []),
        capture_output=True, text=True, check=True)
    ended, outcomes = [], {}
    for line in client.stdout.splitlines():
        at, status, cache = line.split()
        ended.append(float(at))
        outcomes[(status, cache)] = outcomes.get((status, cache), 0) + 1
    upstream_path = f"/users/{user}/progress/streak"
    with state["lock"]:
        count = state["count"].get(upstream_path, 0)
        answered_at = state["answered_at"][upstream_path]
    if count != 1 or any(status != "200" for status, _ in outcomes):
        sys.exit(f"stampede on {target}: {count} upstream requests, answers {outcomes}")
    return 1000 * (min(ended) - answered_at), 1000 * (max(ended) - answered_at), outcomes

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=0.5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--close", action="store_true", help="clients send Connection: close (default keep-alive)")
    parser.add_argument("--fleet", type=int, default=0, metavar="N",
                        help="N instances sharing a redis-server started here (default: one instance, no Redis)")
    args = parser.parse_args()

    client_binary = build_client()
    upstream, state = upstream_server(args.hold)
    figures = {"first": [], "warmed": []}
    serial = {"first": [], "warmed": []}
    redis = start_redis() if args.fleet else None
    for run in range(args.runs):
        instances = [start_unicache(args.bin, upstream.server_address[1], (redis[1], f"st{run}:") if redis else None)
                     for _ in range(max(args.fleet, 1))]
        try:
            for kind in ("first", "warmed"):
                first_ms, ms, outcomes = stampede(
                    client_binary, [port for _, port in instances], f"{kind}-{run}", args.clients, args.close, state)
                figures[kind].append(ms)
                serial[kind].append(first_ms)
                print(f"run {run + 1} {kind:6}: 1 upstream request; "
                      + ", ".join(f"{n} × {s} {c}" for (s, c), n in sorted(outcomes.items()))
                      + f"; first client {first_ms:.1f} ms, last client {ms:.1f} ms after the upstream's answer")
        finally:
            for proc, _ in instances:
                proc.send_signal(signal.SIGTERM)
            for proc, _ in instances:
                proc.wait(timeout=20)
    if redis:
        redis[0].terminate()
        redis[0].wait(timeout=20)
    for kind, values in figures.items():
        print(f"{kind:6}: last client answered {statistics.median(values):.1f} ms (median of {len(values)}), "
              f"worst {max(values):.1f} ms, after the upstream's answer; the first client "
              f"{statistics.median(serial[kind]):.1f} ms (median)")

if __name__ == "__main__":
    main()
