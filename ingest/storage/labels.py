"""Labels after ingest: rename, merge, re-phase and delete files and variants (``specdash label``).

A variant is a claim that runs are the same system; the store names them from evidence (migration
019), and this is how a person corrects that claim. A change labels whole files, exactly as
``specdash ingest --variant/--phase`` would have: ``sources`` and every table with a ``variant`` or
``phase`` column of the file's rows, then the kept links and windows are rebuilt, in one transaction.
Each changed file gets a row in ``label_changes``.

Selecting by variant takes the files whose evidence shows that variant (in any view or table with a
``source_id`` and a ``variant``). A file that also shows another variant is refused by name: labelling
it would move that other evidence too, so it has to be named with ``--source``.
"""
from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from ingest.errors import SpecdashError
from ingest.storage import run_windows, store
from ingest.storage.location import StoreRef
from ingest.storage.sql import fetch_value

# What the pages call evidence without a phase; `--phase "(no phase)"` clears a phase.
NO_PHASE = "(no phase)"


class LabelError(SpecdashError):
    """A label change could not be made; the store is unchanged."""

    title = "Labels unchanged"


@dataclass(frozen=True)
class LabelChange:
    """What to change: the files (by id, path or file name) or a variant's files, and how."""

    sources: Sequence[str] = ()
    variant: str | None = None
    in_phase: str | None = None  # with ``variant``: only its files of this phase (NO_PHASE: unphased)
    new_variant: str | None = None
    new_phase: str | None = None  # NO_PHASE clears the phase
    delete: bool = False


@dataclass
class LabelReport:
    change_id: str
    action: str
    files: list[dict[str, str | None]] = field(default_factory=list)

    def summary(self) -> str:
        verb = {"delete": "deleted", "variant": "relabelled", "phase": "re-phased"}[self.action]
        lines = [f"{verb} {len(self.files)} file(s) (change {self.change_id}):"]
        for file in self.files:
            after = "" if self.action == "delete" else f" → variant {file['new_variant'] or 'as the file says'}, phase {file['new_phase'] or NO_PHASE}"
            lines.append(f"  {file['path']} (was {file['old_variant']}, {file['old_phase'] or NO_PHASE}){after}")
        return "\n".join(lines)


def relabel(db_path: StoreRef, change: LabelChange) -> LabelReport:
    """Apply ``change`` in one transaction; a LabelError leaves the store as it was."""
    action = check(change)
    if not db_path.exists():
        raise LabelError(db_path, "no store here", hint="ingest files first (`specdash ingest FILES`)")
    return store.retried_on_conflict(
        db_path, lambda con: _relabel(con, db_path, change, LabelReport(uuid.uuid4().hex[:12], action)))


def _relabel(con: duckdb.DuckDBPyConnection, db_path: StoreRef, change: LabelChange, report: LabelReport) -> LabelReport:
    with store.transaction(con, f"relabel: {report.action} (change {report.change_id})"):
        shown = variants_shown(con)  # read once: seven views of every file, the most of a relabel's time
        chosen = chosen_sources(con, change, db_path, shown)
        for source_id, path, old_phase in chosen:
            record = {"source_id": source_id, "path": path, "old_phase": old_phase,
                      "old_variant": ", ".join(shown.get(source_id, [])) or None,
                      "new_phase": None, "new_variant": None}
            if report.action == "delete":
                store.delete_source_rows(con, source_id)
            else:
                record["new_variant"], record["new_phase"] = apply_labels(con, source_id, change)
            log_change(con, report, record)
            report.files.append(record)
        run_windows.rebuild(con)
        store.relink_traces(con)
        store.touch_last_change(con)
    return report


def check(change: LabelChange) -> str:
    """The action ``change`` asks for; a LabelError when it asks for nothing, or for two things at once."""
    if bool(change.sources) == bool(change.variant):
        raise LabelError(None, "name the files to label: --source FILE (repeatable) or --variant NAME, one of the two")
    if change.in_phase is not None and not change.variant:
        raise LabelError(None, "--in-phase narrows --variant; with --source the files are named already")
    if change.delete and (change.new_variant or change.new_phase):
        raise LabelError(None, "--delete removes the files' rows: it takes no new --to or --phase")
    if change.delete:
        return "delete"
    if change.new_variant is not None and not change.new_variant.strip():
        raise LabelError(None, "--to needs a name", hint="e.g. --to k2-drafter")
    if change.new_variant:
        return "variant"
    if change.new_phase is not None:
        return "phase"
    raise LabelError(None, "say what to change: --to NAME (rename or merge), --phase PHASE (re-phase) or --delete")


def chosen_sources(
    con: duckdb.DuckDBPyConnection, change: LabelChange, db_path: StoreRef, shown: dict[str, list[str]]
) -> list[tuple[str, str, str | None]]:
    """(source_id, path, phase) of the files ``change`` names, in path order; ``shown``: ``variants_shown``."""
    if change.sources:
        return [source_named(con, wanted, db_path) for wanted in change.sources]
    return variant_sources(con, str(change.variant), change.in_phase, db_path, shown)


