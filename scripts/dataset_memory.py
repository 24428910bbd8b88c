"""Peak memory of reading a large cases file, valid or with a bad last line.

Writes a seeded JSONL file of about ``--mb`` megabytes (cases with a query, an answer,
relevance labels and a gold passage), then loads it in a fresh process, once as it is
and once with its last line broken, printing each process's peak RSS next to that of a
process that only imports the loader:

    python scripts/dataset_memory.py            # 50 MB
    python scripts/dataset_memory.py --mb 200
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import resource, sys
from oloproof._exceptions import OloproofError
from oloproof.dataset import load_cases
if sys.argv[1] != "-":
    try:
        dataset = load_cases(sys.argv[1])
        outcome = f"{len(dataset):,} cases"
    except OloproofError as error:
        outcome = f"refused: {str(error)[:90]}"
else:
    outcome = "imports only"
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, outcome)
"""


def write_cases(path: Path, megabytes: float, seed: int) -> int:
    rng = random.Random(seed)
    words = [f"w{n}" for n in range(5000)]
    written = count = 0
    with path.open("w", encoding="utf-8") as out:
        while written < megabytes * 1e6:
            text = " ".join(rng.choices(words, k=60))
            case = {"id": f"case-{count}", "input": {"query": text[:120]},
                    "expected": {"answer": text[:40], "relevant": [{"doc_id": f"d{rng.randrange(10**6)}"}],
                                 "gold_context": [{"doc_id": "d1", "text": text}]},
                    "metadata": {"topic": rng.choice(["billing", "login", "api"])}}
            line = json.dumps(case) + "\n"
            out.write(line)
            written += len(line)
            count += 1
    return count


def peak(argument: str) -> tuple[float, str]:
    done = subprocess.run([sys.executable, "-c", CHILD, argument], capture_output=True, text=True, check=True)
    kib, outcome = done.stdout.split(" ", 1)
    return int(kib) / 1024, outcome.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="size of the file (default 50)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        good = Path(folder) / "cases.jsonl"
        count = write_cases(good, args.mb, args.seed)
        bad = Path(folder) / "bad.jsonl"
        bad.write_bytes(good.read_bytes() + b'{"id": "last", "input": \n')
        size = good.stat().st_size / 1e6
        base, _ = peak("-")
        print(f"file: {size:.1f} MB, {count:,} cases; peak RSS of a process that only imports: {base:.0f} MB")
        for name, path in (("valid file", good), ("bad last line", bad)):
            mb, outcome = peak(str(path))
            print(f"{name}: peak RSS {mb:.0f} MB ({mb - base:+.0f} MB over imports): {outcome}")


if __name__ == "__main__":
    main()
