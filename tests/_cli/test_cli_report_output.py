"""Writing a report file: whole or not at all, through a link, with the mode a file gets."""

from __future__ import annotations

import os
import stat

import pytest

from oloproof._cli._report import write_atomically
from oloproof._exceptions import UsageError


def test_a_new_report_gets_the_mode_the_umask_allows_and_an_old_one_keeps_its_own(tmp_path):
    umask = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.html"
        write_atomically(str(fresh), "<p>1</p>")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        kept = tmp_path / "kept.html"
        kept.write_text("old", encoding="utf-8")
        kept.chmod(0o640)
        write_atomically(str(kept), "<p>2</p>")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and kept.read_text(encoding="utf-8") == "<p>2</p>"
    finally:
        os.umask(umask)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.html", "kept.html"]  # no temporary left


def test_a_link_is_written_through_and_a_long_name_is_not_made_longer(tmp_path):
    target = tmp_path / "target.html"
    target.write_text("", encoding="utf-8")
    (tmp_path / "link.html").symlink_to(target)
    write_atomically(str(tmp_path / "link.html"), "<p>linked</p>")
    assert (tmp_path / "link.html").is_symlink() and target.read_text(encoding="utf-8") == "<p>linked</p>"
    long = tmp_path / ("r" * 245 + ".html")  # 250 characters: a name the filesystem takes
    write_atomically(str(long), "<p>long</p>")
    assert long.read_text(encoding="utf-8") == "<p>long</p>"


@pytest.mark.parametrize(("name", "message"), [("", "--output is empty"), ("/dev/null", "is not a regular file")])
def test_an_empty_name_and_a_device_are_refused(tmp_path, name, message):
    with pytest.raises(UsageError, match=message):
        write_atomically(name, "<p>x</p>")
