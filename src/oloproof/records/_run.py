"""A complete run read back from the store: its manifest, cases and judgments."""

from __future__ import annotations

from typing import Annotated, cast

from pydantic import PrivateAttr, SkipValidation

from oloproof.records._base import Record
from oloproof.records._manifest import RunManifest
from oloproof.records._stored import StoredCase, StoredJudgment, StoredManifest, StoredRun

__all__ = ["RunRecords"]


class RunRecords(Record):
    """A complete run's manifest, ``cases`` rows and ``judgments`` rows.

    `as_json` gives the run as readers of the stored JSON read it.
    """

    manifest: RunManifest
    """The run's manifest, validated."""

    cases: Annotated[list[StoredCase], SkipValidation]
    """The ``cases`` table's rows (a large run's rows are not validated one by one)."""

    judgments: Annotated[list[StoredJudgment], SkipValidation]
    """The ``judgments`` table's rows."""

    _stored: StoredManifest | None = PrivateAttr(default=None)

    @classmethod
    def of(cls, stored: StoredManifest, cases: list[StoredCase], judgments: list[StoredJudgment]) -> RunRecords:
        """The records of a run from its stored manifest (``run.json``) and its rows.

        Raises:
            pydantic.ValidationError: The manifest is not a run manifest.
        """
        records = cls(manifest=RunManifest.model_validate(stored), cases=cases, judgments=judgments)
        records._stored = stored
        return records

    def as_json(self) -> StoredRun:
        """``{"manifest": ..., "cases": [...], "judgments": [...]}``: the manifest as it is
        stored (an older manifest without the fields added since), the rows as decoded.

        Readers of the stored JSON read this; values are not copied.
        """
        manifest = self._stored or cast("StoredManifest", self.manifest.model_dump(mode="json"))
        return {"manifest": manifest, "cases": self.cases, "judgments": self.judgments}
