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

With --raw (one instance only): raw libmicrohttpd's time for the same 1,000 requests, measured in the same rounds
(after unicache in each): Benchmarks/mhd-baseline with MHD_BASELINE_HOLD suspends every request until --hold seconds
after the first, then resumes them all and answers its 1 KB body, printing the moment it released them (as the
upstream records the moment it answered); as many polling threads as unicache's default (one per CPU). The same
client, the same figures, then the median of the per-round ratios unicache/raw, the target being <= 1.7x (issue 46).
"""
import argparse, atexit, http.server, json, os, re, shutil, signal, socket, statistics, subprocess, sys, tempfile
import threading, time
import urllib.error, urllib.request

def upstream_server(hold):
    """Counts requests and remembers when it answered, per path."""
    state = {"count": {}, "answered_at": {}, "lock": threading.Lock()}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The head and the body are two writes: with Nagle's algorithm the body waited for the head's ACK, which a
        # kept-alive connection's receiver delays up to 40 ms (a warmed stampede's whole batch answered ~43 ms late).
        disable_nagle_algorithm = True
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
BASELINE_SOURCE = os.path.join(ROOT, "Benchmarks", "mhd-baseline", "mhd-baseline.c")

def build_client(work):
    binary = os.path.join(work, "stampede-client")
    subprocess.run(["cc", "-O2", "-D_GNU_SOURCE", "-o", binary, CLIENT_SOURCE], check=True)
    return binary

def build_baseline(work):
    """Benchmarks/mhd-baseline, built as scripts/bench-http.sh builds it."""
    binary = os.path.join(work, "mhd-baseline")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmicrohttpd"],
                           capture_output=True, text=True, check=True).stdout.split()
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-o", binary, BASELINE_SOURCE] + flags, check=True)
    return binary

def stopped_at_exit(proc):
    """proc, stopped at exit if it still runs: also when a check fails (sys.exit) before the run's own stop."""
    atexit.register(lambda: proc.poll() is None and (proc.terminate(), proc.wait(timeout=20)))
    return proc

def start_baseline(binary, hold, threads):
    """Raw libmicrohttpd holding every request `hold` seconds after a batch's first; returned once it listens."""
    port = free_port()
    proc = stopped_at_exit(subprocess.Popen(
        [binary, str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, MHD_BASELINE_HOLD=str(hold), MHD_BASELINE_THREADS=str(threads))))
    if "listening on" not in proc.stderr.readline():
        sys.exit("mhd-baseline did not start")
    for _ in range(100):
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        time.sleep(0.05)
    sys.exit("mhd-baseline did not listen")

def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]

def start_redis():
    """A redis-server of its own on a free loopback port; returns the process and the port once it answers PING."""
    port = free_port()
    proc = stopped_at_exit(subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for _ in range(100):
        if subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True, text=True).stdout.strip() == "PONG":
            return proc, port
        time.sleep(0.05)
    sys.exit("redis-server did not start")

def start_unicache(binary, upstream_port, work, redis=None):
    """One instance, its data folder a fresh one in work; with redis=(port, prefix) it joins that fleet and is returned
    once its shared tier is connected."""
    data_dir = tempfile.mkdtemp(prefix="data-", dir=work)
    fleet = ["--redis", f"redis://127.0.0.1:{redis[0]}", "--redis-prefix", redis[1]] if redis else []
    proc = stopped_at_exit(subprocess.Popen(
        [binary, "--port", "0", "--data-dir", data_dir, "--upstream",
         f"progress=http://127.0.0.1:{upstream_port}", "--max-connections", "4096"] + fleet,
        stderr=subprocess.PIPE, text=True))
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

def fire(client_binary, ports, target, clients, close):
    """The clients' GETs of target, spread over the ports in turn; returns when each answer ended, the outcomes
    (status, X-Cache) counted, and the answers' sizes (headers and body) seen."""
    client = subprocess.run(
        [client_binary, ",".join(map(str, ports)), target, str(clients)] + (["close"] if close else []),
        capture_output=True, text=True)
    if client.returncode != 0:
        sys.exit(f"stampede-client on {target} (ports {ports}) exited {client.returncode}: {client.stderr.strip()}")
    ended, outcomes, sizes = [], {}, set()
    for line in client.stdout.splitlines():
        at, status, cache, size = line.split()
        ended.append(float(at))
        outcomes[(status, cache)] = outcomes.get((status, cache), 0) + 1
        sizes.add(int(size))
    return ended, outcomes, sizes

def stampede(client_binary, ports, user, clients, close, state):
    """One stampede on a fresh key; returns ms from the upstream's answer to the first and to the last client's
    answer, the outcomes and the answers' sizes."""
    target = f"/v1/users/{user}/progress/streak"
    ended, outcomes, sizes = fire(client_binary, ports, target, clients, close)
    upstream_path = f"/users/{user}/progress/streak"
    with state["lock"]:
        count = state["count"].get(upstream_path, 0)
        answered_at = state["answered_at"][upstream_path]
    if count != 1 or any(status != "200" for status, _ in outcomes):
        sys.exit(f"stampede on {target}: {count} upstream requests, answers {outcomes}")
    return 1000 * (min(ended) - answered_at), 1000 * (max(ended) - answered_at), outcomes, sizes

