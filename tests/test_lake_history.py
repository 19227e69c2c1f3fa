"""A lake's snapshots as the Run page offers them (dashboard.analysis.history): which are readable, how each is named,
which one recorded a decision."""
from __future__ import annotations

import pandas as pd

from dashboard.analysis import history

SNAPSHOTS = pd.DataFrame({  # data.lake_history's frame: newest first
    "snapshot_id": [5, 4, 3, 2, 1],
    "snapshot_time": pd.to_datetime(["2026-12-07 10:05:00", "2026-12-07 10:04:00", "2026-12-07 10:03:00",
                                     "2026-12-07 10:02:00", "2026-12-07 10:01:00"]),
    "author": ["bo@gpu2", "al@gpu1", "al@gpu1", None, None],
    "commit_message": ["decision 7c95d83b2ff0: ft: adopt it", "ingest /runs/phase-2/k2-drafter/server.log (sglang_log)",
                       "migrate: 021_training_steps", "migrate: 001_initial", None],
    "same_schema": [True, True, True, False, False],
})


def test_only_snapshots_since_the_last_schema_change_are_offered_besides_now() -> None:
    assert history.past_snapshots(SNAPSHOTS)["snapshot_id"].tolist() == [4, 3]
    assert history.unreadable_count(SNAPSHOTS) == 2


def test_a_snapshot_is_named_by_its_time_author_and_what_it_changed() -> None:
    labels = [history.snapshot_label(row) for _, row in SNAPSHOTS.iterrows()]
    assert labels[1] == "#4 · 2026-12-07 10:04:00 UTC · al@gpu1 · ingest …/k2-drafter/server.log (sglang_log)"
    assert labels[4] == "#1 · 2026-12-07 10:01:00 UTC · (no message)"
    long = history.snapshot_label(pd.Series({**SNAPSHOTS.iloc[0].to_dict(), "commit_message": "relabel: " + "x" * 200}))
    assert len(long.split(" · ")[-1]) == history.MESSAGE_SHOWN and long.endswith("…")


def test_a_decision_is_found_by_the_snapshot_that_recorded_it() -> None:
    assert history.decision_snapshot(SNAPSHOTS, "7c95d83b2ff0") == 5
    assert history.decision_snapshot(SNAPSHOTS, "000000000000") is None
    assert history.decision_snapshot(SNAPSHOTS.iloc[0:0], "7c95d83b2ff0") is None
