"""An S3 results store against the local-folder one: wall time and requests per case.

For each case count of ``--cases`` (default ``250,1000``) the synthetic project
of ``benchmarks/bench_engine.py`` (its ``_project`` writer and its child runner:
the real ``oloproof run`` with timers attached) runs at 0 ms latency four times:

* local-folder store: a cold run, then the same project again (cached re-run);
* S3 store on moto's standalone server (``python -m moto.server``, started and
  stopped here), one bucket per project: a cold run, then the cached re-run.
  The project is pointed at it with ``--set results=s3://oloproof-<project>/oloproof``
  and ``--set storage_options.endpoint_url=<moto>``; the credentials are test
  ones in the environment (``AWS_ACCESS_KEY_ID=testing``), as users keep them.

Every command talks to one ``prefect server start --no-services`` started before
the first run (not timed) with one fixed ``PREFECT_HOME``, so no server start is
in any figure. Requests are counted at the S3 server, from the access log lines
moto's werkzeug server writes to its stderr (``"PUT /bucket/key HTTP/1.1" 200``),
by HTTP method and by the store area they touch (``cache/<stage>``, ``prefect``,
``runs/<file>``, listings).

Targets (reported, never asserted):

* requests per case are a constant: per-case requests at the largest size at
  most 1.1x those at the smallest (cold and cached);
* S3 wall time (whole command) at most 2x the local-folder store's (cold and
  cached, largest size).

Each target's ``measured`` is the absolute figure (S3 requests per case at the
largest size; S3 seconds) and its ``ratio`` the quotient the target bounds
(largest/smallest size; S3/local), ``null`` with a single size.

    python benchmarks/bench_s3.py [--cases 250,1000] [--concurrency 32]
        [--storage-option KEY=VALUE ...] [--workdir DIR] [--keep] [--json]

About 4 minutes on 2 cores at the defaults. A cold S3 run costs about 21 requests
per case and moto, sharing 2 cores with the run, answers some 150-300 a second, so
the issue's sizes (``--cases 2000,10000``) take well over half an hour; the
defaults are sized to stay under 10 minutes. ``--storage-option max_concurrency=1``
(passed on as ``--set storage_options.max_concurrency=1``) shows what s3fs's size
probe before every read costs. ``--json`` prints one JSON object on the last line
of stdout: ``{"scenario": "s3", "figures": ..., "targets": [...], "notes": [...]}``.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

# This folder is on sys.path: the scripts run as files.
from _report import print_closing, target

SCENARIO = "s3"
REQUESTS_TARGET = 1.1  # per-case requests, largest size / smallest size
WALL_TARGET = {"cold": 3.0, "cached": 1.5}  # S3 command time / local-folder command time
PER_CASE_TARGET = {"cold": 4.0, "cached": 1.1}  # S3 requests per case at the largest size
KEPT = ("command_s", "flow_s", "flow_body_s", "pre_flow_s", "report_s", "cpu_oloproof_s", "peak_rss_mb",
        "execution_hits", "execution_misses", "judgment_hits", "judgment_misses", "run_id")  # fmt: skip
_ACCESS = re.compile(r'"(?P<method>[A-Z]+) (?P<target>\S+) HTTP/[\d.]+" (?P<status>\d{3})')


def load_engine() -> Any:
    """``benchmarks/bench_engine.py`` as a module (its project writer and child runner)."""
    path = Path(__file__).resolve().with_name("bench_engine.py")
    spec = importlib.util.spec_from_file_location("bench_engine", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_engine"] = module
    spec.loader.exec_module(module)
    return module


# -- the S3 server ---------------------------------------------------------------


class MotoServer:
    """``python -m moto.server`` on a free port; its stderr (the access log) goes to a file."""

    def __init__(self, workdir: Path, port: int) -> None:
        self.log = workdir / "moto-server.log"
        self.endpoint = f"http://127.0.0.1:{port}"
        env = {k: v for k, v in os.environ.items() if k != "INITIAL_NO_AUTH_ACTION_COUNT"}
        with self.log.open("wb") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                stdout=subprocess.DEVNULL, stderr=stderr, env=env, start_new_session=True,
            )  # fmt: skip
        self._wait_up()

    def _wait_up(self) -> None:
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                raise SystemExit(f"the moto server exited with {self.process.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1):
                    return
            except urllib.error.HTTPError:  # any HTTP answer means it is up
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                if time.monotonic() > deadline:
                    raise SystemExit("the moto server did not answer within 60 s") from None
                time.sleep(0.1)

    def offset(self) -> int:
        """Where the access log ends now, once it stopped growing (requests still being logged)."""
        size, deadline = -1, time.monotonic() + 10
        while time.monotonic() < deadline:
            now = self.log.stat().st_size
            if now == size:
                return now
            size = now
            time.sleep(0.3)
        return size

    def requests(self, begin: int, end: int) -> list[tuple[str, str, int]]:
        """``(method, target, status)`` of every request logged between two offsets."""
        with self.log.open("rb") as handle:
            handle.seek(begin)
            text = handle.read(end - begin).decode("utf-8", "replace")
        return [(m["method"], m["target"], int(m["status"])) for m in _ACCESS.finditer(text)]

    def cpu_s(self) -> float | None:
        try:
            import psutil
        except ImportError:
            return None
        try:
            times = psutil.Process(self.process.pid).cpu_times()
        except psutil.Error:
            return None
        return times.user + times.system

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def make_bucket(endpoint: str, name: str) -> None:
    import s3fs

    s3fs.S3FileSystem(endpoint_url=endpoint, skip_instance_cache=True).mkdir(name)


def aws_test_environment() -> None:
    """Test credentials in this process's environment (the child commands inherit it); no endpoint."""
    os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                      AWS_DEFAULT_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true")  # fmt: skip
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        os.environ.pop(name, None)


