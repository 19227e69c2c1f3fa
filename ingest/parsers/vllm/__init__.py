"""vLLM: server logs and benchmark outputs."""
