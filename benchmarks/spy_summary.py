#!/usr/bin/env python
"""Summarize a raw (collapsed-stack) ``py-spy record --threads --format raw`` profile.

Usage::

    python benchmarks/spy_summary.py PROFILE.txt [--top 25] [--match oloproof/]

Prints, in samples and % of all samples (a sample is one thread seen on-CPU,
or waiting on the GIL, at one tick; idle threads are not sampled by default):

* per thread group (the thread name without its number),
* the top frames by *self* samples (the leaf of the stack),
* the top frames by *inclusive* samples (anywhere on the stack, counted once per stack),
* with ``--match``, only inclusive frames whose file matches (e.g. ``oloproof/``).
"""

from __future__ import annotations

import argparse
import collections
import re
import sys

_THREAD = re.compile(r"^thread \(\d+\): ?(.*)$")
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^():]+)(?::\d+)?\)$")


def _group(thread_frame: str) -> str:
    match = _THREAD.match(thread_frame)
    name = match.group(1) if match else thread_frame
    return re.sub(r"[_-]?\d+(_\d+)?$", "", name) or "?"


def _strip_line(frame: str) -> str:
    """``func (file:123)`` -> ``func (file)`` so lines of one function merge."""
    match = _FRAME.match(frame)
    return f"{match.group('func')} ({match.group('file')})" if match else frame


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--match", default=None, help="only inclusive frames whose text contains this")
    parser.add_argument("--thread", default=None, help="only stacks of thread groups containing this")
    args = parser.parse_args(argv)

    total = 0
    groups: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    with open(args.profile, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count_text = line.rpartition(" ")
            try:
                count = int(count_text)
            except ValueError:
                continue
            frames = stack.split(";")
            group = _group(frames[0]) if frames[0].startswith("thread (") else "?"
            if args.thread and args.thread not in group:
                continue
            total += count
            groups[group] += count
            body = [_strip_line(f) for f in (frames[1:] if frames[0].startswith("thread (") else frames)]
            if body:
                own[body[-1]] += count
            for frame in set(body):
                if args.match is None or args.match in frame:
                    inclusive[frame] += count
    if not total:
        print("no samples", file=sys.stderr)
        return 1

    def show(title: str, counter: collections.Counter[str]) -> None:
        print(f"\n== {title} ==")
        for name, count in counter.most_common(args.top):
            print(f"{count:8d} {100 * count / total:6.1f}%  {name}")

    print(f"total samples: {total}")
    show("thread groups", groups)
    show("self (leaf frames)", own)
    show("inclusive" + (f" (matching {args.match!r})" if args.match else ""), inclusive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
