"""grade-all's gradebook refresh reuses the rows it read while their files are unchanged."""

from __future__ import annotations

import json

from seqlab.gradebook import STATUS_FILE, collect, write_text_atomic


def _status(folder, **status):
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / STATUS_FILE, json.dumps(status))


def test_cached_rows_follow_rewritten_files(tmp_path):
    _status(tmp_path / "a", status="error", reason="first", max_score=10)
    cache: dict = {}
    names = ["a", "b"]
    first = collect(tmp_path, names, {"b": "no such hand-in"}, cache)
    assert first == collect(tmp_path, names, {"b": "no such hand-in"})
    first[0]["report"] = "a/report.html"  # a caller's addition is not kept for the next call
    assert "report" not in collect(tmp_path, names, {"b": "no such hand-in"}, cache)[0]
    _status(tmp_path / "a", status="error", reason="second", max_score=10)
    _status(tmp_path / "b", status="error", reason="graded later", max_score=10)
    again = collect(tmp_path, names, {"b": "no such hand-in"}, cache)
    assert [r["reason"] for r in again] == ["second", "graded later"]
    assert again == collect(tmp_path, names, {"b": "no such hand-in"})
