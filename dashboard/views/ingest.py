"""Ingest: upload files and run the same ingest as `specdash ingest`, with a per-file report like the CLI's."""
from __future__ import annotations

import streamlit as st

from dashboard import label_ui, queries, sections, ui, uploads
from dashboard.analysis import frames
from dashboard.state import Keys
from ingest.registry import registered_formats

st.title("Ingest files")
store = ui.require_store(allow_empty=True)
limit_mb = st.get_option("server.maxUploadSize")
st.caption(
    "Benchmark JSON/JSONL, SGLang/vLLM server logs, `bench_serving` output and profiler traces (`.json`, `.jsonl`, `.log`, "
    f"`.txt`, `.out`, `.gz`), up to {limit_mb} MB per file (`specdash serve --max-upload-mb`). The format is detected from "
    "the content, exactly as `specdash ingest` does; files uploaded together are linked like files of one CLI call."
)
formats_box = sections.section("Formats read, each with an example line (what `specdash formats` lists)", Keys.section_formats)
if formats_box.open:
    with formats_box:
        formats = frames.formats_table(registered_formats())
        ui.table(formats, lines=3)
        ui.export_buttons(formats, "formats")



# --- controls -----------------------------------------------------------------------------------
upload_round = st.session_state.get(Keys.upload_round, 0)
files = st.file_uploader("Files", type=list(uploads.ALLOWED_TYPES), accept_multiple_files=True,
                         key=f"{Keys.upload_files}_{upload_round}")
left, right = st.columns(2)
left.text_input("Phase label (optional)", key=Keys.upload_phase, placeholder="e.g. phase-1",
                help="Like `--phase`: groups these files into an experiment phase.")
right.text_input("Variant label (optional)", key=Keys.upload_variant, placeholder="e.g. k2-finetuned",
                 help="Like `--variant`: overrides the label the files imply (a log's label comes from its server args).")

if st.button(f"Ingest {len(files or [])} file(s)", type="primary", icon=":material/upload:", disabled=not files):
    progress = st.progress(0.0, text="Writing uploads…")

    def advance(done: int, total: int, report: uploads.UploadReport) -> None:
        progress.progress(done / total, text=f"{done} of {total}: {report.name} — {report.status}")

    with st.spinner("Ingesting…"):
        new_reports = uploads.ingest_uploads(
            [(f.name, f) for f in files or []], queries.store_ref(),
            phase=st.session_state[Keys.upload_phase].strip() or None,
            variant=st.session_state[Keys.upload_variant].strip() or None, on_progress=advance,
        )
    st.session_state[Keys.upload_reports] = new_reports
    st.session_state[Keys.upload_round] = upload_round + 1
    st.rerun()

# --- the report, like the CLI's -----------------------------------------------------------------
reports: list[uploads.UploadReport] = st.session_state.get(Keys.upload_reports) or []
if reports:
    failed = [r for r in reports if r.failed]
    (st.error if failed else st.success)(ui.upload_outcome([r.status for r in reports]))
    for report in reports:
        icon = "✗" if report.failed else "✓" if report.status == "loaded" else "="
        st.code(f"{icon} {report.summary}", language=None, wrap_lines=True)
        if report.warnings:
            with st.expander(f"{len(report.warnings)} warning(s) for {report.name}"):
                st.code("\n".join(report.warnings[:50]), language=None, wrap_lines=True)
    # Point to the page that will show what was loaded: Compare needs throughput, Breakdown a trace.
    if not queries.variant_summary([], []).empty:
        st.page_link("views/compare.py", label="See the results on Compare", icon=":material/leaderboard:")
    elif queries.has_traces():
        st.page_link("views/breakdown.py", label="See the traces on Breakdown", icon=":material/stacked_bar_chart:")
    elif not queries.sessions().empty:
        st.page_link("views/run.py", label="See the sessions on Run", icon=":material/search:")

# --- what the store holds -----------------------------------------------------------------------
st.subheader("Files in the store")
if not store.get("sources"):
    st.info("Nothing ingested yet: upload files above, or `specdash ingest PATH --phase PHASE` from a shell.")
    st.stop()
sources = queries.sources()
folder, files_table = frames.store_files_table(sources)
st.caption(f"{len(sources)} file(s) under `{folder}`" if folder else f"{len(sources)} file(s) (whole paths in the download)")
ui.table(files_table, lines=2)
ui.export_buttons(sources, "sources")
label_ui.label_section(sources)
