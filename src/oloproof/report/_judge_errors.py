"""What went wrong with each judge provider that failed some judgments.

A provider that failed (its server gone, a quota spent) leaves cases missing;
the ``Judges:`` line counts the errors, and one line per such provider says
which provider, how many judgments and why, from what the run's manifest keeps
in its judge usage (``error_kinds`` and ``error_samples``), so that a report
shown later says the same as the run did.
"""

from __future__ import annotations

from typing import Any

__all__ = ["judge_error_lines", "provider_errors"]


def provider_errors(judges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per provider with errors, by name, over all its models.

    Args:
        judges: The manifest's ``judges`` (per provider and model).

    Returns:
        Per provider: ``provider``, ``missing`` (judgments that ended in an error),
        ``kinds`` (how many kinds of error), ``kind`` (the most frequent), ``count``
        (its errors) and ``message`` (one of its messages); ``kind`` and ``message``
        are ``None`` for a manifest that kept no kinds.
    """
    merged: dict[str, dict[str, Any]] = {}
    for entry in judges:
        if not entry.get("errors"):
            continue
        provider = merged.setdefault(entry["provider"], {"missing": 0, "kinds": {}, "samples": {}})
        provider["missing"] += int(entry["errors"])
        for kind, count in (entry.get("error_kinds") or {}).items():
            provider["kinds"][kind] = provider["kinds"].get(kind, 0) + int(count)
        for kind, message in (entry.get("error_samples") or {}).items():
            provider["samples"].setdefault(kind, message)
    rows = []
    for name in sorted(merged):
        kinds: dict[str, int] = merged[name]["kinds"]
        # The most frequent kind; ties go to the first by name, so reports do not flicker.
        top = min(kinds, key=lambda kind: (-kinds[kind], kind)) if kinds else None
        rows.append({
            "provider": name,
            "missing": merged[name]["missing"],
            "kinds": len(kinds),
            "kind": top,
            "count": kinds[top] if top is not None else None,
            "message": merged[name]["samples"].get(top, top) if top is not None else None,
        })  # fmt: skip
    return rows


def judge_error_lines(judges: list[dict[str, Any]]) -> list[str]:
    """``judge provider 'local': 371 judgments missing, connection refused at http://…``,
    one line per provider with errors; nothing when no judgment failed.

    With several kinds of error, the line names the most frequent and says how many
    kinds there were.
    """
    lines = []
    for row in provider_errors(judges):
        missing = f"{row['missing']:,} judgment{'s' if row['missing'] != 1 else ''} missing"
        head = f"judge provider {row['provider']!r}: {missing}"
        if row["kind"] is None:
            lines.append(f"{head} (judge errors)")
        elif row["kinds"] == 1:
            lines.append(f"{head}, {row['message']}")
        else:
            lines.append(f"{head}, {row['kinds']} kinds of error; most often ({row['count']:,}): {row['message']}")
    return lines
