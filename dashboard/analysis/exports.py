"""Tables as downloadable files: CSV and Parquet. Pure: DataFrame in, bytes out."""
from __future__ import annotations

import io
import json
import re
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


def _cell(value: Any) -> Any:
    """List and dict cells as JSON text (CSV has no nesting); everything else as is."""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(list(value) if isinstance(value, tuple) else value, default=str)
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return json.dumps(value.tolist(), default=str)
    return value


def flat(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object:
            out[column] = out[column].map(_cell)
    return out


def to_csv(frame: pd.DataFrame) -> bytes:
    return flat(frame).to_csv(index=False).encode("utf-8")


def to_parquet(frame: pd.DataFrame) -> bytes:
    """Parquet keeps types (timestamps, booleans, numbers); nested or mixed cells become JSON text."""
    table = pa.Table.from_pandas(flat(frame), preserve_index=False)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def file_stem(name: str) -> str:
    """A safe file name stem from a label (user text): letters, digits, dot, dash, underscore."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    return stem[:80] or "specdash"
