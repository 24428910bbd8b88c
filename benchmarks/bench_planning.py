"""How long planning one stage of a batch takes, per case.

A stage's batch task plans its work twice: its cache policy derives the batch's
key from the cases' identities, and its body builds the work items again (no
plan travels between the two). This prints what one planning pass costs for
each stage, so the price of planning twice is a measured figure.

    python benchmarks/bench_planning.py [--copies 770]

The cases are copies of the example's 13, each with its own question.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from oloproof.tasks import Batch, RunRequest, prepare_environment
from oloproof.tasks._assemble_task import assembly_items
from oloproof.tasks._cached import outcome
from oloproof.tasks._generate import generation_items
from oloproof.tasks._retrieve import retrieval_items

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "support_rag"


def _project(folder: Path, copies: int) -> Path:
    target = folder / "support_rag"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns(".oloproof", "__pycache__"))
    base = [json.loads(line) for line in (target / "cases.jsonl").read_text().splitlines() if line.strip()]
    lines = (
        json.dumps(dict(case, id=f"{case['id']}-{n}", input={"question": f"{case['input']['question']} #{n}"}))
        for n in range(copies) for case in base
    )  # fmt: skip
    (target / "cases.jsonl").write_text("\n".join(lines) + "\n")
    return target


def _timed(plan) -> tuple[float, list]:
    started = time.perf_counter()
    items = plan()
    return time.perf_counter() - started, items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=770, help="copies of the 13 example cases")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        env = prepare_environment(RunRequest(run_id="bench", project=str(_project(Path(folder), args.copies))))
        try:
            batch = Batch(0, tuple(env.cases))
            seconds, items = _timed(lambda: retrieval_items(env, batch))
            # Planned upstream outcomes, as the next stages receive them.
            retrieved = {
                item.case_id: outcome(key=item.key, record=item.finish(item.call(*item.args)))
                for item in items
            }
            timings = {"retrieve": seconds}
            timings["assemble"], assembly = _timed(lambda: assembly_items(env, batch, retrieved))
            assembled = {
                item.case_id: outcome(key=item.key, record=item.finish(item.call(*item.args)))
                for item in assembly
            }
            timings["generate"], _ = _timed(lambda: generation_items(env, batch, assembled))
        finally:
            env.close()
    cases = len(batch.case_ids)
    for stage, seconds in timings.items():
        print(f"{stage:>9}: {seconds:.3f} s for {cases} cases ({seconds / cases * 1e6:.1f} us per case)")


if __name__ == "__main__":
    main()
