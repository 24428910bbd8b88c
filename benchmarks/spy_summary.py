#!/usr/bin/env python
"""Summarize a raw (collapsed-stack) ``py-spy record --threads --format raw`` profile.

Usage::

    python benchmarks/spy_summary.py PROFILE.txt [--top 25] [--match oloproof/]

Prints, in samples and % of all samples (a sample is one thread seen on-CPU,
or waiting on the GIL, at one tick; idle threads are not sampled by default):

* per thread group (the thread name without its number),
* the top frames by *self* samples (the leaf of the stack),
* the top frames by *inclusive* samples (anywhere on the stack, counted once per stack),
* with ``--match``, only inclusive frames whose file matches (e.g. ``oloproof/``), and
  per sample the matching frame nearest the leaf (its own work and what it called).
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

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


@dataclass
class Summary:
    """A raw profile's samples: in all, per thread group, by leaf frame and anywhere on the stack."""

    total: int = 0
    groups: collections.Counter[str] = field(default_factory=collections.Counter)
    own: collections.Counter[str] = field(default_factory=collections.Counter)
    inclusive: collections.Counter[str] = field(default_factory=collections.Counter)
    innermost: collections.Counter[str] = field(default_factory=collections.Counter)
    """With a ``match``: per sample, the frame nearest the leaf that holds it (its own work and
    the library code it called), so that the shares add up to at most 100%."""


def summarize(path: str | Path, *, match: str | tuple[str, ...] | None = None, thread: str | None = None) -> Summary:
    """Read a raw profile; ``match`` (a text, or several) keeps only inclusive frames holding
    one, ``thread`` only the stacks of thread groups holding it."""
    matches = (match,) if isinstance(match, str) else match
    summary = Summary()
    with open(path, encoding="utf-8", errors="replace") as handle:
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
            if thread and thread not in group:
                continue
            summary.total += count
            summary.groups[group] += count
            body = [_strip_line(f) for f in (frames[1:] if frames[0].startswith("thread (") else frames)]
            if body:
                summary.own[body[-1]] += count
            for frame in set(body):
                if matches is None or any(m in frame for m in matches):
                    summary.inclusive[frame] += count
            if matches is not None:
                inner = next((frame for frame in reversed(body) if any(m in frame for m in matches)), None)
                if inner is not None:
                    summary.innermost[inner] += count
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--match", default=None, help="only inclusive frames whose text contains this")
    parser.add_argument("--thread", default=None, help="only stacks of thread groups containing this")
    args = parser.parse_args(argv)
    summary = summarize(args.profile, match=args.match, thread=args.thread)
    total = summary.total
    if not total:
        print("no samples", file=sys.stderr)
        return 1

    def show(title: str, counter: collections.Counter[str]) -> None:
        print(f"\n== {title} ==")
        for name, count in counter.most_common(args.top):
            print(f"{count:8d} {100 * count / total:6.1f}%  {name}")

    print(f"total samples: {total}")
    show("thread groups", summary.groups)
    show("self (leaf frames)", summary.own)
    show("inclusive" + (f" (matching {args.match!r})" if args.match else ""), summary.inclusive)
    if args.match:
        show(f"innermost frame matching {args.match!r}", summary.innermost)
    return 0


if __name__ == "__main__":
    sys.exit(main())
