"""Headless Chromium for the tests that look at pages: a screenshot, the DOM, the page's
console and every network request it made (Chromium's own net log)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

__all__ = ["chromium", "console_messages", "net_requests", "png_facts"]


def chromium(*args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    command = [
        shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--virtual-time-budget=15000", "--window-size=1400,900", *args,
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)  # fmt: skip
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"chromium did not finish within {timeout} s: {err[-2000:]}")
    finally:
        try:  # its renderer and GPU helpers live in the session it started
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def png_facts(data: bytes) -> tuple[int, int, float]:
    """(width, height, share of non-zero bytes in the filtered image data)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, idat, width, height = 8, b"", 0, 0
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    raw = zlib.decompress(idat)
    # A blank (one-colour) page filters to almost nothing but zeros.
    sample = raw[:: max(1, len(raw) // 200_000)]
    return width, height, sum(1 for byte in sample if byte) / len(sample)


def console_messages(stderr: str) -> list[str]:
    """What the page logged to its console (``--enable-logging=stderr``)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def net_requests(net_log: Path) -> list[str]:
    """Every URL a page opened from a file asked the network stack for (``--log-net-log``);
    the browser's own requests (updates, accounts) are not the page's and are left out."""
    text = net_log.read_text(encoding="utf-8").rstrip().rstrip(",")
    if not text.endswith("}"):  # a log cut short by the browser's exit
        text = text.rstrip(",\n") + "]}"
    try:
        events = json.loads(text).get("events", [])
    except json.JSONDecodeError:
        events = []
    urls = []
    for event in events:
        params = event.get("params") or {}
        if isinstance(params.get("url"), str) and "file://" in str(params.get("network_isolation_key", "")):
            urls.append(params["url"])
    return urls

