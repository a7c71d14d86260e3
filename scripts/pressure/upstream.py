#!/usr/bin/env python3
"""A minimal upstream for scripts/pressure.sh: answers every GET with a small JSON body, until killed.
    upstream.py PORT_FILE     (binds a free loopback port and writes it to PORT_FILE)"""
import http.server
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The head and the body are two writes: with Nagle's algorithm the body would wait for the head's ACK, which a
    # kept-alive connection's receiver delays up to 40 ms.
    disable_nagle_algorithm = True

    def do_GET(self):
        body = b'{"status":"active","plan":"pressure","renewsAt":"2030-01-01T00:00:00Z"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1], "w") as port_file:
    port_file.write(str(server.server_address[1]))
server.serve_forever()
