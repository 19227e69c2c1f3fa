"""``specdash bench``: measure an OpenAI-compatible server the way the team measures every drafter.

Wait until the server answers ``/v1/models``, run warm-ups, then measured streaming runs of
``max_tokens`` each; write the canonical benchmark JSON (``specdash.bench/1``) with ``/metrics``
snapshots beside it, and ingest them. ``client`` speaks HTTP and SSE, ``procedure`` runs the
requests, ``session`` builds the JSON and the printed table, ``command`` is the subcommand.
A program-layer package: it uses ``ingest`` and never streamlit or plotly (docs/runner.md).
"""
