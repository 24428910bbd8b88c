"""How long a store call takes to fail against an S3 endpoint that never answers.

Starts a TCP server on 127.0.0.1 that accepts every connection and sends nothing, then
lists and writes a store there with Oloproof's default timeouts, printing the error and
the seconds each took:

    python scripts/silent_store.py
"""

from __future__ import annotations

import os
import socket
import threading
import time

from oloproof.store import ResultsStore


def main() -> None:
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    threading.Thread(target=lambda: [held.append(server.accept()[0]) for _ in range(1000)], daemon=True).start()
    store = ResultsStore("s3://silent-bucket/oloproof", {"endpoint_url": f"http://127.0.0.1:{server.getsockname()[1]}"})
    for name, call in (("list", lambda: store.list_paths("runs")), ("check writable", store.check_writable)):
        started = time.monotonic()
        try:
            call()
        except Exception as error:  # noqa: BLE001 (printed, whatever it is)
            print(f"{name}: {time.monotonic() - started:.1f} s: {type(error).__name__}: {error}")
        else:
            print(f"{name}: answered?")


if __name__ == "__main__":
    main()
