"""Batch results Prefect persisted before the records were typed read back as typed outcomes.

The files under ``stored/`` are batch results a run of ``examples/support_rag``
left in its store's ``prefect`` folder (Prefect's cache of the stage tasks).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefect.serializers import JSONSerializer

from oloproof.records import AssemblyRecord, GenerationRecord, RetrievalRecord
from oloproof.tasks import Outcome

STORED = Path(__file__).parent / "stored"


@pytest.mark.parametrize(("stage", "model"), [
    ("retrieve", RetrievalRecord), ("assemble", AssemblyRecord), ("generate", GenerationRecord),
])  # fmt: skip
def test_a_persisted_batch_reads_back_typed_and_writes_the_same_json(stage, model):
    persisted = json.loads((STORED / f"prefect-{stage}.json").read_bytes())
    serializer = JSONSerializer()
    batch = serializer.loads(persisted["result"].encode())
    assert batch and all(isinstance(o, Outcome) and o.ok and type(o.record) is model for o in batch.values())
    # Written again, the batch is the JSON Prefect holds: a replay from its cache is unchanged.
    assert json.loads(serializer.dumps(batch)) == json.loads(persisted["result"])
