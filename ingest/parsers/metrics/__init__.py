"""Server metrics: Prometheus /metrics text and per-request speculative statistics."""
