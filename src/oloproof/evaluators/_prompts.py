"""Judge prompts: versioned files inside the package, or a project's own file.

A prompt file has a ``[system]`` and a ``[user]`` section; ``{{name}}`` marks
where a field the judge read goes. A prompt's hash is part of every judgment
made with it, so editing a prompt re-judges and nothing else does.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from oloproof._exceptions import EvaluatorConfigError

__all__ = ["Prompt", "load_prompt", "packaged_prompt", "parse_prompt"]

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_SECTION = re.compile(r"^\[(system|user)\]\s*$")


@dataclass(frozen=True)
class Prompt:
    """A parsed prompt template."""

    source: str
    """Where it came from: ``oloproof:<name>`` or the file's path."""
    system: str
    """The system message template."""
    user: str
    """The user message template."""
    sha256: str
    """Hash of the file's text: part of the judgment identity."""

    @property
    def fields(self) -> frozenset[str]:
        """The placeholders it uses."""
        return frozenset(_PLACEHOLDER.findall(self.system) + _PLACEHOLDER.findall(self.user))

    def render(self, values: Mapping[str, object]) -> tuple[str, str]:
        """The system and user messages with every placeholder filled in.

        One pass: text inserted for a placeholder is never expanded again.
        """

        def fill(match: re.Match[str]) -> str:
            value = values.get(match.group(1))
            return "" if value is None else str(value)

        return _PLACEHOLDER.sub(fill, self.system).strip(), _PLACEHOLDER.sub(fill, self.user).strip()


def parse_prompt(text: str, source: str, *, allowed: Iterable[str]) -> Prompt:
    """Parse a prompt file's text.

    Args:
        text: The file's content.
        source: Its name in errors.
        allowed: The fields the judge can fill in.

    Raises:
        EvaluatorConfigError: No ``[user]`` section, or a placeholder naming a
            field the judge does not read (with the line it is on).
    """
    allowed = frozenset(allowed)
    sections: dict[str, list[str]] = {"system": [], "user": []}
    current: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        header = _SECTION.match(line)
        if header:
            current = header.group(1)
            continue
        for name in _PLACEHOLDER.findall(line):
            if name not in allowed:
                raise EvaluatorConfigError(
                    f"the prompt uses {{{{{name}}}}}, which this judge does not read "
                    f"(it reads: {', '.join(sorted(allowed))})",
                    path=source, line=number, field=name,
                )
        if current is None:
            if line.strip():
                raise EvaluatorConfigError(
                    "text before the first [system] or [user] section", path=source, line=number
                )
            continue
        sections[current].append(line)
    if not "".join(sections["user"]).strip():
        raise EvaluatorConfigError("the prompt has no [user] section", path=source)
    return Prompt(
        source=source,
        system="\n".join(sections["system"]),
        user="\n".join(sections["user"]),
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )


def packaged_prompt(name: str, *, allowed: Iterable[str]) -> Prompt:
    """One of the prompts shipped in ``oloproof/evaluators/prompts``."""
    text = (resources.files("oloproof.evaluators") / "prompts" / f"{name}.md").read_text(encoding="utf-8")
    return parse_prompt(text, f"oloproof:{name}", allowed=allowed)


def load_prompt(path: str, directory: Path | None, *, allowed: Iterable[str]) -> Prompt:
    """A project's own prompt file (relative to the project folder).

    Raises:
        EvaluatorConfigError: The file cannot be read or parsed.
    """
    file = Path(path).expanduser()
    if not file.is_absolute() and directory is not None:
        file = directory / file
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvaluatorConfigError(f"cannot read the prompt: {exc.__class__.__name__}", path=str(file)) from None
    return parse_prompt(text, str(file), allowed=allowed)