def source_named(con: duckdb.DuckDBPyConnection, wanted: str, db_path: StoreRef) -> tuple[str, str, str | None]:
    rows = con.execute(
        r"""
        SELECT source_id, path, phase FROM sources
        WHERE source_id = $wanted OR path = $resolved OR regexp_replace(path, '^.*[/\\]', '') = $wanted
        ORDER BY path
        """,
        {"wanted": wanted, "resolved": str(Path(wanted).resolve())},
    ).fetchall()
    if not rows:
        raise LabelError(db_path, f"no ingested file is {wanted!r}",
                         hint="give a source id, a path or a file name as `specdash status --sessions` lists them")
    if len(rows) > 1:
        raise LabelError(db_path, f"{len(rows)} ingested files are named {wanted!r}: {', '.join(r[1] for r in rows)}",
                         hint="give the full path or the source id")
    return rows[0]


def variant_sources(
    con: duckdb.DuckDBPyConnection, variant: str, in_phase: str | None, db_path: StoreRef, shown: dict[str, list[str]]
) -> list[tuple[str, str, str | None]]:
    phase = None if in_phase in (None, NO_PHASE) else in_phase
    rows = [row for row in con.execute("SELECT source_id, path, phase FROM sources ORDER BY path").fetchall()
            if variant in shown.get(row[0], []) and (in_phase is None or row[2] == phase)]
    if not rows:
        where = f" in phase {in_phase}" if in_phase is not None else ""
        raise LabelError(db_path, f"no file shows variant {variant!r}{where}",
                         hint="`specdash status --sessions` lists the variants and their files")
    mixed = [f"{path} (also {', '.join(v for v in shown[source_id] if v != variant)})"
             for source_id, path, _ in rows if set(shown[source_id]) - {variant}]
    if mixed:
        raise LabelError(db_path, f"these files hold evidence of {variant!r} and of other variants: {'; '.join(mixed)}",
                         hint="labelling them would move that other evidence too: name the files with --source")
    return rows


# The views whose rows carry a file's id and the variant the pages show them under (a bench record linked
# to a log shows the log's variant, so the log's file carries it too).
SHOWN_VARIANTS = " UNION ".join([
    *(f"SELECT source_id, variant FROM {view}" for view in (
        "evidence_sessions", "trace_labels", "sweep_series", "acceptance_position_rates",
        "acceptance_request_rows", "acceptance_metric_windows", "acceptance_datasets")),
    "SELECT log_source_id, variant FROM evidence_sessions WHERE log_source_id IS NOT NULL",
])


def variants_shown(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Per file, the variants its evidence shows on the pages."""
    with store.link_memory(con):
        rows = con.execute(
            f"""
            WITH shown AS ({SHOWN_VARIANTS})
            SELECT source_id, list(DISTINCT variant ORDER BY variant) FROM shown
            WHERE variant IS NOT NULL GROUP BY source_id
            """
        ).fetchall()
    return {source_id: variants for source_id, variants in rows}


def apply_labels(con: duckdb.DuckDBPyConnection, source_id: str, change: LabelChange) -> tuple[str | None, str | None]:
    """Label one file's rows as --variant/--phase would have; returns its (variant, phase) labels after."""
    variant, phase = con.execute("SELECT variant, phase FROM sources WHERE source_id = ?", [source_id]).fetchone() or (None, None)
    updates: dict[str, str | None] = {}
    if change.new_variant:
        updates["variant"] = variant = change.new_variant.strip()
    if change.new_phase is not None:
        updates["phase"] = phase = None if change.new_phase in ("", NO_PHASE) else change.new_phase
    if "variant" in updates:
        con.execute("UPDATE sources SET variant = ? WHERE source_id = ?", [variant, source_id])
    if "phase" in updates:
        con.execute("UPDATE sources SET phase = ? WHERE source_id = ?", [phase, source_id])
    for table in store.data_tables(con):
        for column in store.table_columns(con, table):
            if column in updates:  # one statement per column: the names come from the store's own catalog
                con.execute(f"UPDATE {table} SET {column} = $value WHERE source_id = $source_id",
                            {"source_id": source_id, "value": updates[column]})
    return variant, phase


def log_change(con: duckdb.DuckDBPyConnection, report: LabelReport, record: dict[str, str | None]) -> None:
    con.execute(
        "INSERT INTO label_changes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [report.change_id, store.utc_now(), report.action, record["source_id"], record["path"],
         record["old_phase"], record["old_variant"], record["new_phase"], record["new_variant"]],
    )


def history(db_path: StoreRef) -> list[dict[str, object]]:
    """Every recorded label change, newest first."""
    if not db_path.exists():
        return []
    with store.writer(db_path) as con:
        if not fetch_value(con, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'label_changes'"):
            return []
        cursor = con.execute("SELECT * FROM label_changes ORDER BY changed_at DESC, path")
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
