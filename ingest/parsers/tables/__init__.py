"""Results tables people post: any layout, read by what the headers say (results_table.py)."""
