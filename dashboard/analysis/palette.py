"""Each variant's colour, decided once for the whole store: every page, chart and export draws a variant alike.

A variant's colour is its place in the store's variants ordered by when each first entered the store
(``data.variant_order``: its earliest file's ingest time, then its name), so a variant ingested later
takes the next colour and never recolours the ones before it, and two variants of one store never share
a colour while the palette has room (beyond it, colours repeat in the same order). A variant the store
does not hold (a decision's frozen evidence of a since-renamed variant, a frame built in a test) takes
the colours after the store's, in the order it is asked for.

UI-free: colours are hex strings, for plotly and HTML alike.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# Paul Tol's colour-blind-safe "muted" scheme (without its pale grey, which reads as "no data"), with his
# "vibrant" orange second, so the first variants (usually the baseline and a drafter or two) contrast most,
# and his vibrant blue and magenta last. Greens and reds here are not the verdict colours (charts.FASTER,
# charts.SLOWER), which are darker and only ever mark a Δ.
PALETTE: tuple[str, ...] = (
    "#332288",  # indigo
    "#EE7733",  # orange
    "#117733",  # green
    "#88CCEE",  # cyan
    "#CC6677",  # rose
    "#999933",  # olive
    "#AA4499",  # purple
    "#44AA99",  # teal
    "#882255",  # wine
    "#DDCC77",  # sand
    "#0077BB",  # blue
    "#EE3377",  # magenta
)


@dataclass(frozen=True)
class VariantColors:
    """The store's variants in the order they entered it; ``of`` gives their colours."""

    order: tuple[str, ...] = ()

    def index(self, variant: str) -> int | None:
        try:
            return self.order.index(variant)
        except ValueError:
            return None

    def of(self, variants: Iterable[str]) -> dict[str, str]:
        """Each of ``variants``' colour: the store's by its place in ``order``; one the store does not hold, the
        colours after the store's, in the order given (so it shares none with the store's while there is room)."""
        colors: dict[str, str] = {}
        unknown = 0
        for variant in dict.fromkeys(variants):
            place = self.index(variant)
            if place is None:
                place = len(self.order) + unknown
                unknown += 1
            colors[variant] = PALETTE[place % len(PALETTE)]
        return colors

    def color(self, variant: str) -> str:
        return self.of([variant])[variant]


UNORDERED = VariantColors()  # no store to order by: colours in the order a chart meets its variants
