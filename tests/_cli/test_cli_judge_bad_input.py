"""Bad judge and provider configuration: exit 2, one line naming where, nothing written, no call."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from test_cli_bad_input import edit, line_of

pytestmark = pytest.mark.slow


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rejected(run_cli, config: Path, expected: str, *, prefix: bool = False) -> None:
    code, out, err = run_cli("run", str(config))
    assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
    line = err.removeprefix("oloproof: error: ").rstrip("\n")
    assert line.startswith(expected) if prefix else line == expected, line
    assert not (config.parent / ".oloproof" / "results" / "runs").exists()


@pytest.fixture
def config(example_project, server) -> Path:
    """The example's judges.yaml, pointed at a local endpoint that must never be called."""
    path = example_project / "judges.yaml"
    edit(path, "http://127.0.0.1:11434/v1", server.url_for("/v1"))
    return path


def test_a_missing_key_names_the_variable(run_cli, config, server, monkeypatch):
    monkeypatch.delenv("JUDGE_KEY_UNSET", raising=False)
    edit(config, "# api_key_env: OPENAI_API_KEY", "api_key_env: JUDGE_KEY_UNSET")
    _rejected(run_cli, config, f"{config}:{line_of(config, 'api_key_env: JUDGE')}: field 'providers.local.api_key_env': "
              "provider 'local' reads its API key from the environment variable JUDGE_KEY_UNSET, "
              "which is not set or empty")  # fmt: skip
    assert server.log == []


def test_an_unreachable_endpoint_names_the_url(run_cli, config):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    text = config.read_text()
    config.write_text(text.replace(text.split("base_url: ")[1].split()[0], url, 1))
    _rejected(run_cli, config, f"{config}:{line_of(config, 'base_url:')}: field 'providers.local.base_url': "
              f"cannot reach {url} (provider 'local'): ", prefix=True)  # fmt: skip


def test_an_unknown_provider_type(run_cli, config):
    edit(config, "type: openai", "type: gemini")
    _rejected(run_cli, config, f"{config}:{line_of(config, 'type: gemini')}: field 'providers.local.type': ",
              prefix=True)  # fmt: skip


def test_a_judge_naming_an_unconfigured_provider(run_cli, config):
    edit(config, "{type: groundedness_judge, provider: local", "{type: groundedness_judge, provider: remote")
    _rejected(run_cli, config, f"{config}:{line_of(config, 'provider: remote')}: field 'evaluators.5.provider': "
              "no provider named 'remote' (configured: local)")  # fmt: skip


def test_a_threshold_outside_the_score_range(run_cli, config):
    edit(config, '{type: groundedness_judge, provider: local, model: "llama3.1:8b"}',
         '{type: groundedness_judge, provider: local, model: "llama3.1:8b", threshold: 9}')  # fmt: skip
    _rejected(run_cli, config, f"{config}:{line_of(config, 'threshold: 9')}: field 'evaluators.5.threshold': "
              "threshold 9 is outside the score range 1-5")  # fmt: skip


def test_a_prompt_field_the_case_does_not_have(run_cli, config):
    prompt = config.parent / "my_prompt.md"
    prompt.write_text("[system]\nGrade it.\n\n[user]\n{{response}}\n{{expected_answer}}\n")
    edit(config, '{type: groundedness_judge, provider: local, model: "llama3.1:8b"}',
         '{type: groundedness_judge, provider: local, model: "llama3.1:8b", prompt: my_prompt.md}')  # fmt: skip
    _rejected(run_cli, config, f"{prompt}:6: field 'expected_answer': the prompt uses {{{{expected_answer}}}}, "
              "which this judge does not read (it reads: context, query, response)")  # fmt: skip
