"""Git holds source, not binaries: no tracked file over 1 MB, no wheel or archive, no binary content
but the documentation's screenshots (PNG files under ``docs/``, each under 250 KB).

A build output or a downloaded wheel committed by mistake grows every clone for good (a 10.6 MB
wheel once made 78% of the tracked bytes). The largest legitimate file, a reference fixture, is
under 0.8 MB.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

MAX_BYTES = 1_000_000
"""The largest file git may track."""

MAX_SCREENSHOT_BYTES = 250_000
"""The largest screenshot the documentation may hold (the README shows them)."""

BINARY_SUFFIXES = (".whl", ".egg", ".tar.gz", ".tgz", ".zip", ".so", ".dylib", ".dll", ".exe", ".pyc",
                   ".pyd", ".o", ".a", ".duckdb", ".parquet", ".sqlite", ".db")  # fmt: skip
"""Names of built, packed or database files, whatever their size."""


def _tracked(root: Path) -> list[Path]:
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout: there are no tracked files to check")
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True, capture_output=True).stdout
    paths = [root / name for name in listed.decode("utf-8", "surrogateescape").split("\0") if name]
    # A file deleted in the work tree but not yet from the index is not in the next commit's bytes.
    return [path for path in paths if path.is_file() and not path.is_symlink()]


def unwanted(root: Path) -> dict[str, str]:
    """Each tracked file of the checkout at ``root`` that git should not hold, with why."""
    found = {}
    for path in _tracked(root):
        name = path.relative_to(root).as_posix()
        size = path.stat().st_size
        if size > MAX_BYTES:
            found[name] = f"{size:,} bytes, over {MAX_BYTES:,}"
        elif path.name.endswith(BINARY_SUFFIXES):
            found[name] = "a built, packed or database file"
        elif name.startswith("docs/") and name.endswith(".png") and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n":
            if size > MAX_SCREENSHOT_BYTES:
                found[name] = f"a {size:,}-byte screenshot, over {MAX_SCREENSHOT_BYTES:,}"
        elif b"\0" in path.read_bytes()[:8192]:  # how git itself tells a binary file
            found[name] = "binary content"
    return found


def test_git_tracks_no_large_or_binary_file():
    assert unwanted(ROOT) == {}


def test_the_listing_is_the_repository_s():
    tracked = {path.relative_to(ROOT).as_posix() for path in _tracked(ROOT)}
    assert {"pyproject.toml", "README.md", "src/oloproof/__init__.py"} <= tracked


def test_a_committed_wheel_a_large_file_and_a_binary_are_each_found(tmp_path):
    git = ["git", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "tool-1.0-py3-none-any.whl").write_bytes(b"PK")
    (tmp_path / "big.json").write_text("0" * (MAX_BYTES + 1), encoding="utf-8")
    (tmp_path / "blob.txt").write_bytes(b"text\0more")
    (tmp_path / "untracked.whl").write_bytes(b"PK")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n\0small")
    (tmp_path / "docs" / "huge.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * MAX_SCREENSHOT_BYTES)
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0outside docs")
    subprocess.run([*git, "add", "ok.py", "tool-1.0-py3-none-any.whl", "big.json", "blob.txt", "docs", "image.png"],
                   check=True)  # fmt: skip
    assert unwanted(tmp_path) == {
        "big.json": f"{MAX_BYTES + 1:,} bytes, over {MAX_BYTES:,}",
        "blob.txt": "binary content",
        "docs/huge.png": f"a {MAX_SCREENSHOT_BYTES + 8:,}-byte screenshot, over {MAX_SCREENSHOT_BYTES:,}",
        "image.png": "binary content",
        "tool-1.0-py3-none-any.whl": "a built, packed or database file",
    }
