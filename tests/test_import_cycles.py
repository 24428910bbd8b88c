"""No import cycles in `oloproof`: between its modules, and between its first-level packages.

The graph is read with `ast` by `scripts/import_graph.py` (kept out of the installed package), and
counts every import: at module level, inside functions and under `if TYPE_CHECKING:`. A function-level
import only moves a cycle to the first call, and a type-checking import is still a dependency that mypy
follows, so neither breaks a cycle: the shared piece moves down instead.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from import_graph import all_cycles, build_graph  # found through the path above


def test_oloproof_has_no_import_cycles():
    cycles = all_cycles(ROOT / "src", "oloproof")
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_graph_covers_every_module():
    graph = build_graph(ROOT / "src", "oloproof")
    assert len(graph.files) == len(list((ROOT / "src" / "oloproof").rglob("*.py")))
    assert "oloproof.store" in graph.files  # a package is its __init__
    assert {edge.target for edge in graph.edges["oloproof.store"]} >= {"oloproof.store._layout"}


def _plant(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    for folder in [root / "pkg", *(p for p in (root / "pkg").rglob("*") if p.is_dir())]:
        (folder / "__init__.py").touch()
    return root


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {"a.py": "from pkg.b import x\n", "b.py": "import pkg.a\nx = 1\n"},
            ["modules: pkg.a (line 1) -> pkg.b (line 1) -> pkg.a"],
            id="module-level",
        ),
        pytest.param(
            {"a.py": "from pkg import b\n", "b.py": "def f():\n    from pkg.a import y\n"},
            ["modules: pkg.a (line 1) -> pkg.b (line 2) -> pkg.a"],
            id="inside-a-function",
        ),
        pytest.param(
            {"a.py": "from pkg.b import x\n",
             "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\nx = 1\n"},
            ["modules: pkg.a (line 1) -> pkg.b (line 3) -> pkg.a"],
            id="under-type-checking",
        ),
        pytest.param(
            {"a.py": "from . import b\n", "b.py": "from .a import y\n"},
            ["modules: pkg.a (line 1) -> pkg.b (line 1) -> pkg.a"],
            id="relative",
        ),
        pytest.param(
            {"sub/__init__.py": "from pkg.sub._m import x\n", "sub/_m.py": "from pkg.sub import _n\nx = 1\n",
             "sub/_n.py": ""},
            ["modules: pkg.sub (line 1) -> pkg.sub._m (line 1) -> pkg.sub"],
            id="through-the-package-init",
        ),
        pytest.param(
            {"one/__init__.py": "", "one/_a.py": "from pkg.two._b import y\n",
             "two/__init__.py": "", "two/_b.py": "y = 1\n", "two/_c.py": "from pkg.one._d import z\n",
             "one/_d.py": "z = 1\n"},
            ["packages: pkg.one (pkg.one._a line 1) -> pkg.two (pkg.two._c line 1) -> pkg.one"],
            id="between-packages",
        ),
        pytest.param(
            {"one/__init__.py": "from pkg.one._a import a\n", "one/_a.py": "a = 1\n",
             "two.py": "from pkg.one._a import a\n", "one/_b.py": "import pkg.two\n"},
            ["packages: pkg.one (pkg.one._b line 1) -> pkg.two (line 1) -> pkg.one"],
            id="initialising-a-parent",
        ),
    ],
)
def test_the_checker_finds_a_planted_cycle(tmp_path, files, expected):
    assert all_cycles(_plant(tmp_path, files), "pkg") == expected


def test_the_checker_finds_none_in_a_layered_package(tmp_path):
    files = {"low.py": "x = 1\n", "mid.py": "from pkg.low import x\n",
             "top.py": "from pkg import mid\ndef f():\n    import pkg.low\n"}
    assert all_cycles(_plant(tmp_path, files), "pkg") == []
