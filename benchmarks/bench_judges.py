"""Judge throughput against a rate limit: the share of the permitted rate a run gets.

A local OpenAI-compatible server answers each chat completion after a fixed
latency and enforces a requests-per-minute limit over a sliding window (a
request beyond it gets a 429 with ``retry-after``). The provider pool sends
``--calls`` judge requests at once, limited by the same ``rpm``; this prints the
achieved rate as a fraction of the permitted one, the 429s the server sent, the
retries they cost and the calls that still failed.

    python benchmarks/bench_judges.py [--calls 2000] [--latency-ms 100] [--rpm 6000]
        [--concurrency 32] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from oloproof.providers import JudgeRequest, ProviderConfig, ProviderPool

SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5}, "reason": {"type": "string"}},
    "required": ["score", "reason"],
    "additionalProperties": False,
}


class _Limited(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, latency_s: float, rpm: int) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.latency_s, self.rpm = latency_s, rpm
        self.lock = threading.Lock()
        self.accepted: collections.deque[float] = collections.deque()
        self.arrivals: list[float] = []
        self.refused = 0

    def admit(self) -> bool:
        now = time.monotonic()
        with self.lock:
            self.arrivals.append(now)
            while self.accepted and self.accepted[0] <= now - 60.0:
                self.accepted.popleft()
            if len(self.accepted) >= self.rpm:
                self.refused += 1
                return False
            self.accepted.append(now)
            return True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Limited

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # http.server dispatches on this name
        self.rfile.read(int(self.headers.get("content-length", 0)))
        if not self.server.admit():
            self._send(429, {"error": {"message": "rate limited", "type": "requests", "code": None}},
                       {"retry-after": "1"})  # fmt: skip
            return
        time.sleep(self.server.latency_s)
        content = json.dumps({"score": 4, "reason": "ok"})
        self._send(200, {
            "id": "x", "object": "chat.completion", "created": 0, "model": "bench",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 8, "total_tokens": 58},
        })  # fmt: skip

    def _send(self, status: int, body: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


async def _judge_all(pool: ProviderPool, calls: int) -> list:
    request = JudgeRequest(system="Grade.", user="An answer.", schema=SCHEMA, schema_name="verdict", model="bench")
    try:
        return await asyncio.gather(*(pool.judge("bench", request) for _ in range(calls)))
    finally:
        await pool.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--rpm", type=int, default=6000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    server = _Limited(args.latency_ms / 1000, args.rpm)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    config = ProviderConfig(type="openai", base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
                            rpm=args.rpm, max_concurrency=args.concurrency, timeout_s=30)  # fmt: skip
    pool = ProviderPool({"bench": config}, os.environ)
    started = time.monotonic()
    results = asyncio.run(_judge_all(pool, args.calls))
    wall = time.monotonic() - started
    server.shutdown()

    permitted = args.rpm / 60.0
    per_second = collections.Counter(int(t - server.arrivals[0]) for t in server.arrivals)
    figures = {
        "calls": args.calls,
        "wall_s": round(wall, 2),
        "achieved_per_s": round(args.calls / wall, 2),
        "permitted_per_s": permitted,
        # The ideal is bounded by the rate, and by the concurrency over the latency.
        "ideal_per_s": min(permitted, args.concurrency / (args.latency_ms / 1000)),
        "fraction_of_permitted": round(args.calls / wall / permitted, 3),
        "server_429s": server.refused,
        "retries": sum(r.retries for r in results),
        "failed_calls": sum(1 for r in results if not r.ok),
        "max_requests_in_one_second": max(per_second.values()),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for name, value in figures.items():
            print(f"{name:28} {value}")


if __name__ == "__main__":
    main()