# -- counting requests -------------------------------------------------------------


def area(target: str) -> str:
    """The part of the store a request touches: ``cache/<stage>``, ``prefect``, ``runs/<file>``, ..."""
    split = urllib.parse.urlsplit(target)
    query = urllib.parse.parse_qs(split.query, keep_blank_values=True)
    parts = split.path.lstrip("/").split("/", 1)
    if "list-type" in query or "prefix" in query:
        key, kind = query.get("prefix", [""])[0], "list "
    elif len(parts) < 2 or not parts[1]:
        return "(bucket)"
    else:
        key, kind = urllib.parse.unquote(parts[1]), ""
    rest = key.split("/", 1)[1] if "/" in key else ""  # after the project's prefix
    pieces = [p for p in rest.split("/") if p]
    if not pieces:
        return f"{kind}(store root)"
    if pieces[0] == "cache":
        return kind + "/".join(pieces[:2])
    if pieces[0] == "runs":
        return kind + ("runs/" + pieces[2] if len(pieces) > 2 else "runs")
    return kind + pieces[0]


def request_figures(requests: list[tuple[str, str, int]], cases: int) -> dict[str, Any]:
    methods = collections.Counter(method for method, _, _ in requests)
    areas = collections.Counter(f"{method} {area(target)}" for method, target, _ in requests)
    statuses = collections.Counter(str(status) for _, _, status in requests)
    return {
        "requests": len(requests),
        "requests_per_case": len(requests) / cases,
        "requests_by_method": dict(sorted(methods.items())),
        "requests_per_case_by_method": {k: v / cases for k, v in sorted(methods.items())},
        "requests_by_area": dict(areas.most_common()),
        "requests_by_status": dict(sorted(statuses.items())),
    }


# -- the runs ------------------------------------------------------------------------


def run_once(bench: Any, project: Path, label: str, overrides: list[str]) -> dict[str, Any]:
    bench.args.overrides = overrides
    try:
        figures = bench.run_cli(project, label)
    finally:
        bench.args.overrides = []
    return {k: figures[k] for k in KEPT if k in figures}


def local_pair(engine: Any, bench: Any, cases: int) -> dict[str, Any]:
    project = engine._project(bench, f"local-{cases}", cases, 0.0, 0.0)
    return {phase: run_once(bench, project, f"local-{cases}-{phase}", []) for phase in ("cold", "cached")}


