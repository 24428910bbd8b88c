"""What a person sees in the REAL Prefect server's API and UI after ``oloproof run``.

One run of the example (local store) against the session's server; the API lists it
with readable names, tags and its report artifact, and headless Chromium renders its
flow-run page in the UI the same server serves.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from chromium import chromium, png_facts

pytestmark = [pytest.mark.services, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "support_rag"
RUN_NAME = re.compile(r"run support-rag slice-b-example · 13 cases · config [0-9a-f]{8}")


def _case_ids() -> list[str]:
    lines = (EXAMPLE / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["id"] for line in lines if line.strip()]


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory, prefect_server, server_api):
    """One run of a copy of the example against the real server: (run id, its flow run)."""
    project = tmp_path_factory.mktemp("ui") / "support_rag"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".oloproof", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "AWS_", "OLOPROOF_"))}
    env.update(PREFECT_HOME=str(tmp_path_factory.mktemp("ui-prefect-home")), PREFECT_API_URL=prefect_server,
               PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1")  # fmt: skip
    import sys

    ran = subprocess.run([sys.executable, "-m", "oloproof._cli.main", "run", str(project), "--json"],
                         env=env, check=False, capture_output=True, text=True, timeout=240)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    run_id = report["run_id"]
    mine = server_api("/flow_runs/filter", {
        "flows": {"name": {"any_": ["oloproof-run"]}},
        "flow_runs": {"tags": {"all_": [f"run:{run_id}"]}},
        "limit": 200,
    }) or []  # fmt: skip
    assert len(mine) == 1, f"no flow run tagged run:{run_id}"
    assert (mine[0].get("parameters") or {}).get("run_id") == run_id
    return run_id, mine[0]


def test_api_lists_the_run_with_readable_names(recorded_run, server_api, poll):
    run_id, flow_run = recorded_run
    assert RUN_NAME.fullmatch(flow_run["name"]), flow_run["name"]
    assert flow_run["state_type"] == "COMPLETED"
    config = flow_run["name"].rpartition(" ")[2]
    assert {"oloproof", f"run:{run_id}", "system:support-rag", "version:slice-b-example",
            "index_version:kb-2026-09-16", f"config:{config}"} <= set(flow_run["tags"])  # fmt: skip

    expected = {f"{stage} {case_id}" for case_id in _case_ids() for stage in ("retrieve", "generate", "judge")}
    expected |= {"generate refund_review", f"write run {run_id}", f"publish report {run_id}"}

    def task_run_names() -> set[str]:
        # Task runs reach the server as events, processed a moment after the flow run completes.
        task_runs = server_api("/task_runs/filter", {
            "flow_runs": {"id": {"any_": [flow_run["id"]]}}, "limit": 200,
        }) or []  # fmt: skip
        return {t["name"] for t in task_runs}

    def all_reached() -> set[str] | None:
        found = task_run_names()
        return found if expected <= found else None

    names = poll(all_reached, 30, "the run's task runs to reach the server", 0.5,
                 lambda: f"missing: {sorted(expected - task_run_names())[:10]}")  # fmt: skip
    assert "generate refund_review" in names

    artifacts = server_api("/artifacts/filter", {
        "artifacts": {"flow_run_id": {"any_": [flow_run["id"]]}}, "limit": 50,
    }) or []  # fmt: skip
    reports = [a for a in artifacts if (a.get("key") or "") == "oloproof-" + run_id.lower().replace("_", "-")]
    assert len(reports) == 1, [a.get("key") for a in artifacts]
    (artifact,) = reports
    assert artifact["key"] == "oloproof-" + run_id.lower().replace("_", "-")
    assert artifact["type"] == "markdown"
    assert run_id in artifact["data"] and "answer_correct" in artifact["data"]
    # The artifact is findable by key too, as the UI's artifact page finds it.
    latest = server_api(f"/artifacts/{artifact['key']}/latest")
    assert latest is not None and latest["flow_run_id"] == flow_run["id"]

    # The HTML report written beside the run, linked; and the failure funnel as a table.
    by_key = {a["key"]: a for a in artifacts}
    suffix = run_id.lower().replace("_", "-")
    assert {f"oloproof-run-report-{suffix}", f"oloproof-run-funnel-{suffix}"} <= set(by_key), list(by_key)
    link = by_key[f"oloproof-run-report-{suffix}"]  # a link artifact: Prefect keeps it as markdown
    assert f"runs/{run_id}/report.html" in link["data"] and "file://" in link["data"]
    table = by_key[f"oloproof-run-funnel-{suffix}"]
    assert table["type"] == "markdown" and "| relevant evidence retrieved within depth 6 | 12 |" in table["data"]
    assert "13 → 12 → 12 → 10 → 9" in (table.get("description") or "")
    counts = [int(line.split("|")[2]) for line in table["data"].splitlines() if line.startswith("| ") and
              line.split("|")[2].strip().isdigit()]  # fmt: skip
    assert counts == [13, 12, 12, 10, 9]


def test_ui_renders_the_flow_run_page(recorded_run, prefect_server_info, tmp_path):
    if shutil.which("chromium") is None:
        pytest.skip("Chromium is not installed (apt-get install chromium): the UI screenshot test needs it")
    _, flow_run = recorded_run
    page = f"{prefect_server_info.ui}/runs/flow-run/{flow_run['id']}"

    screenshot = tmp_path / "flow-run.png"
    shot = chromium(f"--user-data-dir={tmp_path / 'chromium-shot'}", f"--screenshot={screenshot}", page)
    assert shot.returncode == 0, shot.stderr[-2000:]
    print(f"\nscreenshot of {page}: {screenshot}")
    assert screenshot.is_file(), shot.stderr[-2000:]
    data = screenshot.read_bytes()
    width, height, nonzero = png_facts(data)
    assert (width, height) == (1400, 900)
    assert len(data) > 20_000, f"a {len(data)}-byte screenshot is blank"
    # about:blank gives 0.02%, the flow-run page 2-4%.
    assert nonzero > 0.005, f"the screenshot is (almost) one colour: {nonzero:.3%} non-zero filtered bytes"

    # The run's artifacts as the UI lists them: the metrics, the funnel and the report's link.
    artifacts = f"{prefect_server_info.ui}/artifacts"
    listing = tmp_path / "artifacts.png"
    shot = chromium(f"--user-data-dir={tmp_path / 'chromium-list'}", f"--screenshot={listing}", artifacts)
    assert shot.returncode == 0 and listing.is_file(), shot.stderr[-2000:]
    if os.environ.get("OLOPROOF_SCREENSHOTS"):  # how docs/ gets its pictures of the UI
        target = Path(os.environ["OLOPROOF_SCREENSHOTS"])
        for source, name in ((screenshot, "flow-run.png"), (listing, "flow-run-artifacts.png")):
            shutil.copy(source, target / name)
    keys = ("oloproof-run-funnel-", "oloproof-run-report-", "oloproof-run-0")
    for attempt in range(5):
        # The UI asks the API for the list after the page loads; on a loaded machine the
        # answer can come after Chromium's virtual-time budget: look again, never wait on a clock.
        listed = chromium(f"--user-data-dir={tmp_path / f'chromium-list-dom-{attempt}'}", "--dump-dom", artifacts)
        if all(key in listed.stdout for key in keys):
            break
    for key in keys:
        assert key in listed.stdout, listed.stdout[-3000:]

    dom = chromium(f"--user-data-dir={tmp_path / 'chromium-dom'}", "--dump-dom", page)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "Can't connect to Server API" not in dom.stdout, "the UI cannot reach the server's API"
    assert flow_run["name"] in dom.stdout, dom.stdout[-3000:]
    for tag in ("system:support-rag", "version:slice-b-example", "index_version:kb-2026-09-16"):
        assert tag in dom.stdout, tag
