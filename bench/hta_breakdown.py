"""Run inside bench/.venv-hta: Holistic Trace Analysis's temporal breakdown of every trace in a directory.

``python hta_breakdown.py TRACE_DIR`` prints, after HTA's own logging, one line
``HTA_RESULT {json}`` with the load and breakdown times and the breakdown rows.
"""
from __future__ import annotations

import json
import sys
import time

from hta.trace_analysis import TraceAnalysis


def main() -> None:
    started = time.perf_counter()
    analyzer = TraceAnalysis(trace_dir=sys.argv[1])
    loaded = time.perf_counter()
    breakdown = analyzer.get_temporal_breakdown(visualize=False)
    done = time.perf_counter()
    result = {"load_s": loaded - started, "breakdown_s": done - loaded, "rows": breakdown.to_dict(orient="records")}
    print("HTA_RESULT " + json.dumps(result, default=float), flush=True)


if __name__ == "__main__":
    main()
