"""What a parser hands to the store: normalized Arrow tables plus an account of what was skipped."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pyarrow as pa


@dataclass
class ParsedSource:
    """The normalized content of one input file.

    ``tables`` maps a store table name (see ``ingest.tables.SCHEMAS``) to rows
    without ``source_id``: the store adds it. ``skipped`` counts lines that were
    read but not loaded, by reason ("noise: tqdm", "malformed value", ...);
    ``warnings`` holds ``file:line: message`` texts for lines worth a look.
    """

    kind: str
    engine: str = "sglang"
    tables: dict[str, pa.Table] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    lines_read: int = 0

    @property
    def rows_loaded(self) -> int:
        return sum(table.num_rows for table in self.tables.values())

    @property
    def lines_skipped(self) -> int:
        return sum(self.skipped.values())
