"""A serving container that is healthy at once and takes 10 minutes to answer a predict: a batch
prediction job on it is still running when the test cancels it."""

import http.server
import os
import time


class Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()

    def do_POST(self) -> None:
        time.sleep(600)

    def log_message(self, *args: object) -> None:
        pass


host = os.environ.get("SERVING_BIND_HOST", "127.0.0.1")
http.server.HTTPServer((host, int(os.environ["AIP_HTTP_PORT"])), Slow).serve_forever()
