"""The HTML report: self-contained, and every text from cases and answers inert."""

from __future__ import annotations

import base64
import hashlib
import re

from oloproof.report import ReportPage, failure_funnel, read_report_cases, render_html

SCRIPT = "<script>document.body.setAttribute('data-pwned', 'script')</script>"
ONERROR = "<img src=x onerror=\"document.body.setAttribute('data-pwned', 'onerror')\">"
CLOSER = "</script><script>document.body.setAttribute('data-pwned', 'closer')</script>"


def _page() -> ReportPage:
    cases = [{"case_id": "c1", "status": "ok", "repeat": 0, "best_relevant_position": 1,
              "input": {"question": "Refunds? " + SCRIPT}, "output": {"answer": "Yes " + ONERROR + CLOSER},
              "context": [{"doc_id": "kb-1", "position": 1}], "expected": {"relevant": [{"doc_id": "kb-1"}]}},
             {"case_id": "c2 " + ONERROR, "status": "ok", "repeat": 0, "best_relevant_position": None,
              "input": {"question": "Plain?"}, "output": {"answer": "no"}, "context": [],
              "expected": {"relevant": [{"doc_id": "kb-1"}]}}]  # fmt: skip
    judgments = [{"case_id": c["case_id"], "criterion": "answer_correct", "status": "observed", "passed": ok,
                  "value": float(ok), "reason": "reason " + SCRIPT, "repeat": 0}
                 for c, ok in zip(cases, (True, False), strict=True)]  # fmt: skip
    retrievals = [{"case_id": "c1", "position": 1, "doc_id": "kb-1 " + ONERROR, "text": "Passage " + SCRIPT,
                   "in_context": True, "repeat": 0}]  # fmt: skip
    report = {"run_id": "run_01TEST", "system": {"name": "s " + SCRIPT, "version": "1", "depth": 6, "top_k": 2},
              "case_count": 2, "created_at": "2026-12-04T00:00:00+00:00", "dataset": "cases.jsonl",
              "confidence": 0.95, "metrics": [], "slices": []}  # fmt: skip
    funnel = failure_funnel(cases, judgments, "answer_correct", depth=6, top_k=2)
    return ReportPage(report=report, cases=cases, judgments=judgments, retrievals=retrievals, funnels=[funnel])


def test_planted_markup_stays_text_in_the_page_and_in_its_data():
    html = render_html(_page())
    # One script element runs, the package's own; the data is base64 no text can leave.
    assert html.count("<script>") == 1 and html.count('<script type="application/octet-stream"') == 1
    assert "onerror" not in html and "<img" not in html and "<script>document" not in html
    data = re.search(r'id="oloproof-cases">(.*?)</script>', html, re.DOTALL)
    assert data is not None and re.fullmatch(r"[A-Za-z0-9+/=]*", data.group(1))
    packed = read_report_cases(html)
    cases = packed["cases"]
    assert cases[0]["question"] == "Refunds? " + SCRIPT  # the text itself survives, to be shown as text
    assert cases[0]["answer"] == "Yes " + ONERROR + CLOSER
    assert cases[1]["id"] == "c2 " + ONERROR
    assert packed["texts"][cases[0]["candidates"][0]["text"]] == "Passage " + SCRIPT
    assert "s &lt;script&gt;" in html  # server-rendered text is escaped by the template


def test_the_page_allows_no_request_and_no_script_but_its_own():
    html = render_html(_page())
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    assert "default-src 'none'" in policy.group(1)
    script = re.search(r"<script>(.*?)</script>", html, re.DOTALL)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy.group(1)
    for remote in ("http://", "https://", "//cdn", "src=\"http"):
        assert remote not in html
    assert "textContent" in script.group(1) and "innerHTML" not in script.group(1)


def test_a_passage_retrieved_for_many_cases_is_carried_once():
    page = _page()
    many = [dict(page.retrievals[0], case_id=case["case_id"]) for case in page.cases]
    packed = read_report_cases(render_html(ReportPage(**{**vars(page), "retrievals": many})))
    assert packed["texts"] == ["Passage " + SCRIPT]
    assert [c["candidates"][0]["text"] for c in packed["cases"]] == [0, 0]
