"""What a parser hands to the store: normalized Arrow tables plus an account of what was skipped."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa


@dataclass
class ParsedSource:
    """The normalized content of one input file.

    ``tables`` maps a store table name (see ``ingest.tables.SCHEMAS``) to rows
    without ``source_id``: the store adds it. ``skipped`` counts lines that were
    read but not loaded, by reason ("noise: tqdm", "malformed value", ...);
    ``warnings`` holds ``file:line: message`` texts for lines worth a look.

    A parser of big files may also hand over ``batches``: rows produced while the
    file is still being read, so memory does not grow with the file. Only once
    they are exhausted are ``tables``, ``skipped``, ``warnings`` and ``lines_read``
    final; reading them may raise the file's error (and then nothing is stored).
    """

    kind: str
    engine: str = "sglang"
    tables: dict[str, pa.Table] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    lines_read: int = 0
    batches: Iterator[tuple[str, pa.Table]] | None = None
    rows_streamed: int = 0  # rows handed over through ``batches`` so far
    size_bytes: int | None = None  # the bytes the source consists of, when not its path's own size (a folder's files)

    @property
    def rows_loaded(self) -> int:
        return self.rows_streamed + sum(table.num_rows for table in self.tables.values())

    def drain(self) -> ParsedSource:
        """Read any remaining ``batches`` into ``tables`` (for callers that want it all in memory)."""
        if self.batches is None:
            return self
        pieces: dict[str, list[pa.Table]] = {}
        for name, table in self.batches:
            pieces.setdefault(name, []).append(table)
        self.batches = None
        for name, parts in pieces.items():
            if name in self.tables:
                parts.append(self.tables[name])
            self.tables[name] = pa.concat_tables(parts)
        self.rows_streamed = 0
        return self

    @property
    def lines_skipped(self) -> int:
        return sum(self.skipped.values())
