"""`scripts/structure_figures.py`: the figures the structure is measured by, on a planted checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from structure_figures import dict_str_any_count, dict_str_any_lines, figures  # found through the path above

_MODULE = '''\
from typing import Any

# dict[str, Any] in a comment is no annotation
def f(a: dict[str, Any], b: "dict[str, Any]") -> list[dict[str, Any]]:
    x: dict[str, int] = {}
    text = "dict[str, Any]"
    return [a]


class C:
    field: dict[str, Any] | None = None
'''


def _checkout(root: Path) -> Path:
    package = root / "src" / "oloproof"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from oloproof import b\n", encoding="utf-8")
    (package / "a.py").write_text(_MODULE, encoding="utf-8")
    (package / "b.py").write_text("def g():\n    import oloproof\n", encoding="utf-8")
    (root / "data.bin").write_bytes(b"0" * 5000)
    subprocess.run(["git", "-C", str(root), "init", "-q"], check=True)
    subprocess.run(["git", "-C", str(root), "add", "src", "data.bin"], check=True)
    (root / "untracked.txt").write_text("not counted", encoding="utf-8")
    return root


def test_annotations_are_counted_and_text_is_not(tmp_path):
    src = _checkout(tmp_path) / "src"
    assert dict_str_any_count(src) == 4  # a, b (a string annotation), the return, the field
    assert dict_str_any_lines(src) == 4  # the comment's line and the string's count; the signature's is one


def test_the_figures_name_sizes_modules_and_cycles(tmp_path):
    root = _checkout(tmp_path)
    lines = figures(root)
    assert "dict[str, Any] annotations under src/: 4 (lines holding the text: 4)" in lines
    assert lines[lines.index("Largest modules (lines), top 10:") + 1] == "     11  oloproof/a.py"
    tracked = sum(p.stat().st_size for p in [root / "data.bin", *(root / "src").rglob("*.py")])
    assert f"Tracked: 4 files, {tracked:,} bytes ({tracked / 1_000_000:.2f} MB)" in lines
    assert "Import cycles: 1" in lines
    assert "  modules: oloproof (line 1) -> oloproof.b (line 2) -> oloproof" in lines


def test_names_for_dict_str_any_are_counted_where_annotations_use_them(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_text(
        "from typing import Any\n"
        "Stored = dict[str, Any]\n"
        "Result = Stored\n"
        "Counts = dict[str, int]\n"
        "def f(a: Stored, b: list[Result], c: Counts) -> Stored | None:\n"
        "    x: Result = {}\n"
        "    return a\n",
        encoding="utf-8",
    )
    from structure_figures import dict_str_any_aliases

    assert dict_str_any_aliases(src) == {"Result": 2, "Stored": 2}
