"""Retry only what a retry can fix: I/O, never a wrong id or bad input."""

from __future__ import annotations

from typing import Any

from oloproof._exceptions import NotFoundError, OloproofError, StoreError

__all__ = ["retry_io_only"]


def retry_io_only(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect ``retry_condition_fn``: retry store I/O errors, not input errors."""
    try:
        state.result()
    except NotFoundError:
        return False
    except StoreError:
        return True
    except OloproofError:
        return False
    except Exception:  # noqa: BLE001 - transient I/O from fsspec/s3fs surfaces as plain OSErrors
        return True
    return False