def s3_pair(engine: Any, bench: Any, moto: MotoServer, cases: int, options: list[str]) -> dict[str, Any]:
    project = engine._project(bench, f"s3-{cases}", cases, 0.0, 0.0)
    bucket = f"oloproof-{project.name}"  # a bucket per project: moto lists by scanning the bucket's keys
    make_bucket(moto.endpoint, bucket)
    overrides = [f"results=s3://{bucket}/oloproof", f"storage_options.endpoint_url={moto.endpoint}",
                 *(f"storage_options.{option}" for option in options)]
    out = {}
    for phase in ("cold", "cached"):
        begin, cpu = moto.offset(), moto.cpu_s()
        figures = run_once(bench, project, f"s3-{cases}-{phase}", overrides)
        end, cpu_end = moto.offset(), moto.cpu_s()
        figures.update(request_figures(moto.requests(begin, end), cases))
        if cpu is not None and cpu_end is not None:
            figures["cpu_s3_server_s"] = cpu_end - cpu
        out[phase] = figures
    return out


def one_size(engine: Any, bench: Any, moto: MotoServer, cases: int, options: list[str]) -> dict[str, Any]:
    result = {"local": local_pair(engine, bench, cases), "s3": s3_pair(engine, bench, moto, cases, options)}
    for phase in ("cold", "cached"):
        local, s3 = result["local"][phase], result["s3"][phase]
        result[f"s3_local_command_ratio_{phase}"] = s3["command_s"] / local["command_s"]
        result[f"s3_local_flow_ratio_{phase}"] = s3["flow_s"] / local["flow_s"]
    result["all_execution_hits_cached"] = all(
        r["cached"].get("execution_hits") == cases and r["cached"].get("execution_misses") == 0
        for r in (result["local"], result["s3"])
    )
    return result


# -- targets and output ----------------------------------------------------------------


