"""The reference the log ingest is measured against: a plain line-by-line Python ``re`` parser.

It is what one would write without thinking about speed, but written with care:
compiled patterns, one ``match`` per line for the prefix, ``str.split`` for the
``key: value`` pairs, a dict for the key → column mapping, typed values kept in
compact ``array`` columns. It extracts the same fields specdash does — timestamp
(parsed), DP/TP rank, every known decode/prefill column, unknown keys as extra
text, the ``server_args`` dump (read with ``ast.literal_eval``), noise counted by
kind — but writes no database.

Run: ``python bench/ref_log_parser.py FILE`` prints the row counts as JSON.
"""
from __future__ import annotations

import ast
import json
import re
import sys
from array import array
from collections import Counter
from datetime import datetime
from pathlib import Path

WRAPPER = r"(?:[\w.-]+ +\| ?)?(?:\([\w.:-]+(?: pid=\d+)?(?:, ip=[^)]*)?\) +)?"
PREFIX = re.compile(
    rf"^{WRAPPER}(?:"
    r"\[(?:(?P<b_date>\d{4}-\d\d-\d\d) )?(?P<b_time>\d\d:\d\d:\d\d(?:[.,]\d+)?)(?P<b_tags>(?: [A-Z][A-Z_]*\d+)*)\] "
    r"|(?P<c_date>\d{4}-\d\d-\d\d) (?P<c_time>\d\d:\d\d:\d\d(?:[.,]\d+)?) (?:[A-Z]+ |\d+ )*\[(?P<c_tags>(?:[A-Z][A-Z_]*\d+ )*)[\w.-]+:\d+\] "
    r")?"
)
STEM = re.compile(r"(Decode|Prefill) batch(?: \[\d+\])?[.,] ?")
RANK_TAG = re.compile(r"([A-Z][A-Z_]*?)(\d+)")
NOISE = (
    ("noise: http access", re.compile(r'"(?:GET|POST|PUT|DELETE|HEAD|OPTIONS|PATCH) \S* HTTP/\d')),
    ("noise: tqdm", re.compile(r"\d+%\|[^|]*\| *\d+/\d+")),
    ("noise: traceback", re.compile(r"^(?:\S+ +\| ?)?(?:Traceback \(most recent|\s+File \"|\s+\^+|\w*(?:Error|Exception)\b| {4})")),
)

INT, FLOAT, BOOL = int, float, "bool"
DECODE_FIELDS = {
    "#running-req": ("running_req", INT), "#token": ("num_tokens", INT), "token usage": ("token_usage", FLOAT),
    "accept len": ("accept_len_raw", FLOAT), "accept rate": ("accept_rate_raw", FLOAT), "cuda graph": ("cuda_graph", BOOL),
    "gen throughput (token/s)": ("gen_throughput", FLOAT), "#queue-req": ("queue_req", INT),
}
PREFILL_FIELDS = {
    "#new-seq": ("new_seq", INT), "#new-token": ("new_token", INT), "#cached-token": ("cached_token", INT),
    "token usage": ("token_usage", FLOAT), "#running-req": ("running_req", INT), "#queue-req": ("queue_req", INT),
    "input throughput (token/s)": ("input_throughput", FLOAT), "cuda graph": ("cuda_graph", BOOL),
}
MISSING = float("nan")


class Table:
    """Columns as ``array('d')`` (NaN = missing) plus timestamps, ranks and extra text."""

    def __init__(self, fields: dict[str, tuple[str, object]]) -> None:
        self.fields = fields
        self.columns = {column: array("d") for column, _ in fields.values()}
        self.line_no, self.ts, self.dp_rank, self.tp_rank = array("q"), array("d"), array("q"), array("q")
        self.extra: list[str | None] = []

    def add(self, line_no: int, ts: float, ranks: dict[str, int], values: dict[str, float], extra: dict[str, str]) -> None:
        self.line_no.append(line_no)
        self.ts.append(ts)
        self.dp_rank.append(ranks.get("DP", -1))
        self.tp_rank.append(ranks.get("TP", -1))
        for column, store in self.columns.items():
            store.append(values.get(column, MISSING))
        self.extra.append(json.dumps(extra) if extra else None)

    def __len__(self) -> int:
        return len(self.line_no)


def cast(text: str, kind: object) -> float:
    if kind is BOOL:
        return 1.0 if text == "True" else 0.0
    return float(kind(text))  # type: ignore[operator]


def parse_file(path: Path) -> dict[str, object]:
    decode, prefill = Table(DECODE_FIELDS), Table(PREFILL_FIELDS)
    configs: list[dict[str, object]] = []
    skipped: Counter[str] = Counter()
    with open(path, encoding="utf-8", errors="replace") as lines:
        for line_no, line in enumerate(lines, start=1):
            line = line.rstrip("\r\n")
            prefix = PREFIX.match(line)
            message = line[prefix.end():] if prefix else line
            stem = STEM.match(message)
            if stem:
                table = decode if stem.group(1) == "Decode" else prefill
                if not read_stats(table, line_no, prefix, message[stem.end():]):
                    skipped["malformed stats line"] += 1
            elif message.startswith("server_args="):
                configs.append(read_config(message[len("server_args="):]))
            elif not line.strip():
                skipped["blank line"] += 1
            else:
                skipped[next((kind for kind, pattern in NOISE if pattern.search(line)), "other line")] += 1
    return {"decode_stats": len(decode), "prefill_stats": len(prefill), "server_configs": len(configs), "skipped": dict(skipped)}


def read_stats(table: Table, line_no: int, prefix: re.Match[str] | None, payload: str) -> bool:
    values: dict[str, float] = {}
    extra: dict[str, str] = {}
    for part in payload.rstrip(", ").split(", "):
        key, sep, value = part.partition(": ")
        if not sep:
            return False
        known = table.fields.get(key)
        try:
            if known:
                values[known[0]] = cast(value, known[1])
            else:
                extra[key] = value
        except ValueError:
            return False
    ts, ranks = MISSING, {}
    if prefix:
        date = prefix["b_date"] or prefix["c_date"]
        time = prefix["b_time"] or prefix["c_time"]
        if date and time:
            ts = datetime.fromisoformat(f"{date} {time.replace(',', '.')}").timestamp()
        tags = prefix["b_tags"] or prefix["c_tags"]
        if tags:
            ranks = {name: int(number) for name, number in RANK_TAG.findall(tags)}
    table.add(line_no, ts, ranks, values, extra)
    return True


def read_config(text: str) -> dict[str, object]:
    """``ServerArgs(a=1, ...)`` → dict via the equivalent ``dict(a=1, ...)`` call; ``{...}`` directly."""
    try:
        if text.startswith("ServerArgs("):
            call = ast.parse("dict" + text[len("ServerArgs"):], mode="eval").body
            return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}  # type: ignore[attr-defined]
        return ast.literal_eval(text)
    except (SyntaxError, ValueError):
        return {}


if __name__ == "__main__":
    print(json.dumps(parse_file(Path(sys.argv[1]))))
