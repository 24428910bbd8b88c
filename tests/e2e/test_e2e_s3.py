"""End to end on a real S3 server (moto) and a real Prefect server: two machines, one bucket.

Machine 1 names the endpoint in the environment (``AWS_ENDPOINT_URL``, honoured by
botocore); machine 2 names it in its ``oloproof.yaml`` (``storage_options``) and has
no endpoint in its environment. Both keep their credentials in the environment only.
"""

from __future__ import annotations

import json

import pytest
from projects import copy_project

pytestmark = [pytest.mark.services, pytest.mark.slow]

METRICS_SQL = "SELECT criterion, successes, observed FROM metrics WHERE slice IS NULL"


def _metrics(rows: list[dict]) -> dict[str, tuple]:
    return {row["criterion"]: (row["successes"], row["observed"]) for row in rows}


def test_two_machines_share_one_s3_store(
    project_copy, new_bucket, machine, olo, s3_fs, moto_server, aws_test_credentials, prefect_server_info
):
    bucket = new_bucket()
    url = f"s3://{bucket}/oloproof"

    # Machine 1: results in oloproof.yaml, endpoint from the environment.
    first = project_copy("machine1", results=url)
    env1 = machine()
    ran = olo("run", first, env=env1)
    assert ran.returncode == 0, ran.stderr
    run_id = ran.stdout.splitlines()[0].removeprefix("Run ").strip()
    assert run_id.startswith("run_"), ran.stdout[:300]
    assert "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss" in ran.stdout
    assert not (first / ".oloproof").exists(), "a run with an S3 store wrote into the project folder"

    queried = olo("query", METRICS_SQL, "--results", url, "--json", env=env1)
    assert queried.returncode == 0, queried.stderr
    metrics = _metrics(json.loads(queried.stdout))
    assert metrics["answer_correct"] == (9, 13)
    assert metrics["citations_valid"] == (13, 13)
    assert metrics["hit_rate_at_2"] == (12, 13)

    # What landed in the bucket: the run, the per-case stage records, Prefect's records.
    prefix = f"{bucket}/oloproof/"
    objects = s3_fs.find(f"{bucket}/oloproof")
    relative = [path.removeprefix(prefix) for path in objects]
    for name in ("run.json", "cases.parquet", "retrievals.parquet", "judgments.parquet", "metrics.parquet"):
        assert f"runs/{run_id}/{name}" in relative, name
    for stage in ("retrieve", "generate"):
        assert any(p.startswith(f"cache/{stage}/") for p in relative), f"no cache/{stage}/ records"
    assert any(p.startswith("prefect/") for p in relative), "Prefect's result records are not in the store"
    assert {p.split("/", 1)[0] for p in relative} <= {"runs", "cache", "prefect"}, sorted(relative)[:20]

    manifest = json.loads(s3_fs.cat(f"{prefix}runs/{run_id}/run.json"))
    assert manifest["status"] == "complete" and manifest["case_count"] == 13

    # No credential reaches the bucket, nor the Prefect server's database.
    secrets = [aws_test_credentials["secret"].encode(), aws_test_credentials["key"].encode()]
    for path, data in s3_fs.cat(objects).items():
        for secret in secrets:
            assert secret not in data, f"{secret!r} is stored in s3://{path}"

    # Machine 2: a fresh process and PREFECT_HOME, its own checkout, the endpoint in oloproof.yaml.
    second = project_copy("machine2", results=url, storage_options={"endpoint_url": moto_server})
    env2 = machine(endpoint_env=False)
    assert "AWS_ENDPOINT_URL" not in env2 and env2["PREFECT_HOME"] != env1["PREFECT_HOME"]
    again = olo("run", second, env=env2)
    assert again.returncode == 0, again.stderr
    assert "Cache: execution 13 hit/0 miss; judgment 65 hit/0 miss" in again.stdout, again.stdout[-600:]

    both = olo("query", "SELECT run_id, status, index_version FROM runs ORDER BY run_id",
               "--project", second, "--json", env=env2)  # fmt: skip
    assert both.returncode == 0, both.stderr
    rows = json.loads(both.stdout)
    assert len(rows) == 2 and run_id in {r["run_id"] for r in rows}
    assert {(r["status"], r["index_version"]) for r in rows} == {("complete", "kb-2026-09-16")}

    for db in sorted(prefect_server_info.home.glob("prefect.db*")):
        content = db.read_bytes()
        for secret in secrets:
            assert secret not in content, f"{secret!r} is stored in the Prefect server's {db.name}"

    # From Python, with the endpoint and credentials as storage options only.
    import oloproof.store

    con = oloproof.store.connect(url, storage_options={
        "endpoint_url": moto_server, "key": aws_test_credentials["key"], "secret": aws_test_credentials["secret"],
        "client_kwargs": {"region_name": "us-east-1"},
    })  # fmt: skip
    try:
        views = {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        assert {"runs", "cases", "retrievals", "generations", "judgments", "metrics"} <= views
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (2,)
        assert con.execute("SELECT count(*) FROM cases").fetchone() == (26,)
        rows = con.execute(
            "SELECT run_id, successes, observed FROM metrics "
            "WHERE slice IS NULL AND criterion = 'answer_correct' ORDER BY run_id"
        ).fetchall()
        assert [(s, o) for _, s, o in rows] == [(9, 13), (9, 13)]
    finally:
        con.close()


# -- credentials given as storage options (--set), not in the environment --------------


@pytest.fixture(scope="module")
def run_with_set_credentials(tmp_path_factory, prefect_server, moto_server):
    """One S3 run whose credentials come only from ``--set storage_options.key/secret``."""
    import os
    import subprocess
    import sys
    import uuid
    from pathlib import Path

    import s3fs

    example = Path(__file__).resolve().parents[2] / "examples" / "support_rag"
    project = tmp_path_factory.mktemp("set-credentials") / "support_rag"
    copy_project(example, project)
    key, secret = "SETCREDSKEYID0000001", f"set-secret-{uuid.uuid4().hex}"
    fs = s3fs.S3FileSystem(endpoint_url=moto_server, key=key, secret=secret,
                           skip_instance_cache=True, use_listings_cache=False)  # fmt: skip
    bucket = f"oloproof-setcreds-{uuid.uuid4().hex[:10]}"
    fs.mkdir(bucket)
    version = f"setcreds-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "AWS_", "OLOPROOF_"))}
    env.update(PREFECT_HOME=str(tmp_path_factory.mktemp("set-credentials-home")), PREFECT_API_URL=prefect_server,
               PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1", AWS_DEFAULT_REGION="us-east-1",
               AWS_ENDPOINT_URL=moto_server)  # fmt: skip
    ran = subprocess.run(
        [sys.executable, "-m", "oloproof._cli.main", "run", str(project), "--results", f"s3://{bucket}/oloproof",
         "--set", f"storage_options.key={key}", "--set", f"storage_options.secret={secret}",
         "--set", f"system.version={version}"],
        env=env, check=False, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    return {"fs": fs, "bucket": bucket, "secret": secret, "key": key, "version": version, "stdout": ran.stdout}


def test_set_credentials_run_and_stay_out_of_the_bucket(run_with_set_credentials):
    fs, bucket, secret = (run_with_set_credentials[k] for k in ("fs", "bucket", "secret"))
    assert "Cache: execution 0 hit/13 miss" in run_with_set_credentials["stdout"]
    objects = fs.find(bucket)
    assert any(path.endswith("/run.json") for path in objects)
    for path, data in fs.cat(objects).items():
        assert secret.encode() not in data, f"the secret is stored in s3://{path}"


def test_set_credentials_keep_prefects_batch_results_local(run_with_set_credentials):
    """Credentials given as storage options are never saved into a Prefect block, so
    Prefect's batch results stay in its local storage; Oloproof's per-case caches and
    the run records still land in the bucket."""
    fs, bucket = run_with_set_credentials["fs"], run_with_set_credentials["bucket"]
    relative = [p.removeprefix(f"{bucket}/oloproof/") for p in fs.find(bucket)]
    assert any(p.startswith("cache/") for p in relative)
    assert any(p.startswith("runs/") for p in relative)
    assert not any(p.startswith("prefect/") for p in relative)


def test_set_credentials_never_reach_the_prefect_server(run_with_set_credentials, runs_tagged, prefect_server_info):
    secret = run_with_set_credentials["secret"]
    runs = runs_tagged(f"version:{run_with_set_credentials['version']}", flow="oloproof-run")
    assert len(runs) == 1
    assert secret not in json.dumps(runs[0]), "the secret is in the flow run's parameters"
    for db in sorted(prefect_server_info.home.glob("prefect.db*")):
        assert secret.encode() not in db.read_bytes(), f"the secret is in the Prefect server's {db.name}"
