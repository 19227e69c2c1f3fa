"""specdash ingest: parse experiment files into normalized tables and load them into the DuckDB store.

Importing this package never imports streamlit or plotly (a test holds it to that).
"""
from ingest.errors import IngestError
from ingest.pipeline import FileReport, ingest_paths

__all__ = ["IngestError", "FileReport", "ingest_paths"]
