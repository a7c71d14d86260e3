#!/usr/bin/env python3
"""How fast an event's invalidation reaches every instance of a fleet (CONTRACT §6.4), for scripts/check-fleet.sh.

Sends `POST /v1/users/USER/events` through the balancer, then asks each instance directly, on kept-alive
connections and in turn without pause, for the user's subscription with `Cache-Control: only-if-cached` (never a
fetch that would store it again) until each answers 504. Times are from the event's answer, on one monotonic clock,
so a poll is sent within a millisecond or so of the previous one even on a loaded machine (a curl per poll from
bash took 5-200 ms there). Fails when a request sent more than BOUND_MS after the answer still got the value.

Usage: fleet-invalidation.py BALANCER_PORT NAME=PORT... (admin token in UNICACHE_ADMIN_TOKEN)
Env: USER_ID (alice), EVENT (subscription.updated), BOUND_MS (100). Prints one line per instance.
"""
import http.client
import json
import os
import sys
import time

USER = os.environ.get("USER_ID", "alice")
EVENT = os.environ.get("EVENT", "subscription.updated")
BOUND_MS = float(os.environ.get("BOUND_MS", "100"))
PATH = f"/v1/users/{USER}/subscription"


def fail(message):
    sys.exit(f"fleet-invalidation: {message}")


def connect(port):
    return http.client.HTTPConnection("127.0.0.1", int(port), timeout=5)


def cached_status(connection):
    connection.request("GET", PATH, headers={"Cache-Control": "only-if-cached"})
    response = connection.getresponse()
    response.read()
    return response.status


def main():
    balancer_port, instances = sys.argv[1], dict(arg.split("=", 1) for arg in sys.argv[2:])
    connections = {name: connect(port) for name, port in instances.items()}
    for name, connection in connections.items():
        status = cached_status(connection)
        if status != 200:
            fail(f"{name} does not hold {PATH} before the event (only-if-cached answered {status})")

    balancer = connect(balancer_port)
    balancer.request("POST", f"/v1/users/{USER}/events", body=json.dumps({"type": EVENT}),
                     headers={"Authorization": f"Bearer {os.environ['UNICACHE_ADMIN_TOKEN']}",
                              "Content-Type": "application/json"})
    response = balancer.getresponse()
    body = response.read().decode()
    answered = time.monotonic()
    if response.status != 200 or '"invalidated":' not in body:
        fail(f"the event answered {response.status} {body}")
    via = response.getheader("X-Served-By", "?")
    print(f"event answered {body} by {via} (through the balancer)")

    last_served = {name: None for name in connections}  # ms after the answer of the last poll that got the value
    gone = {}                                           # name -> (ms after the answer of the first 504, polls)
    polls = {name: 0 for name in connections}
    while len(gone) < len(connections):
        for name, connection in connections.items():
            if name in gone:
                continue
            sent = (time.monotonic() - answered) * 1000
            status = cached_status(connection)
            polls[name] += 1
            if status == 504:
                gone[name] = sent
            elif status != 200:
                fail(f"{name}: {PATH} after the event answered {status}")
            elif sent > BOUND_MS:
                fail(f"{name} still served the invalidated value to a request sent {sent:.1f} ms after the event's "
                     f"answer (bound {BOUND_MS:.0f} ms)")
            else:
                last_served[name] = sent
    for name in connections:
        reached = "the instance the event reached" if name == via else "through Redis"
        served = ("no request sent after the answer got the value" if last_served[name] is None
                  else f"the last request that got the value was sent {last_served[name]:.1f} ms after it")
        print(f"{name} ({reached}): gone for a request sent {gone[name]:.1f} ms after the event's answer, "
              f"poll {polls[name]}; {served} (bound {BOUND_MS:.0f} ms)")


if __name__ == "__main__":
    main()
