"""How large a 10,000-case HTML report is, and how soon Chromium can use it.

Builds a report of ``--cases`` synthetic cases (a 120-character question, six
retrieved passages of 300 characters, an answer, three verdicts each), writes it,
and opens it in headless Chromium ``--repeats`` times; the page records when its
case browser was ready (``data-ready-ms``, from navigation start: parsing the page
and its case data, and drawing the first page of rows).

    python benchmarks/report_scale.py                 # 10,000 cases, 3 openings, about 30 s
    python benchmarks/report_scale.py --cases 2000 --json
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from oloproof.report import ReportPage, failure_funnel, render_html


def synthetic_page(cases: int, seed: int = 0) -> ReportPage:
    """A run of ``cases`` cases with realistic text sizes and a spread of outcomes."""
    rng = random.Random(seed)
    # A vocabulary of 5,000 made-up words drawn by a Zipf law: text that compresses about
    # as well as English does, not the runs of a few words that would flatter the size.
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 10))) for _ in range(5000)]
    weights = [1 / (rank + 1) for rank in range(len(words))]

    def text(length: int) -> str:
        out: list[str] = []
        while sum(len(w) + 1 for w in out) < length:
            out.extend(rng.choices(words, weights, k=8))
        return " ".join(out)[:length]

    rows, judgments, retrievals = [], [], []
    for i in range(cases):
        case_id = f"case_{i:05d}"
        position = rng.choice([1, 1, 1, 2, 3, 5, None])
        kept = position is not None and position <= 2 and rng.random() < 0.85
        rows.append({"case_id": case_id, "status": "ok", "repeat": 0, "best_relevant_position": position,
                     "input": {"question": text(120)}, "output": {"answer": text(200)},
                     "context": [{"doc_id": "rel" if kept else f"d{i}-1", "position": 1}],
                     "expected": {"relevant": [{"doc_id": "rel"}]}, "relevant_position": str(position)})
        for criterion in ("answer_correct", "citations_valid", "groundedness"):
            passed = rng.random() < (0.8 if kept else 0.3)
            judgments.append({"case_id": case_id, "criterion": criterion, "status": "observed", "passed": passed,
                              "value": float(passed), "reason": text(80), "repeat": 0})
        for position_ in range(1, 7):
            retrievals.append({"case_id": case_id, "position": position_, "doc_id": f"d{i}-{position_}",
                               "text": text(300), "in_context": position_ <= 2, "repeat": 0})
    report = {"run_id": "run_BENCHMARK", "system": {"name": "bench", "version": "1", "depth": 6, "top_k": 2},
              "case_count": cases, "created_at": "2026-12-04T00:00:00+00:00", "dataset": "cases.jsonl",
              "confidence": 0.95, "metrics": [], "slices": ["relevant_position"]}
    funnels = [failure_funnel(rows, judgments, "answer_correct", depth=6, top_k=2)]
    return ReportPage(report=report, cases=rows, judgments=judgments, retrievals=retrievals, funnels=funnels,
                      slices=["relevant_position"])


def open_ms(path: Path, profile: Path) -> tuple[float, float]:
    """Milliseconds from navigation start until the page's case browser was drawn (the
    page's own clock), and the whole headless browser's wall time, start-up included."""
    command = [shutil.which("chromium") or "chromium", "--headless", "--no-sandbox", "--disable-gpu",
               "--no-first-run", "--disable-background-networking", "--disable-component-update",
               "--disable-dev-shm-usage", "--virtual-time-budget=30000", f"--user-data-dir={profile}", "--dump-dom",
               path.as_uri()]
    started = time.perf_counter()
    dom = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False).stdout
    wall = (time.perf_counter() - started) * 1000
    found = re.search(r'data-ready-ms="(\d+)"', dom)
    if found is None:
        raise SystemExit("the page never drew its case browser")
    return float(found.group(1)), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    page = synthetic_page(args.cases)
    started = time.perf_counter()
    html = render_html(page)
    render_s = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.html"
        path.write_text(html, encoding="utf-8")
        small = Path(folder) / "small.html"
        small.write_text(render_html(synthetic_page(13)), encoding="utf-8")
        opens = [open_ms(path, Path(folder) / f"profile-{i}") for i in range(args.repeats)]
        baseline = [open_ms(small, Path(folder) / f"small-{i}")[1] for i in range(args.repeats)]
    result = {"cases": args.cases, "bytes": len(html.encode()), "render_s": round(render_s, 2),
              "open_ms": [ready for ready, _ in opens], "open_ms_median": statistics.median(r for r, _ in opens),
              "browser_wall_ms_median": statistics.median(w for _, w in opens),
              "browser_wall_ms_13_cases_median": statistics.median(baseline)}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.cases:,} cases: {result['bytes'] / 1e6:.1f} MB written in {render_s:.1f} s; "
          f"usable in Chromium after {result['open_ms_median']:.0f} ms by the page's clock (median of {args.repeats}); "
          f"the whole headless browser ran {result['browser_wall_ms_median']:.0f} ms against "
          f"{result['browser_wall_ms_13_cases_median']:.0f} ms for a 13-case report")


if __name__ == "__main__":
    main()
