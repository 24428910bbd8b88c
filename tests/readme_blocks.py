"""The READMEs' fenced blocks, and the marker above each that says how a test checks it.

The marker is an HTML comment on the line just above the opening fence (invisible
once rendered):

- ``<!-- doc: run -->`` above a ``sh`` block: each ``oloproof`` command in it runs as
  written, from the folder the README says, in the order of the document.
- ``<!-- doc: not run: REASON -->`` above a ``sh`` block: shown, not run, for the reason
  given (it starts long-lived servers, needs a model server, or is a synopsis).
- ``<!-- doc: output -->`` above a ``text`` block: what the last command run printed.
  Its lines appear in that output consecutively, every character compared once ids
  are masked: a block may show part of an output, never something it does not print.
- ``<!-- doc: output of tests/PATH -->`` above a ``text`` block: printed by that test,
  which checks it.

A ``sh`` block naming an ``oloproof`` command must carry one of the first two.

A plain module (not a conftest), so test modules can import it by name.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Block", "commands", "mask", "read_blocks", "shown_in"]

_MARKER = re.compile(r"^<!--\s*doc:\s*(run|not run:\s*\S.*|output(?: of \S+)?)\s*-->$")
_FENCE = re.compile(r"^```(\w*)\s*$")
_END = "\x01end of command"
_COMMAND = re.compile(r"(^|[\s/])oloproof\s")
_MASKS = (
    (re.compile(r"\brun_[0-9A-HJKMNP-TV-Z]{26}\b"), "run_<id>"),
    (re.compile(r"\bsha256:[0-9a-f]{64}\b"), "sha256:<id>"),
    (re.compile(r"\bsmp_[0-9A-HJKMNP-TV-Z]{26}\b"), "smp_<id>"),
    (re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?"), "<time>"),
)


@dataclass(frozen=True)
class Block:
    """One fenced block of a Markdown file."""

    where: str
    """``README.md:41``: the file and the line of its opening fence."""

    info: str
    """The fence's language (``sh``, ``text``, ``yaml``, ...), empty if none."""

    marker: str | None
    """``run``, ``not run: ...``, ``output`` or ``output of ...``; ``None`` without one."""

    text: str
    """The block's content, without its fences."""

    @property
    def names_a_command(self) -> bool:
        """Whether it is a shell block naming an ``oloproof`` command."""
        return self.info in ("", "sh", "bash", "shell") and bool(_COMMAND.search(self.text))


def read_blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, with the marker just above it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opened = _FENCE.match(lines[index])
        if not opened:
            index += 1
            continue
        above = _MARKER.match(lines[index - 1].strip()) if index else None
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        blocks.append(Block(where=f"{path.name}:{index + 1}", info=opened.group(1),
                            marker=above.group(1) if above else None,
                            text="\n".join(lines[index + 1:end])))  # fmt: skip
        index = end + 1
    return blocks


def commands(script: str) -> list[list[str]]:
    """The words of each ``oloproof`` command of a shell script, as a POSIX shell splits them.

    The shell itself reads the script (quotes, escapes, continuation lines, comments),
    with ``oloproof`` a function printing the words it was given, NUL-terminated.
    """
    program = f"set -f\noloproof() {{ printf '%s\\0' \"$@\"; printf '{_END}\\0'; }}\n{script}\n"
    printed = subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=True).stdout
    found: list[list[str]] = [[]]
    for word in printed.split("\0")[:-1]:
        if word == _END:
            found.append([])
        else:
            found[-1].append(word)
    return found[:-1]


def mask(text: str) -> str:
    """``text`` with ids (run, diagnosis, comparison, sample) and times replaced by their kind."""
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


def shown_in(block: Block, output: str) -> str | None:
    """``None`` if the block's lines appear consecutively in ``output``; else what differs."""
    shown = mask(block.text).splitlines()
    printed = mask(output).splitlines()
    for start in range(len(printed) - len(shown) + 1):
        if printed[start:start + len(shown)] == shown:
            return None
    first = next((i for i, line in enumerate(printed) if line == shown[0]), None)
    if first is None:
        return f"{block.where}: its first line is not printed: {shown[0]!r}\nprinted:\n" + "\n".join(printed)
    for offset, line in enumerate(shown):
        got = printed[first + offset] if first + offset < len(printed) else "(end of output)"
        if got != line:
            return f"{block.where}, line {offset + 1} of the block:\n shown   {line!r}\n printed {got!r}"
    return f"{block.where}: not printed"
