"""Ranking metrics on a large synthetic run: per-query kernels, batch kernels, references.

Seeded synthetic graded judgements (grades 0-3, every query with a relevant
document, many relevant documents never retrieved) and runs of ``--candidates``
documents per query. Each contender computes hit_rate, recall, precision, mrr,
map and ndcg at ``--k`` for every query:

* ``loop``: our per-query path, as the evaluators judge one case: the first ``k``
  ranked ids to gains (`relevance_gains`), then one kernel call per metric.
* ``batch``: `gain_batch` over all queries, then one batch kernel per metric.
* ``pytrec_eval`` (trec_eval): building the evaluator and evaluating the run, plus
  ``recip_rank`` on the run cut to ``k`` (trec_eval has no cutoff for it).
* ``ranx``: `evaluate` on prebuilt `Qrels`/`Run` (building them is timed apart,
  and the first, compiling, call is made on a small sample beforehand).

Ours take each query's ranking as an ordered list and read only its first ``k``
ids, as the evaluators do; the references take ``{doc: score}`` runs of every
candidate and sort them. ``--cut-references`` gives them the runs cut to ``k``
instead (the same values, less work for them).

A reference that is not installed is skipped. Every contender's per-query values
are checked against the loop's (the batch must equal it bit for bit, references
to 1e-9); a mismatch makes the script exit with status 1.

    python benchmarks/bench_metrics.py [--queries 100000] [--candidates 100] [--k 10]
        [--seed 7] [--cut-references] [--json]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import math
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from oloproof import metrics

METRICS = ("hit_rate", "recall", "precision", "mrr", "map", "ndcg")
TOLERANCE = 1e-9

Qrels = dict[str, dict[str, int]]


def collection(queries: int, candidates: int, seed: int) -> tuple[list[str], Qrels, dict[str, list[str]]]:
    """Query ids, graded qrels and ranked runs (not timed).

    Each query draws ``candidates + 40`` distinct documents from a vocabulary of
    ``10 * candidates``: the first ``candidates`` are its run, and 1 to 30 of all of
    them are judged (grade 0 to 3), so some judged documents are never retrieved.
    """
    rng = np.random.default_rng(seed)
    vocabulary = 10 * candidates
    names = [f"d{i}" for i in range(vocabulary)]
    coprime = np.array([step for step in range(1, 200) if math.gcd(step, vocabulary) == 1])
    qids = [f"q{i}" for i in range(queries)]
    qrels: Qrels = {}
    runs: dict[str, list[str]] = {}
    chunk = 1_000
    for first in range(0, queries, chunk):
        count = min(chunk, queries - first)
        # Distinct documents per query: an arithmetic walk with a step coprime to
        # the vocabulary size, from a random start, then shuffled.
        starts = rng.integers(0, vocabulary, size=(count, 1))
        steps = rng.choice(coprime, size=(count, 1))
        walk = (starts + steps * np.arange(candidates + 40)) % vocabulary
        pools = rng.permuted(walk, axis=1)
        judged_counts = rng.integers(1, 31, size=count).tolist()
        judged_at = rng.permuted(np.tile(np.arange(candidates + 40), (count, 1)), axis=1).tolist()
        graded = rng.integers(0, 4, size=(count, 30)).tolist()
        for row in range(count):
            qid = qids[first + row]
            pool = pools[row].tolist()
            runs[qid] = [names[doc] for doc in pool[:candidates]]
            positions = judged_at[row][: judged_counts[row]]
            judged = {names[pool[p]]: g for p, g in zip(positions, graded[row], strict=False)}
            if not any(judged.values()):
                judged[next(iter(judged))] = 1
            qrels[qid] = judged
    return qids, qrels, runs


def _timed(function: Callable[[], Any]) -> tuple[Any, float]:
    gc.collect()
    started = time.perf_counter()
    value = function()
    return value, time.perf_counter() - started


def ours_loop(qids: list[str], qrels: Qrels, runs: dict[str, list[str]], k: int) -> dict[str, np.ndarray]:
    specs = {name: metrics.MetricSpec(name, k) for name in METRICS}
    values = {name: np.empty(len(qids)) for name in METRICS}
    for index, qid in enumerate(qids):
        gains, ideal = metrics.relevance_gains(runs[qid][:k], qrels[qid])
        for name, spec in specs.items():
            values[name][index] = metrics.ranked_metric(spec, gains, ideal)
    return values


def ours_batch(
    qids: list[str], qrels: Qrels, runs: dict[str, list[str]], k: int
) -> tuple[dict[str, np.ndarray], float, float]:
    batch, build_s = _timed(lambda: metrics.gain_batch([runs[q] for q in qids], [qrels[q] for q in qids], depth=k))

    def kernels() -> dict[str, np.ndarray]:
        return {name: metrics.ranked_metric_batch(metrics.MetricSpec(name, k), batch) for name in METRICS}

    values, kernels_s = _timed(kernels)
    return values, build_s, kernels_s


def reference_pytrec_eval(
    qids: list[str], qrels: Qrels, runs: dict[str, list[str]], k: int
) -> tuple[dict[str, np.ndarray], dict[str, float]] | None:
    if importlib.util.find_spec("pytrec_eval") is None:
        return None
    import pytrec_eval

    scored = {q: {doc: float(len(runs[q]) - rank) for rank, doc in enumerate(runs[q])} for q in qids}
    cut = {q: {doc: float(k - rank) for rank, doc in enumerate(runs[q][:k])} for q in qids}
    measures = {f"success.{k}", f"recall.{k}", f"P.{k}", f"map_cut.{k}", f"ndcg_cut.{k}"}

    def evaluate() -> tuple[dict, dict]:
        full = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(scored)
        rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
        return full, rr

    (full, rr), seconds = _timed(evaluate)
    names = {"hit_rate": f"success_{k}", "recall": f"recall_{k}", "precision": f"P_{k}",
             "map": f"map_cut_{k}", "ndcg": f"ndcg_cut_{k}"}  # fmt: skip
    values = {name: np.array([full[q][measure] for q in qids]) for name, measure in names.items()}
    values["mrr"] = np.array([rr[q]["recip_rank"] for q in qids])
    return values, {"evaluate_s": seconds}


def reference_ranx(
    qids: list[str], qrels: Qrels, runs: dict[str, list[str]], k: int
) -> tuple[dict[str, np.ndarray], dict[str, float]] | None:
    if importlib.util.find_spec("ranx") is None:
        return None
    import ranx

    names = {name: f"{name}@{k}" for name in METRICS}
    scored = {q: {doc: float(len(runs[q]) - rank) for rank, doc in enumerate(runs[q])} for q in qids}
    # ranx compiles its kernels on first use: do that on a few queries, untimed.
    sample = qids[:50]
    ranx.evaluate(ranx.Qrels({q: qrels[q] for q in sample}), ranx.Run({q: scored[q] for q in sample}),
                  list(names.values()), return_mean=False)  # fmt: skip
    (ranx_qrels, ranx_run), build_s = _timed(lambda: (ranx.Qrels(qrels), ranx.Run(scored)))
    per_query, evaluate_s = _timed(
        lambda: ranx.evaluate(ranx_qrels, ranx_run, list(names.values()), return_mean=False)
    )
    # ranx orders queries by id; map them back to ours.
    order = {q: i for i, q in enumerate(ranx_run.keys())}
    index = np.array([order[q] for q in qids])
    values = {name: np.asarray(per_query[label])[index] for name, label in names.items()}
    return values, {"build_s": build_s, "evaluate_s": evaluate_s}


def _max_difference(ours: dict[str, np.ndarray], theirs: dict[str, np.ndarray]) -> dict[str, float]:
    return {name: float(np.max(np.abs(ours[name] - theirs[name]))) for name in METRICS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--cut-references", action="store_true",
        help="give the references runs cut to k (ours always read only the first k)",
    )
    parser.add_argument("--json", action="store_true", help="also print all figures as one JSON line")
    args = parser.parse_args(argv)

    qids, qrels, runs = collection(args.queries, args.candidates, args.seed)
    reference_runs = {q: r[: args.k] for q, r in runs.items()} if args.cut_references else runs
    print(f"{args.queries:,} queries x {args.candidates} candidates, metrics at k={args.k}: {', '.join(METRICS)}")
    if args.cut_references:
        print(f"  (the references get the runs cut to their first {args.k} documents)")
    figures: dict[str, Any] = {"queries": args.queries, "candidates": args.candidates, "k": args.k,
                               "cut_references": args.cut_references}  # fmt: skip
    ok = True

    loop, loop_s = _timed(lambda: ours_loop(qids, qrels, runs, args.k))
    figures["loop_s"] = loop_s
    batch, build_s, kernels_s = ours_batch(qids, qrels, runs, args.k)
    figures.update(batch_s=build_s + kernels_s, batch_build_s=build_s, batch_kernels_s=kernels_s)
    identical = all(np.array_equal(loop[name], batch[name]) for name in METRICS)
    figures["batch_identical"] = identical
    ok &= identical
    print(f"  loop          {loop_s:8.2f} s")
    print(f"  batch         {build_s + kernels_s:8.2f} s  (gains {build_s:.2f} s + kernels {kernels_s:.3f} s)"
          f"  identical to the loop: {identical}")  # fmt: skip

    for label, reference in (("pytrec_eval", reference_pytrec_eval), ("ranx", reference_ranx)):
        result = reference(qids, qrels, reference_runs, args.k)
        if result is None:
            print(f"  {label:<13} not installed, skipped")
            continue
        values, timing = result
        seconds = timing["evaluate_s"]
        differences = _max_difference(loop, values)
        agree = all(d <= TOLERANCE for d in differences.values())
        ok &= agree
        figures[label] = {**timing, "max_abs_difference": differences, "agree": agree,
                          "batch_ratio": (build_s + kernels_s) / seconds, "loop_ratio": loop_s / seconds}  # fmt: skip
        extra = f", building Qrels/Run {timing['build_s']:.2f} s more" if "build_s" in timing else ""
        print(f"  {label:<13} {seconds:8.2f} s{extra}  agree to {TOLERANCE:g}: {agree}"
              f"  (largest difference {max(differences.values()):.1e})")  # fmt: skip
        print(f"      batch / {label} = {(build_s + kernels_s) / seconds:.2f}, loop / {label} = {loop_s / seconds:.2f}")
    if args.json:
        print(json.dumps(figures, sort_keys=True))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