def raw_stampede(client_binary, baseline, user, clients, close):
    """The same against raw libmicrohttpd: ms from the hold's release to the first and to the last client's answer."""
    proc, port = baseline
    ended, outcomes, sizes = fire(client_binary, [port], f"/v1/users/{user}/progress/streak", clients, close)
    released = proc.stdout.readline().split()  # "released COUNT AT"
    if released[:2] != ["released", str(clients)] or any(status != "200" for status, _ in outcomes):
        sys.exit(f"raw stampede: {' '.join(released)}, answers {outcomes}")
    released_at = float(released[2])
    return 1000 * (min(ended) - released_at), 1000 * (max(ended) - released_at), outcomes, sizes

def describe(outcomes, sizes):
    return (", ".join(f"{n} × {s} {c}" for (s, c), n in sorted(outcomes.items()))
            + f" ({'/'.join(map(str, sorted(sizes)))} bytes)")

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=0.5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--close", action="store_true", help="clients send Connection: close (default keep-alive)")
    parser.add_argument("--fleet", type=int, default=0, metavar="N",
                        help="N instances sharing a redis-server started here (default: one instance, no Redis)")
    parser.add_argument("--raw", action="store_true",
                        help="also raw libmicrohttpd answering the same stampede, in the same rounds (one instance only)")
    args = parser.parse_args()
    if args.raw and args.fleet:
        parser.error("--raw compares one instance with raw libmicrohttpd: without --fleet")

    # One folder for the binaries built here and the instances' data, removed however the script ends.
    work = tempfile.mkdtemp(prefix="unicache-stampede-")
    atexit.register(shutil.rmtree, work, True)
    client_binary = build_client(work)
    baseline_binary = build_baseline(work) if args.raw else None
    threads = len(os.sched_getaffinity(0))  # unicache's default --polling-threads
    upstream, state = upstream_server(args.hold)
    figures = {"first": [], "warmed": []}
    serial = {"first": [], "warmed": []}
    raw_figures = {"first": [], "warmed": []}
    redis = start_redis() if args.fleet else None
    for run in range(args.runs):
        instances = [start_unicache(args.bin, upstream.server_address[1], work,
                                   (redis[1], f"st{run}:") if redis else None)
                     for _ in range(max(args.fleet, 1))]
        try:
            for kind in ("first", "warmed"):
                first_ms, ms, outcomes, sizes = stampede(
                    client_binary, [port for _, port in instances], f"{kind}-{run}", args.clients, args.close, state)
                figures[kind].append(ms)
                serial[kind].append(first_ms)
                print(f"run {run + 1} {kind:6}: 1 upstream request; {describe(outcomes, sizes)}"
                      f"; first client {first_ms:.1f} ms, last client {ms:.1f} ms after the upstream's answer")
        finally:
            for proc, _ in instances:
                proc.send_signal(signal.SIGTERM)
            for proc, _ in instances:
                proc.wait(timeout=20)
        if not args.raw:
            continue
        baseline = start_baseline(baseline_binary, args.hold, threads)
        try:
            for kind in ("first", "warmed"):
                first_ms, ms, outcomes, sizes = raw_stampede(client_binary, baseline, f"raw-{kind}-{run}",
                                                             args.clients, args.close)
                raw_figures[kind].append(ms)
                print(f"run {run + 1} {kind:6} raw libmicrohttpd ({threads} polling threads): {describe(outcomes, sizes)}"
                      f"; first client {first_ms:.1f} ms, last client {ms:.1f} ms after the release")
        finally:
            baseline[0].send_signal(signal.SIGTERM)
            baseline[0].wait(timeout=20)
    for kind, values in figures.items():
        print(f"{kind:6}: last client answered {statistics.median(values):.1f} ms (median of {len(values)}), "
              f"worst {max(values):.1f} ms, after the upstream's answer; the first client "
              f"{statistics.median(serial[kind]):.1f} ms (median)")
    for kind, values in raw_figures.items():
        if not values:
            continue
        ratios = [ours / raw for ours, raw in zip(figures[kind], values)]
        print(f"{kind:6} raw: last client answered {statistics.median(values):.1f} ms (median of {len(values)}) after "
              f"the release; unicache/raw {statistics.median(ratios):.2f}× (median of the per-round ratios "
              + ", ".join(f"{ratio:.2f}" for ratio in ratios) + ")")
    if args.raw:
        print("target: the warmed stampede's last client within 1.7× raw libmicrohttpd's (unicache/raw ≤ 1.7×)")

if __name__ == "__main__":
    main()
