"""The READMEs as a newcomer follows them: every command shown runs as written, from the
repository root, and every output shown is what the program prints.

See ``tests/readme_blocks.py`` for the markers. Placeholders are filled as a reader
would: ``RUN_ID``/``BASELINE_RUN`` with the document's first run, ``CANDIDATE_RUN`` with
its latest, ``sha256:…`` with the latest diagnosis or comparison printed (``DIAGNOSIS_ID``,
``COMPARISON_ID``: the latest of that kind). Every hint
an output prints (``Then:``, ``Cases:``) is run as written too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from projects import copy_project
from readme_blocks import Block, commands, read_blocks, shown_in

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
READMES = ("README.md", "examples/support_rag/README.md", "examples/support_agent/README.md")
_FIRST = {"RUN_ID", "RUN", "BASELINE_RUN", "BASELINE"}
_LATEST = {"CANDIDATE_RUN", "CANDIDATE"}
_CONTENT = {"sha256:…"}
_HINT = re.compile(r"^(?:Then|Cases|Inspect): (oloproof .*)$")
_ALLOWED_EXITS = (0, 3)  # 3: a gate that blocks, a judge that fails its validation


class Scenario:
    """What a reader has seen so far: the runs and ids the commands printed."""

    def __init__(self) -> None:
        self.runs: list[str] = []
        self.content_id: str | None = None
        self.latest: dict[str, str] = {}
        self.output = ""

    def argv(self, words: list[str]) -> list[str]:
        return [self._fill(word) for word in words]

    def _fill(self, word: str) -> str:
        if word in _FIRST | _LATEST:
            assert self.runs, f"{word} before any run"
            return self.runs[0] if word in _FIRST else self.runs[-1]
        if word in _CONTENT:
            assert self.content_id, f"{word} before any diagnosis or comparison"
            return self.content_id
        if word in ("DIAGNOSIS_ID", "COMPARISON_ID"):
            kind = word.split("_")[0].capitalize()
            assert kind in self.latest, f"{word} before any {kind.lower()}"
            return self.latest[kind]
        return word

    def saw(self, output: str) -> list[str]:
        """Remember what ``output`` printed; returns the hints it printed."""
        self.output = output
        self.runs += re.findall(r"^Run (run_\w+)$", output, flags=re.MULTILINE)
        found = re.findall(r"^(Diagnosis|Comparison) (sha256:[0-9a-f]{64})\b", output, flags=re.MULTILINE)
        if found:
            self.content_id = found[-1][1]
            self.latest.update(found)
        return [match.group(1) for line in output.splitlines() if (match := _HINT.match(line))]


@pytest.mark.parametrize("readme", READMES)
def test_every_command_block_is_marked(readme):
    unmarked = [block.where for block in read_blocks(REPO / readme) if block.names_a_command and block.marker is None]
    assert not unmarked, f"blocks naming oloproof without a doc marker: {unmarked}"
    outputs = [block for block in read_blocks(REPO / readme) if block.marker and block.marker.startswith("output")]
    assert all(block.info == "text" for block in outputs), [block.where for block in outputs]


@pytest.mark.parametrize("readme", READMES)
def test_the_readme_runs_as_written_and_prints_what_it_shows(readme, run_cli, tmp_path, monkeypatch):
    workspace = tmp_path / "repository"
    for example in ("support_rag", "support_agent"):
        copy_project(REPO / "examples" / example, workspace / "examples" / example, batched=False)
    monkeypatch.chdir(workspace)  # every command is shown as typed at the repository root
    monkeypatch.setenv("COLUMNS", "200")
    scenario = Scenario()
    checked = 0
    for block in read_blocks(REPO / readme):
        if block.marker == "run":
            for words in commands(block.text):
                hints = _run(run_cli, scenario, block, scenario.argv(words))
                for hint in hints:
                    (hinted,) = commands(hint)
                    _run(run_cli, Scenario(), block, hinted)
                    checked += 1
        elif block.marker == "output":
            assert scenario.output, f"{block.where}: an output block before any command ran"
            problem = shown_in(block, scenario.output)
            assert problem is None, problem
            checked += 1
    assert checked, f"{readme} checks nothing"


def _run(run_cli, scenario: Scenario, block: Block, argv: list[str]) -> list[str]:
    code, out, err = run_cli(*argv)
    assert code in _ALLOWED_EXITS, f"{block.where}: oloproof {' '.join(argv)} exited {code}: {err}"
    return scenario.saw(out)
