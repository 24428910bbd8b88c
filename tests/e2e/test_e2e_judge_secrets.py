"""A judge's API key never lands anywhere a run writes.

The key is planted in the environment variable the provider names; the local
judge endpoint echoes it back in every reply (as a hostile or buggy server
might) and refuses one case with it in the error. After a real ``oloproof run``
process reporting to the real Prefect server, the key is in none of: the
results store, the Prefect server's database and log, the machine's Prefect home
(results, logs), and the commands' output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from providers_wire import Answer, Script, chat_json, openai_error, serve

pytestmark = [pytest.mark.services, pytest.mark.slow]

SECRET = "sk-judge-PLANTED-4e8d1c9a7b2f60"


def _echo(seen) -> Answer:
    auth = seen.headers.get("authorization", "")
    user = next(m["content"] for m in seen.body["messages"] if m["role"] == "user")
    if "Can I get my money back?" in user:
        return openai_error(401, f"Incorrect API key provided: {auth}")
    if seen.body["response_format"]["json_schema"]["name"].startswith("citation_support"):
        return chat_json({"citations": []})  # a partial reply: a recorded error with its raw reply
    return chat_json({"score": 4, "reason": f"grounded; you sent {auth}"})


def _files(root: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}


def test_the_judge_key_is_in_nothing_a_run_writes(project_copy, machine, olo, server, prefect_server_info):
    script = serve(server, "/v1/chat/completions", Script(_echo))
    project = project_copy()
    config = project / "judges.yaml"
    config.write_text(config.read_text().replace("# api_key_env: OPENAI_API_KEY", "api_key_env: JUDGE_KEY"))
    env = machine(JUDGE_KEY=SECRET)
    ran = olo("run", config, "--set", f"providers.local.base_url={server.url_for('/v1')}", "--json", env=env)
    assert ran.returncode == 0, ran.stderr[-3000:]
    outputs = [ran.stdout, ran.stderr]
    report = json.loads(ran.stdout)
    assert len(script.seen) >= 26 and all(s.headers["authorization"] == f"Bearer {SECRET}" for s in script.seen)
    usage = report["judges"][0]
    assert usage["errors"] >= 2 and usage["calls"] >= 14  # partial citation replies and one 401

    places: dict[str, dict[Path, bytes]] = {
        "the results store": _files(project / ".oloproof"),
        "the Prefect server's home (database, log)": _files(prefect_server_info.home),
        "the machine's Prefect home": _files(Path(env["PREFECT_HOME"])),
    }
    assert places["the results store"] and any(p.name.startswith("prefect.db") for p in places[
        "the Prefect server's home (database, log)"])  # fmt: skip
    for where, files in places.items():
        for path, data in files.items():
            assert SECRET.encode() not in data, f"the key is in {where}: {path}"
    for text in outputs:
        assert SECRET not in text, "the key is in a command's output"
    # What the echoing server said was kept, with the key blanked out.
    code = olo("query", "SELECT reason, raw_reply, detail FROM judgments WHERE outcome = 'error' OR reason LIKE '%sent%'",
               "--project", project, "--json", env=env)  # fmt: skip
    assert code.returncode == 0, code.stderr
    rows = json.loads(code.stdout)
    assert rows and all(SECRET not in json.dumps(row) for row in rows)
    assert any("Bearer" in json.dumps(row) for row in rows)


STORAGE_SECRET = "Bearer storage-PLANTED-93b1f0"
URL_SECRET = "url-PLANTED-5d2c7e1a"


def test_storage_options_and_a_signed_dataset_url_are_in_nothing_a_run_writes(
        project_copy, machine, olo, server, prefect_server_info):
    # The dataset is served over HTTP at a presigned-style URL, and read with an
    # Authorization header from storage_options, as a private bucket's would be.
    project = project_copy(storage_options={"client_kwargs": {"headers": {"Authorization": STORAGE_SECRET}}})
    cases = (project / "cases.jsonl").read_bytes()
    seen = []

    def serve_cases(request):
        from werkzeug import Response

        seen.append(request.headers.get("Authorization"))
        return Response(cases, content_type="application/octet-stream")

    server.expect_request("/private/cases.jsonl").respond_with_handler(serve_cases)
    url = (server.url_for("/private/cases.jsonl")
           + f"?X-Amz-Credential=AKIA%2F{URL_SECRET}&X-Amz-Signature={URL_SECRET}")  # fmt: skip
    env = machine()
    ran = olo("run", project, "--dataset", url, "--json", env=env)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert STORAGE_SECRET in seen  # the header did reach the dataset's server
    report = json.loads(ran.stdout)
    assert report["dataset"].endswith("X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED")
    listed = olo("runs", "--project", project, env=env)
    shown = olo("show", report["run_id"], "--project", project, env=env)
    places = {
        "the results store": _files(project / ".oloproof"),
        "the Prefect server's home (database, log)": _files(prefect_server_info.home),
        "the machine's Prefect home": _files(Path(env["PREFECT_HOME"])),
    }
    for where, files in places.items():
        for path, data in files.items():
            for secret in (STORAGE_SECRET, URL_SECRET):
                assert secret.encode() not in data, f"{secret} is in {where}: {path}"
    for text in (ran.stdout, ran.stderr, listed.stdout, listed.stderr, shown.stdout, shown.stderr):
        assert STORAGE_SECRET not in text and URL_SECRET not in text, "a secret is in a command's output"
