"""The program a line template compiles to (``sglang_templates``), which ``log_kernels.scan_lines``
runs: an int64 array of (code, a, b) rows, one per part of the template's pattern, in order.
Kept apart from the compiled code so that building a template does not import numba.
"""
# Step codes: a program is an int64 array of (code, a, b) rows.
LITERAL = 0  # the bytes literals[a:a + b]
DATETIME = 1  # "YYYY-MM-DD HH:MM:SS", then "[.,]" and a fraction of a digits when a > 0
BRACKET_TAGS = 2  # (?: [A-Z][A-Z_]*\d{1,9})*
CUSTOM_TAGS = 3  # (?:[A-Z][A-Z_]*\d{1,9} )*
DIGITS = 4  # \d{a,b}
LABEL = 5  # (?:0|[1-9]\d{0,17})
INT_VALUE = 6  # \d{1,18} into ints[a, row]
FLOAT_VALUE = 7  # -?\d{1,15}(?:\.\d{1,15})? into floats[a, row]
BOOL_VALUE = 8  # True|False into ints[a, row] as 1/0
EXTRA_VALUE = 9  # -?(?:0|[1-9]\d{0,14})(?:\.\d{1,15})? : its bounds into bounds[2a, row] and bounds[2a + 1, row]
LINE_END = 10  # [, \t]* then the end of the line

# Rows of ``marks``: what every program records about its line.
MARK_NAMES = ("timestamp", "tags_start", "tags_end", "label_start", "label_end")
TIMESTAMP, TAGS_START, TAGS_END, LABEL_START, LABEL_END = range(len(MARK_NAMES))
MARKS = len(MARK_NAMES)

MAX_FRACTION_DIGITS = 6  # timestamps are microseconds: a longer fraction is not read by position
