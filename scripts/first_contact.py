"""The README's two commands as a newcomer meets them: fresh clones, fresh homes, busy CPUs.

Each try clones the repository's committed ``HEAD`` into a new folder and runs the
README's first command there (read from README.md, so it is exactly what the page
shows) with a new empty ``HOME`` (an empty pip cache, no Prefect database),
``PYTHONDONTWRITEBYTECODE=1`` and no Prefect, AWS or Oloproof variables, while ``--busy``
other processes keep the CPUs busy. With ``--tests`` it then runs the README's second
command (the test suite) on one more fresh clone, under the same load, and keeps its
output in ``oloproof-first-contact-tests.log`` in the temporary folder's parent.

    python scripts/first_contact.py                  # 3 tries of the first command, 2 busy processes
    python scripts/first_contact.py --tries 1 --busy 0 --tests
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_STRIPPED = ("PREFECT_", "AWS_", "OLOPROOF_", "VIRTUAL_ENV")


def readme_commands() -> list[str]:
    """The README's first two shell blocks: install and run the example; install and run the tests."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    return [block.strip() for block in blocks[:2]]


def fresh_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_STRIPPED)}
    env.update(HOME=str(home), PYTHONDONTWRITEBYTECODE="1", COLUMNS="200")
    env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def try_command(command: str, workdir: Path, label: str) -> tuple[float, int, str]:
    """Clone, run ``command`` in the clone with a new HOME; returns (seconds, exit code, its output)."""
    clone, home = workdir / f"clone-{label}", workdir / f"home-{label}"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    home.mkdir()
    started = time.monotonic()
    done = subprocess.run(["bash", "-c", command], cwd=clone, env=fresh_env(home),
                          check=False, capture_output=True, text=True)  # fmt: skip
    seconds = time.monotonic() - started
    return seconds, done.returncode, (done.stdout + done.stderr).strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=3, help="tries of the first command (default 3)")
    parser.add_argument("--busy", type=int, default=2, help="CPU-bound processes running meanwhile (default 2)")
    parser.add_argument("--tests", action="store_true", help="then run the README's test command too")
    args = parser.parse_args()
    first, tests = readme_commands()
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    failed = 0
    try:
        with tempfile.TemporaryDirectory(prefix="oloproof-first-contact-") as folder:
            workdir = Path(folder)
            head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                  check=False, capture_output=True, text=True).stdout.strip()  # fmt: skip
            print(f"HEAD {head} · {os.cpu_count()} CPUs · {args.busy} busy processes")
            print(f"$ {first}")
            for n in range(1, args.tries + 1):
                seconds, code, output = try_command(first, workdir, f"run{n}")
                ok = code == 0 and "\nRun run_" in f"\n{output}" and "Traceback" not in output
                failed += not ok
                print(f"try {n}: {seconds:7.1f} s · exit {code}" + ("" if ok else f"\n{output[-2000:]}"))
            if args.tests:
                print(f"$ {tests}")
                seconds, code, output = try_command(tests, workdir, "tests")
                failed += code != 0
                lines = output.splitlines()
                print(f"tests: {seconds:7.1f} s · exit {code} · {lines[-1] if lines else ''}")
                for line in lines:  # what failed, by name
                    if line.startswith(("FAILED ", "ERROR ")) or "left" in line and "process" in line:
                        print(f"  {line}")
                (workdir.parent / "oloproof-first-contact-tests.log").write_text(output, encoding="utf-8")
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
