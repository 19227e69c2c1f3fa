"""SGLang server logs: the stats-line grammar, its general reader and its compiled fast path."""
