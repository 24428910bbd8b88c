#!/usr/bin/env python3
"""Structure figures of a checkout: what the structure work is measured by.

Usage: ``python scripts/structure_figures.py [ROOT]`` (ROOT: a checkout, this one by default).

Prints, for ROOT:

- the number of ``dict[str, Any]`` annotations under ``ROOT/src`` (parameters, returns, annotated
  assignments and class fields; read with ``ast``, so comments and strings never count), the
  number of source lines holding the text, as a plain ``grep`` counts them, and the annotations
  that use a module-level name for it (``StoredObject = dict[str, Any]``);
- the 10 largest modules under ``ROOT/src`` by lines;
- the tracked size of the repository (the bytes of the files ``git ls-files`` lists) and its
  largest tracked files;
- the import cycles of the ``oloproof`` package, as ``scripts/import_graph.py`` finds them.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from import_graph import all_cycles  # found through the path above

TOP = 10


def _is_dict_str_any(node: ast.expr | None) -> bool:
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == "dict"
        and isinstance(node.slice, ast.Tuple)
        and [ast.unparse(part) for part in node.slice.elts] == ["str", "Any"]
    )


def _annotations(tree: ast.AST) -> list[ast.expr]:
    """Every annotation of a module: arguments, returns and annotated assignments."""
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
            found += [argument.annotation for argument in every if argument is not None and argument.annotation]
            if node.returns is not None:
                found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
    return found


def dict_str_any_count(src: Path) -> int:
    """How many ``dict[str, Any]`` appear in the annotations under ``src``, nested ones included."""
    count = 0
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for annotation in _annotations(tree):
            # A string annotation ("dict[str, Any]") is parsed as what it says.
            text = isinstance(annotation, ast.Constant) and isinstance(annotation.value, str)
            parsed = ast.parse(annotation.value, mode="eval").body if text else annotation  # type: ignore[attr-defined]
            count += sum(1 for node in ast.walk(parsed) if isinstance(node, ast.expr) and _is_dict_str_any(node))
    return count


def dict_str_any_aliases(src: Path) -> dict[str, int]:
    """Module-level names for ``dict[str, Any]`` (``StoredObject = dict[str, Any]``, and names
    for those in turn), each with how many annotations under ``src`` use it: an alias hides
    the same thing, so it counts the same."""
    trees = [ast.parse(path.read_text(encoding="utf-8"), filename=str(path)) for path in sorted(src.rglob("*.py"))]
    aliases: set[str] = set()
    grew = True
    while grew:  # names for names: RunResult = StoredObject
        grew = False
        for tree in trees:
            for node in getattr(tree, "body", []):
                target, value = None, None
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    target, value = node.targets[0].id, node.value
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                    target, value = node.target.id, node.value
                named = isinstance(value, ast.Name) and value.id in aliases
                if target and target not in aliases and (_is_dict_str_any(value) or named):
                    aliases.add(target)
                    grew = True
    uses = dict.fromkeys(sorted(aliases), 0)
    for tree in trees:
        for annotation in _annotations(tree):
            text = isinstance(annotation, ast.Constant) and isinstance(annotation.value, str)
            parsed = ast.parse(annotation.value, mode="eval").body if text else annotation  # type: ignore[attr-defined]
            for node in ast.walk(parsed):
                if isinstance(node, ast.Name) and node.id in uses:
                    uses[node.id] += 1
    return uses


def dict_str_any_lines(src: Path) -> int:
    """How many source lines under ``src`` hold the text ``dict[str, Any]`` (what ``grep -r | wc -l`` counts)."""
    return sum(
        1
        for path in src.rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if "dict[str, Any]" in line
    )


def largest_modules(src: Path, top: int = TOP) -> list[tuple[int, str]]:
    """The ``top`` largest modules under ``src``: (lines, path relative to ``src``)."""
    sizes = [(len(p.read_text(encoding="utf-8").splitlines()), p.relative_to(src).as_posix()) for p in src.rglob("*.py")]
    return sorted(sizes, key=lambda size: (-size[0], size[1]))[:top]


def tracked_files(root: Path) -> list[tuple[int, str]]:
    """Every file ``git ls-files`` lists under ``root``, with its size in bytes, largest first."""
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True, capture_output=True).stdout
    sizes = []
    for name in listed.decode("utf-8", "surrogateescape").split("\0"):
        path = root / name
        if name and path.is_file() and not path.is_symlink():
            sizes.append((path.stat().st_size, name))
    return sorted(sizes, key=lambda size: (-size[0], size[1]))


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.2f} MB"


def figures(root: Path) -> list[str]:
    """The figures' lines for the checkout at ``root``."""
    src = root / "src"
    counted = f"{dict_str_any_count(src)} (lines holding the text: {dict_str_any_lines(src)})"
    aliases = dict_str_any_aliases(src)
    named = ", ".join(f"{name} {uses}" for name, uses in aliases.items()) or "none"
    lines = [f"Structure of {root}", "", f"dict[str, Any] annotations under src/: {counted}",
             f"  and annotations using a name for it: {sum(aliases.values())} ({named})", ""]
    lines.append(f"Largest modules (lines), top {TOP}:")
    lines += [f"  {count:5d}  {name}" for count, name in largest_modules(src)]
    tracked = tracked_files(root)
    total = sum(size for size, _ in tracked)
    lines += ["", f"Tracked: {len(tracked)} files, {total:,} bytes ({_megabytes(total)})", f"Largest tracked files, top {TOP}:"]
    lines += [f"  {size:>11,}  {100 * size / total:5.1f}%  {name}" for size, name in tracked[:TOP]]
    cycles = all_cycles(src, "oloproof")
    lines += ["", f"Import cycles: {len(cycles)}", *(f"  {cycle}" for cycle in cycles)]
    return lines


def main(argv: list[str]) -> int:
    root = Path(argv[0]).resolve() if argv else Path(__file__).resolve().parent.parent
    print("\n".join(figures(root)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