def targets(by_size: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    small, large = min(by_size), max(by_size)
    out = []
    for phase in ("cold", "cached"):
        big = by_size[large]["s3"][phase]["requests_per_case"]
        ratio = big / by_size[small]["s3"][phase]["requests_per_case"] if small != large else None
        out.append(target(
            f"requests_per_case_constant_{phase}",
            f"S3 requests per case at {large} cases <= {REQUESTS_TARGET}x those at {small} cases ({phase})"
            + ("" if small != large else "; needs two sizes in --cases"),
            big, ratio, ratio is not None and ratio <= REQUESTS_TARGET,
        ))  # fmt: skip
    for phase in ("cold", "cached"):
        per_case = by_size[large]["s3"][phase]["requests_per_case"]
        out.append(target(
            f"requests_per_case_{phase}", f"S3 requests per case at {large} cases <= {PER_CASE_TARGET[phase]} ({phase})",
            per_case, None, per_case <= PER_CASE_TARGET[phase],
        ))  # fmt: skip
    for phase in ("cold", "cached"):
        entry = by_size[large]
        ratio = entry[f"s3_local_command_ratio_{phase}"]
        out.append(target(
            f"s3_wall_vs_local_{phase}",
            f"S3 `oloproof run` wall time <= {WALL_TARGET[phase]}x the local-folder store's at {large} cases ({phase}; "
            f"local {entry['local'][phase]['command_s']:.1f} s)",
            entry["s3"][phase]["command_s"], ratio, ratio <= WALL_TARGET[phase],
        ))  # fmt: skip
    return out


def _print_tree(prefix: str, value: Any) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _print_tree(f"{prefix}.{key}" if prefix else str(key), inner)
    else:
        text = f"{value:.4f}" if isinstance(value, float) else str(value)
        print(f"{prefix} {text}")


def summary(by_size: dict[int, dict[str, Any]]) -> None:
    """One line per size and phase: both wall times, their ratio, S3 requests per case."""
    for cases, entry in by_size.items():
        for phase in ("cold", "cached"):
            local, s3 = entry["local"][phase], entry["s3"][phase]
            methods = ", ".join(f"{k} {v:.2f}" for k, v in s3["requests_per_case_by_method"].items())
            print(f"{cases:>7} cases {phase:>6}: local {local['command_s']:7.1f} s, S3 {s3['command_s']:7.1f} s "
                  f"({s3['command_s'] / local['command_s']:.2f}x); S3 requests/case {s3['requests_per_case']:.2f} "
                  f"({methods})")


def report(figures: dict[str, Any], found: list[dict[str, Any]], notes: list[str], as_json: bool) -> None:
    _print_tree(SCENARIO, figures)
    summary({int(n): v for n, v in figures["by_size"].items()})
    print_closing(SCENARIO, figures, found, notes, as_json)


def notes_for(args: argparse.Namespace, endpoint: str) -> list[str]:
    extra = " ".join(f"--set storage_options.{option}" for option in args.storage_options)
    return [
        ("each command is bench_engine.py's child (the oloproof CLI entry point with timers), "
         "`oloproof run PROJECT` in a subprocess; command_s is the whole command, process start to exit"),
        ("one `prefect server start --no-services` (started before the runs, not timed) and one fixed "
         "PREFECT_HOME for every command"),
        (f"S3: moto standalone server at {endpoint} on this machine (it shares the CPUs with the run); each "
         "S3 project has its own bucket and gets `--set results=s3://oloproof-<project>/oloproof --set "
         f"storage_options.endpoint_url=<moto>{(' ' + extra) if extra else ''}`, credentials "
         "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY=testing in the environment"),
        ("requests are counted from moto's werkzeug access log (moto-api has no request counts); "
         "'list <area>' is a ListObjectsV2 under that area"),
        ("moto answers a ListObjectsV2 by scanning every key of the bucket, so its cost grows with the "
         "objects already written: S3 wall times here overstate a real S3's for large cold runs"),
        "cached = the same project run again: every case an execution-cache hit (all_execution_hits_cached)",
        (f"synthetic project: retrieve and generate at 0 ms, max_concurrency {args.concurrency}, "
         f"{os.cpu_count()} CPUs"),
    ]


def bench_for(engine: Any, args: argparse.Namespace, workdir: Path) -> Any:
    home = workdir / "prefect-home"
    engine_args = engine.build_parser().parse_args([
        "--concurrency", str(args.concurrency), "--prefect-home", str(home), "--rss-interval", "0",
        "--timeout", str(args.timeout), "--workdir", str(workdir),
    ])  # fmt: skip
    return engine.Bench(engine_args, workdir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="250,1000", metavar="N[,N...]",
                        help="case counts, one run pair per store each (default 250,1000)")
    parser.add_argument("--concurrency", type=int, default=32, help="max_concurrency of the project (default 32)")
    parser.add_argument("--storage-option", dest="storage_options", action="append", default=[],
                        metavar="KEY=VALUE", help="also pass --set storage_options.KEY=VALUE to the S3 runs, "
                        "e.g. max_concurrency=1 (repeatable)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="kill a command after this many s")
    parser.add_argument("--workdir", default=None, metavar="DIR", help="projects, logs and stores go here (kept)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary work folder")
    parser.add_argument("--json", action="store_true", help="one JSON object on the last line of stdout")
    args = parser.parse_args(argv)
    sizes = sorted({int(c) for c in args.cases.split(",") if c.strip()})
    workdir = Path(args.workdir).resolve() if args.workdir else Path(tempfile.mkdtemp(prefix="oloproof-s3-"))
    workdir.mkdir(parents=True, exist_ok=True)
    engine = load_engine()
    aws_test_environment()
    bench = bench_for(engine, args, workdir)
    moto = None
    try:
        moto = MotoServer(workdir, engine._free_port())
        bench.start_server()
        by_size = {n: one_size(engine, bench, moto, n, args.storage_options) for n in sizes}
    finally:
        bench.stop_server()
        if moto is not None:
            moto.stop()
        if args.keep or args.workdir:
            print(f"# kept {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    figures = {"cases": sizes, "engine_revision": engine._engine_revision(), "s3_storage_options": args.storage_options,
               "by_size": {str(n): v for n, v in by_size.items()}}  # fmt: skip
    report(figures, targets(by_size), notes_for(args, moto.endpoint), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
