"""End to end on a real S3 server (moto) and a real Prefect server: two machines, one bucket.

Machine 1 names the endpoint in the environment (``AWS_ENDPOINT_URL``, honoured by
botocore); machine 2 names it in its ``oloproof.yaml`` (``storage_options``) and has
no endpoint in its environment. Both keep their credentials in the environment only.
"""

from __future__ import annotations

import json

import pytest

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
    assert set(p.split("/", 1)[0] for p in relative) <= {"runs", "cache", "prefect"}, sorted(relative)[:20]

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
