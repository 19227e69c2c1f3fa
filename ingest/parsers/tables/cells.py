"""One cell of a pasted results table, as people write it: the number, and what is printed around it.

People decorate numbers in tables they post: ``**2.85x**`` (the best of a column in bold), ``*1.2*``,
``1,234.5``, ``82.1 tok/s``, ``57 %``, ``1.8×``, ``3.1 ± 0.2``, ``538/660`` (accepted of drafted),
``41.2/0.8 (1.23×)`` (mean/sd and the speedup). ``read_cell`` takes the decoration off and says what it
was, so the caller can decide what the parts mean from the column's header (a ``/`` between two numbers
is mean/sd only under a header that says so). Nothing here knows the table's vocabulary.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

# Markdown emphasis and code around a cell (or inside it): **x**, __x__, *x*, _x_, `x`.
EMPHASIS = re.compile(r"(\*\*|__|\*|`)(?P<inner>.+?)\1")
LINK = re.compile(r"!?\[(?P<text>[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*)\]\((?P<url>[^()\s]*)\)")
HTML_TAG = re.compile(r"</?(?:b|strong|i|em|sup|sub|br|code)\s*/?>", re.IGNORECASE)
# Medals, check marks and other pictographs people put next to a leaderboard's winners.
PICTOGRAPH = re.compile("[\U0001F300-\U0001FAFF\u2600-\u27BF\uFE0F\u2B50\u2705\u274C]")
NO_VALUE = frozenset({"", "-", "--", "—", "–", "n/a", "na", "none", "null", "nan", "?", "/", "x"})
NUMBER = r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?|[+-]?\.\d+"
# A number and its unit: "82.1 tok/s", "57 %", "1.8×", "11.976s", "12 ms".
UNIT = r"[^\d\s±()/+,.-][^\s±()]*"
VALUE = re.compile(rf"^(?P<number>{NUMBER})\s*(?P<unit>{UNIT})?$")
SPREAD = re.compile(rf"^(?P<mean>.+?)\s*(?:±|\+/-|\+-)\s*(?P<sd>{NUMBER})\s*(?P<unit>{UNIT})?$")
PAIR = re.compile(rf"^(?P<first>.+?)\s*/\s*(?P<second>{NUMBER}\s*(?:{UNIT})?)$")
TRAILING_RATIO = re.compile(rf"^(?P<body>.+?)\s*\((?P<ratio>{NUMBER})\s*[x×X]\)$")
SPEEDUP_UNITS = frozenset({"x", "×", "X"})


@dataclass(frozen=True)
class Cell:
    """A cell read: ``value`` in the cell's own unit (``unit``: "%", "x", "tok/s", "ms", … or None).

    ``spread`` is the ± part, ``second`` the number after a ``/`` (its meaning is the header's to say),
    ``ratio`` a parenthesised ``(1.23×)``; ``text`` is the cell without Markdown, ``emphasis`` says
    it was bold or italic (the best figure of a leaderboard column).
    """

    text: str
    value: float | None = None
    unit: str | None = None
    spread: float | None = None
    second: float | None = None
    ratio: float | None = None
    emphasis: bool = False
    link: str | None = None


def plain_text(cell: str) -> tuple[str, bool, str | None]:
    """The cell without Markdown links, emphasis, HTML tags and pictographs; was it emphasized; its link."""
    link = None
    if (found := LINK.search(cell)) is not None:
        link = found["url"] or None
    text = LINK.sub(lambda m: m["text"], cell)
    text = HTML_TAG.sub("", text)
    emphasized = False
    while (stripped := EMPHASIS.sub(lambda m: m["inner"], text)) != text:
        emphasized, text = True, stripped
    text = PICTOGRAPH.sub("", text).replace("\\|", "|")
    return " ".join(text.split()), emphasized, link


def to_number(text: str) -> float | None:
    """``1,234.5`` -> 1234.5; None for text that is not one finite number."""
    try:
        number = float(text.replace(",", ""))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def number_and_unit(text: str) -> tuple[float, str | None] | None:
    found = VALUE.match(text.strip())
    if found is None:
        return None
    number = to_number(found["number"])
    if number is None:
        return None
    unit = found["unit"]
    return number, (unit.strip() if unit else None)


def read_cell(raw: str) -> Cell:
    text, emphasized, link = plain_text(raw)
    if text.lower() in NO_VALUE:
        return Cell(text=text, emphasis=emphasized, link=link)
    ratio = None
    if (found := TRAILING_RATIO.match(text)) is not None:
        ratio = to_number(found["ratio"])
        body = found["body"]
    else:
        body = text
    if (single := number_and_unit(body)) is not None:
        return Cell(text, single[0], single[1], ratio=ratio, emphasis=emphasized, link=link)
    if (spread := SPREAD.match(body)) is not None and (mean := number_and_unit(spread["mean"])) is not None:
        sd = to_number(spread["sd"])
        return Cell(text, mean[0], mean[1] or spread["unit"], spread=sd, ratio=ratio, emphasis=emphasized, link=link)
    if (pair := PAIR.match(body)) is not None and (first := number_and_unit(pair["first"])) is not None:
        second = number_and_unit(pair["second"])
        if second is not None:
            return Cell(text, first[0], first[1] or second[1], second=second[0], ratio=ratio, emphasis=emphasized,
                        link=link)
    return Cell(text=text, emphasis=emphasized, link=link)


def is_speedup(cell: Cell) -> bool:
    """``2.85x`` / ``1.8×``: a number printed as a multiple."""
    return cell.value is not None and cell.unit in SPEEDUP_UNITS
