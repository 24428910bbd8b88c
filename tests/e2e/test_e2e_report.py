"""The example's HTML report in a real browser: headless Chromium renders it offline, the
funnel's numbers and the case rows are in its DOM, it made no network request, logged
nothing to its console, and text planted in a case and an answer stayed text."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from chromium import chromium, console_messages, net_requests, png_facts
from projects import copy_project

from oloproof.report import read_report_cases

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_rag"
PLANTED = "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\"><script>document.title='pwned'</script>"


def _report(run_cli, tmp_path: Path) -> Path:
    """The walkthrough's run, diagnosis and comparison in one report, with markup planted
    in a case's question and in the system's answer to it."""
    project = copy_project(EXAMPLE, tmp_path / "support_rag")
    cases = project / "cases.jsonl"
    rows = [json.loads(line) for line in cases.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows[0]["input"]["question"] += " " + PLANTED  # the example's generator quotes the question back
    cases.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    def ok(*argv: str, expect: int = 0) -> dict:
        code, out, err = run_cli(*argv, "--json")
        assert code == expect, err
        return json.loads(out)

    where = ("--project", str(project))
    baseline = ok("run", str(project))["run_id"]
    diagnosis = ok("diagnose", baseline, "--intervention", "gold-context", "--criterion", "answer_correct", *where)
    candidate = ok("run", str(project), "--set", "system.rag.token_budget=120")["run_id"]
    comparison = ok("compare", candidate, baseline, "--policy", str(project / "compare.yaml"), *where, expect=3)
    output = project / "report.html"
    ok("report", baseline, "--diagnosis", diagnosis["diagnosis_id"], "--comparison", comparison["comparison_id"],
       "-o", str(output), *where)  # fmt: skip
    return output


def test_the_report_renders_offline_with_its_funnel_and_cases(run_cli, tmp_path):
    if shutil.which("chromium") is None:
        pytest.skip("Chromium is not installed (apt-get install chromium): the report browser test needs it")
    report = _report(run_cli, tmp_path)
    net_log = tmp_path / "net-log.json"
    shot = tmp_path / "report.png"
    flags = ("--enable-logging=stderr", "--v=0", f"--log-net-log={net_log}")
    rendered = chromium(f"--user-data-dir={tmp_path / 'shot'}", f"--screenshot={shot}", *flags, report.as_uri())
    assert rendered.returncode == 0, rendered.stderr[-2000:]
    width, height, nonzero = png_facts(shot.read_bytes())
    assert (width, height) == (1400, 900) and nonzero > 0.005, "the screenshot is blank"
    print(f"\nscreenshot of the report: {shot}")
    if os.environ.get("OLOPROOF_SCREENSHOTS"):  # how the README gets its picture of the report
        shutil.copy(shot, Path(os.environ["OLOPROOF_SCREENSHOTS"]) / "report.png")
    assert net_requests(net_log) == [], "the report asked the network for something"
    assert console_messages(rendered.stderr) == []

    dom_log = tmp_path / "dom-net-log.json"
    dom = chromium(f"--user-data-dir={tmp_path / 'dom'}", "--dump-dom", "--enable-logging=stderr", "--v=0",
                   f"--log-net-log={dom_log}", report.as_uri())  # fmt: skip
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = dom.stdout
    assert "answer_correct: 13 → 12 → 12 → 10 → 9" in page
    for label in ("RETRIEVAL_MISS", "CONTEXT_ASSEMBLY_LOSS", "GENERATION_FAILURE"):
        assert f'<span class="label">{label}</span>' in page
    # The script built the first page of the case browser: 13 rows, one per case.
    assert len(re.findall(r'<details class="case" data-case="', page)) == 13
    assert "13 of 13 cases · page 1 of 1" in page
    assert "Gate: <span class=\"gate BLOCK\">BLOCK</span>" in page
    # The planted markup is text: no attribute set, no title changed, no element made of it.
    assert "data-pwned" not in page.split("<script", 1)[0].split("<body", 1)[1].split(">", 1)[0]
    assert "<title>pwned</title>" not in page and '<img src="x"' not in page
    assert net_requests(dom_log) == [] and console_messages(dom.stderr) == []

    # Opened (report.html#case=ID), the case shows the planted markup as text in the page.
    cases = read_report_cases(report.read_text(encoding="utf-8"))["cases"]
    (planted,) = [c["id"] for c in cases if PLANTED in c["question"]]
    opened = chromium(f"--user-data-dir={tmp_path / 'open'}", "--dump-dom", "--enable-logging=stderr", "--v=0",
                      report.as_uri() + f"#case={planted}")  # fmt: skip
    assert "&lt;img src=x onerror=" in opened.stdout and "&lt;script&gt;document.title" in opened.stdout
    assert "data-pwned" not in opened.stdout.split("<body", 1)[1].split(">", 1)[0]
    assert console_messages(opened.stderr) == []

    # A malformed case link is ignored: the page still draws its cases, and logs nothing.
    broken = chromium(f"--user-data-dir={tmp_path / 'broken'}", "--dump-dom", "--enable-logging=stderr", "--v=0",
                      report.as_uri() + "#case=%E0%A4")  # fmt: skip
    assert "data-ready-ms" in broken.stdout and console_messages(broken.stderr) == []


def test_the_network_check_sees_a_page_that_does_make_requests(tmp_path):
    if shutil.which("chromium") is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    page = tmp_path / "control.html"
    page.write_text('<img src="http://127.0.0.1:9/x.png"><script>console.log("seen")</script>', encoding="utf-8")
    net_log = tmp_path / "net-log.json"
    rendered = chromium(f"--user-data-dir={tmp_path / 'c'}", "--dump-dom", "--enable-logging=stderr", "--v=0",
                        f"--log-net-log={net_log}", page.as_uri())  # fmt: skip
    assert "http://127.0.0.1:9/x.png" in net_requests(net_log)
    assert any('"seen"' in line for line in console_messages(rendered.stderr))
