"""``specdash export --parquet DIR``: every table of the store as a Parquet file, for Spark, Trino, pandas or Polars.

One file per base table (``DIR/<table>.parquet``), read from one read-only connection, so the files agree with each
other, and a ``manifest.json`` naming each file's rows and columns and the store's migrations. Views are not exported:
they are DuckDB SQL over these tables (``docs/current-schema.sql``). The files are written into a folder of their own
inside DIR and moved into place only once every table is written, so a failed export leaves DIR as it was.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from ingest.errors import NoStore, StoreError
from ingest.storage import store
from ingest.storage.location import StoreRef

MANIFEST = "manifest.json"
BATCH_ROWS = 100_000  # rows read and written at a time: a big store's decode lines stream through


def export_parquet(db_path: StoreRef, folder: Path) -> dict[str, Any]:
    """Write every base table of the store at ``db_path`` to ``folder``; returns the manifest written beside them."""
    if not db_path.exists():
        raise NoStore(db_path, "no store to export", hint="check --db / SPECDASH_DB, or run `specdash ingest FILES` first")
    if folder.exists() and not folder.is_dir():
        raise StoreError(folder, "is a file, not a folder", hint="give --parquet a folder (it is created if missing)")
    folder.mkdir(parents=True, exist_ok=True)
    with staging(folder) as staged, store.read_connection(db_path, store.LOCK_WAIT_S) as con:
        tables = {}
        for name in base_tables(con):
            reader = con.sql(f'SELECT * FROM "{name}"').to_arrow_reader(BATCH_ROWS)
            tables[name] = write_batches(reader, staged / f"{name}.parquet")
        manifest = {
            "store": str(db_path.resolve()),
            "migrations": [row[0] for row in con.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()],
            "tables": tables,
        }
        (staged / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def base_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The store's tables (not its views), by name."""
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' "
        "AND NOT internal AND NOT temporary ORDER BY table_name"
    ).fetchall()
    return [row[0] for row in rows]


def write_batches(reader: pa.RecordBatchReader, target: Path) -> dict[str, Any]:
    """A table's batches to one Parquet file; its row count and columns for the manifest."""
    rows = 0
    with pq.ParquetWriter(target, reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)
            rows += batch.num_rows
    return {"file": target.name, "rows": rows, "columns": reader.schema.names}


@contextmanager
def staging(folder: Path) -> Iterator[Path]:
    """A folder inside ``folder`` to write into; its files replace ``folder``'s on success, and it goes either way."""
    staged = Path(tempfile.mkdtemp(prefix=".export-", dir=folder))
    try:
        yield staged
        for written in sorted(staged.iterdir()):
            os.replace(written, folder / written.name)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
