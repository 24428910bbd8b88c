"""Cases: the JSONL dataset a run evaluates."""

from oloproof.dataset._case import Case, Expected, GoldPassage, RelevantUnit
from oloproof.dataset._load import LINE_ID_PREFIX, Dataset, load_cases

__all__ = ["LINE_ID_PREFIX", "Case", "Dataset", "Expected", "GoldPassage", "RelevantUnit", "load_cases"]
