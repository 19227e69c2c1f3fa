"""The domains of the figures a file carries, checked as it is read: tok/s > 0, accept length ≥ 1, rates in [0, 1].

A value outside its domain is kept as read (the store holds what the file says), and the file's report
warns, naming the file, the first line (or run) that breaks it, the value and how many rows do, as other
input warnings do (issue #29). The pages hold the same domains for what they derive (dashboard.analysis).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

POSITIVE = "not above 0: a throughput or time of a run that did work is positive"
FLOOR_ONE = ("below 1.00: accept length counts the bonus token, so its floor is 1 (this looks like accepted "
             "drafts per step, or a broken source)")
UNIT = "outside [0, 1]: a rate (share) is between 0 and 1"


@dataclass(frozen=True)
class Domain:
    table: str
    column: str
    what: str  # the figure, as a person names it
    problem: str

    def broken(self, values: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
        if self.problem == POSITIVE:
            return pc.less_equal(values, 0)
        if self.problem == FLOOR_ONE:
            return pc.less(values, 1)
        return pc.or_(pc.less(values, 0), pc.greater(values, 1))


DOMAINS = (
    Domain("bench_runs", "tok_per_s", "tok/s", POSITIVE),
    Domain("bench_runs", "duration_s", "wall time (s)", POSITIVE),
    Domain("decode_stats", "tokens_per_step", "accept length (tokens/step)", FLOOR_ONE),
    Domain("decode_stats", "accept_rate_drafts", "accept rate (drafts)", UNIT),
    Domain("bench_serving", "output_throughput", "output throughput (tok/s)", POSITIVE),
    Domain("bench_serving", "accept_length", "accept length", FLOOR_ONE),
    Domain("acceptance_positions", "rate", "per-position acceptance rate", UNIT),
    Domain("acceptance_requests", "accept_length", "a request's accept length", FLOOR_ONE),
    Domain("acceptance_requests", "accept_rate", "a request's accept rate", UNIT),
    Domain("sweep_points", "accept_length", "a sweep point's accept length", FLOOR_ONE),
    Domain("sweep_points", "throughput", "a sweep point's throughput", POSITIVE),
)


@dataclass
class Breach:
    domain: Domain
    count: int = 0
    first_place: str = ""
    first_value: float = 0.0


class DomainCheck:
    """Counts the rows outside their domain over every table and batch of one file, then words the warnings."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.breaches: dict[tuple[str, str], Breach] = {}

    def check(self, table_name: str, table: pa.Table) -> None:
        for domain in (d for d in DOMAINS if d.table == table_name and d.column in table.column_names):
            mask = pc.fill_null(domain.broken(table[domain.column]), False)
            count = pc.sum(mask).as_py() or 0
            if not count:
                continue
            breach = self.breaches.setdefault((domain.table, domain.column), Breach(domain))
            if not breach.count:
                first = pc.index(mask, True).as_py()
                breach.first_place, breach.first_value = place(table, first), table[domain.column][first].as_py()
            breach.count += count

    def checked(self, batches: Iterator[tuple[str, pa.Table]]) -> Iterator[tuple[str, pa.Table]]:
        """``batches`` unchanged, each checked as it passes (a streamed file is never held whole)."""
        for name, table in batches:
            self.check(name, table)
            yield name, table

    def warnings(self) -> list[str]:
        return [
            f"{self.path}:{b.first_place}: {b.domain.what} = {b.first_value:g} is {b.domain.problem}; "
            f"{b.count} row(s) of {b.domain.table}.{b.domain.column} like it, kept as read: check the source"
            for b in self.breaches.values()
        ]


def place(table: pa.Table, row: int) -> str:
    """Where row ``row`` came from: its line, else its run or record."""
    for column, label in (("line_no", ""), ("run_index", "run "), ("record_index", "record "), ("point_index", "point ")):
        if column in table.column_names and (value := table[column][row].as_py()) is not None:
            return f"{label}{value}"
    return f"row {row + 1}"
