"""``oloproof --help`` answers without importing Prefect."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHECK = textwrap.dedent(
    """
    import contextlib, io, sys
    from oloproof._cli.main import main

    for argv in {argv!r}:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                main(argv)
            except SystemExit as stop:
                assert stop.code == 0, (argv, stop.code)
            else:
                raise AssertionError(f"{{argv}} did not exit")
        assert out.getvalue().startswith("usage: oloproof"), out.getvalue()[:200]
    loaded = sorted(name for name in sys.modules if name == "prefect" or name.startswith("prefect."))
    assert not loaded, loaded
    print("ok", len(sys.modules))
    """
)


@pytest.mark.parametrize(
    "argv",
    [[["--help"]], [["run", "--help"]], [["query", "--help"], ["show", "--help"]],
     [["judge", "--help"], ["judge", "validate", "--help"], ["judge", "sample", "--help"]]],
    ids=["help", "run-help", "query-show-help", "judge-help"],
)
def test_help_does_not_import_prefect(argv):
    result = subprocess.run(
        [sys.executable, "-c", CHECK.format(argv=argv)], check=False, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok ")


def test_the_public_api_does_not_import_prefect():
    code = (
        "import sys, oloproof; from oloproof import Passage, Retrieval, rag_system, system; "
        "assert 'prefect' not in sys.modules, 'prefect imported'; print('ok')"
    )
    result = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout) == (0, "ok\n"), result.stderr


def test_version_is_the_installed_distributions():
    from importlib.metadata import version

    result = subprocess.run([sys.executable, "-m", "oloproof._cli.main", "--version"],
                            check=False, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert (result.returncode, result.stdout) == (0, f"oloproof {version('oloproof')}\n"), result.stderr


def _subcommands(parser):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                nested = list(_subcommands(sub))
                yield from ((f"{name} {inner}", p) for inner, p in nested) if nested else [(name, sub)]


def test_every_command_but_serve_takes_json():
    from oloproof._cli.main import build_parser

    commands = dict(_subcommands(build_parser()))
    assert "judge sample" in commands and "index-updated" in commands
    without = sorted(name for name, sub in commands.items()
                     if not any("--json" in action.option_strings for action in sub._actions))  # fmt: skip
    assert without == ["serve"]  # as the README's Command line section says


def _subparsers(parser):
    import argparse

    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices


def test_commands_names_every_command_the_full_parser_has():
    from oloproof._cli.main import COMMANDS, build_parser

    assert set(_subparsers(build_parser())) == COMMANDS


@pytest.mark.parametrize("command", sorted(__import__("oloproof._cli.main", fromlist=["COMMANDS"]).COMMANDS))
def test_a_command_s_own_parser_is_the_full_parser_s(command):
    # A command line naming its command is parsed by a parser holding that command only.
    from oloproof._cli.main import build_parser

    own, every = _subparsers(build_parser(command)), _subparsers(build_parser())
    assert command in own
    assert set(own) < set(every)
    assert own[command].format_help() == every[command].format_help()


def test_a_command_line_builds_only_its_command_s_parser(monkeypatch, capsys):
    from oloproof._cli import main as cli

    built = []
    real = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda command=None: built.append(command) or real(command))
    with pytest.raises(SystemExit):
        cli.main(["query", "--help"])
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert cli.main([]) == 2
    with pytest.raises(SystemExit):
        cli.main(["no-such-command"])
    assert built == ["query", None, None, None]
    assert "invalid choice: 'no-such-command'" in capsys.readouterr().err
