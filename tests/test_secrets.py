"""Credentials in URLs never reach a record: presigned and SAS query strings, user info."""

from __future__ import annotations

import pytest

from oloproof._exceptions import DatasetError
from oloproof._secrets import public_settings, redact_url
from oloproof.dataset import load_cases

SIGNATURE = "5f2b0c9a1d7e4b3c8a6f0e9d2c1b4a7f"
PRESIGNED = (f"https://bucket.s3.amazonaws.com/cases.jsonl?X-Amz-Algorithm=AWS4-HMAC-SHA256"
             f"&X-Amz-Credential=AKIAPLANTED%2F20261201%2Fus-east-1&X-Amz-Signature={SIGNATURE}")


@pytest.mark.parametrize("url, expected", [
    (PRESIGNED, ("https://bucket.s3.amazonaws.com/cases.jsonl?X-Amz-Algorithm=REDACTED"
                 "&X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED")),
    ("https://acct.blob.core.windows.net/c/cases.jsonl?sv=2024&sig=abc%2Bdef",
     "https://acct.blob.core.windows.net/c/cases.jsonl?sv=REDACTED&sig=REDACTED"),
    ("s3://user:hunter2@bucket/prefix", "s3://user:REDACTED@bucket/prefix"),
    ("https://tok3n@example.com/cases.jsonl", "https://REDACTED@example.com/cases.jsonl"),
    ("s3://bucket/cases.jsonl", "s3://bucket/cases.jsonl"),
    ("/data/cases.jsonl", "/data/cases.jsonl"),
])
def test_redact_url(url, expected):
    assert redact_url(url) == expected


def test_settings_recorded_as_flow_parameters_are_redacted():
    public = public_settings({"dataset": PRESIGNED, "results": "s3://u:pw@b/p", "system.rag.top_k": 3})
    assert SIGNATURE not in str(public) and "pw" not in public["results"]
    assert public["system.rag.top_k"] == 3


def test_a_dataset_error_names_the_url_without_its_signature(tmp_path):
    url = f"file://{tmp_path}/missing.jsonl?X-Amz-Signature={SIGNATURE}"
    with pytest.raises(DatasetError) as raised:
        load_cases(url)
    assert SIGNATURE not in str(raised.value) and "X-Amz-Signature=REDACTED" in str(raised.value)
