"""The console's pictures, drawn on the server as inline SVG: no chart library, nothing to load, and the numbers are
in the page (as text in each picture) for anyone who would rather read them.

What to draw is computed here too: how a scope's memories spread over retention now and, with no recall in between,
in 7 and 30 days (core/forgetting.py's R = e^(-t/S)).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape

import numpy as np
from markupsafe import Markup

from jiyi.core.forgetting import SECONDS_PER_DAY, ForgettingCurve
from jiyi.stores.base import Vitals

# Retention buckets, highest first: (lower bound, label). Core and system memories (R = 1) land in the first.
RETENTION_BUCKETS = ((0.9, "≥ 90%"), (0.7, "70–90%"), (0.5, "50–70%"), (0.3, "30–50%"), (0.1, "10–30%"),
                     (0.0, "< 10%"))
HORIZONS = (("now", 0), ("in_7_days", 7), ("in_30_days", 30))  # (label key, days ahead)
COLORS = ("#2f6fde", "#e08a1e", "#b8b8c4", "#3a9a5b", "#9b59b6", "#c0392b", "#16a085", "#7f8c8d")
LAYER_COLORS = {"working": "#e08a1e", "short_term": "#2f6fde", "long_term": "#3a9a5b"}


@dataclass(frozen=True, slots=True)
class RetentionSpread:
    """How many memories fall in each retention bucket (RETENTION_BUCKETS' order), now and at each horizon."""

    counts: dict[str, list[int]]  # horizon label key -> count per bucket
    total: int


def retention_spread(memories: Vitals, curve: ForgettingCurve, now: datetime) -> RetentionSpread:
    """ForgettingCurve.retention for every memory at every horizon, computed on the store's columns: a 100k scope
    in a few tens of milliseconds where a call per memory took over a second. The same formula as the curve's
    (tests/ui/test_console_pictures.py holds the two equal); without recall in between, R a few days ahead is
    e^(-(t + days)/S)."""
    n = len(memories)
    counts = {key: [0] * len(RETENTION_BUCKETS) for key, _ in HORIZONS}
    if not n:
        return RetentionSpread(counts, 0)
    kind = np.ones(n)
    for memory_type, factor in curve.type_factors.items():
        kind[memories.memory_types == memory_type] = factor
    lasting = np.isin(memories.categories, sorted(curve.lasting_categories))
    strength = np.minimum((curve.base_strength + curve.importance_factor * np.maximum(memories.importance, 0.0)
                           + curve.review_bonus * np.maximum(memories.access_counts, 0.0)) * kind, curve.max_strength)
    lowers = np.array([lower for lower, _ in RETENTION_BUCKETS])
    for key, days in HORIZONS:
        idle = np.maximum(now.timestamp() + days * SECONDS_PER_DAY - memories.last_reinforced, 0.0) / SECONDS_PER_DAY
        retention = np.where(lasting, 1.0, np.exp(-idle / strength))
        bucket = np.argmax(retention[:, None] >= lowers[None, :], axis=1)  # the first bucket whose floor it reaches
        counts[key] = np.bincount(bucket, minlength=len(RETENTION_BUCKETS)).tolist()
    return RetentionSpread(counts, n)


def bucket_of(retention: float) -> int:
    for index, (lower, _) in enumerate(RETENTION_BUCKETS):
        if retention >= lower:
            return index
    return len(RETENTION_BUCKETS) - 1


def _text(x: float, y: float, text: str, anchor: str = "middle", cls: str = "") -> str:
    css = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{css}>{escape(text)}</text>'


def _svg(width: int, height: int, label: str, body: list[str], cls: str = "chart") -> Markup:
    return Markup(f'<svg class="{cls}" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
                  f'aria-label="{escape(label)}"><title>{escape(label)}</title>{"".join(body)}</svg>')


def grouped_bars(label: str, groups: Sequence[str], series: Sequence[tuple[str, str, Sequence[int]]],
                 width: int = 900, height: int = 240) -> Markup:
    """Bars per group, one per series ((name, color, values)), with a legend and each bar's value above it."""
    top, bottom, left, right = 28, 34, 12, 12
    plot_h = height - top - bottom
    peak = max((v for _, _, values in series for v in values), default=0) or 1
    slot = (width - left - right) / max(len(groups), 1)
    bar = min(28.0, (slot - 12) / max(len(series), 1))
    body = [f'<line x1="{left}" y1="{top + plot_h}" x2="{width - right}" y2="{top + plot_h}" class="axis"/>']
    for g, group in enumerate(groups):
        x0 = left + g * slot + (slot - bar * len(series)) / 2
        for s, (_, color, values) in enumerate(series):
            value = values[g]
            h = plot_h * value / peak
            x = x0 + s * bar
            body.append(f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" '
                        f'fill="{color}"><title>{escape(f"{group}: {value}")}</title></rect>')
            body.append(_text(x + (bar - 2) / 2, top + plot_h - h - 3, str(value), cls="value"))
        body.append(_text(left + g * slot + slot / 2, height - bottom + 16, group))
    x = float(left)
    for name, color, _ in series:
        body.append(f'<rect x="{x:.1f}" y="6" width="10" height="10" fill="{color}"/>')
        body.append(_text(x + 14, 15, name, anchor="start", cls="legend"))
        x += 24 + 9 * len(name) + 6 * sum(1 for c in name if ord(c) > 0x2E80)  # CJK characters are wider
    return _svg(width, height, label, body)


def horizontal_bars(label: str, items: Sequence[tuple[str, int, str]], width: int = 900) -> Markup:
    """One bar per (name, value, color), longest scaled to the width, value at its end."""
    row, left, right = 26, 150, 60
    height = row * max(len(items), 1) + 8
    peak = max((value for _, value, _ in items), default=0) or 1
    body = []
    for i, (name, value, color) in enumerate(items):
        y = 4 + i * row
        w = (width - left - right) * value / peak
        body.append(_text(left - 8, y + 16, name, anchor="end"))
        body.append(f'<rect x="{left}" y="{y + 3}" width="{w:.1f}" height="{row - 8}" fill="{color}"/>')
        body.append(_text(left + w + 6, y + 16, f"{value:,}", anchor="start", cls="value"))
    return _svg(width, height, label, body)


def lines(label: str, xlabels: Sequence[str], series: Sequence[tuple[str, str, Sequence[int]]],
          width: int = 900, height: int = 220) -> Markup:
    """A line per series ((name, color, values)) over the x labels (oldest first), with a legend."""
    top, bottom, left, right = 28, 30, 44, 16
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max((v for _, _, values in series for v in values), default=0) or 1
    step = plot_w / max(len(xlabels) - 1, 1)
    body = [f'<line x1="{left}" y1="{top + plot_h}" x2="{width - right}" y2="{top + plot_h}" class="axis"/>',
            _text(left - 6, top + 4, f"{peak:,}", anchor="end", cls="value"),
            _text(left - 6, top + plot_h, "0", anchor="end", cls="value")]
    for name, color, values in series:
        points = " ".join(f"{left + i * step:.1f},{top + plot_h - plot_h * v / peak:.1f}" for i, v in enumerate(values))
        body.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2">'
                    f"<title>{escape(name)}</title></polyline>")
    if xlabels:
        body.append(_text(left, height - 8, xlabels[0], anchor="start"))
        if len(xlabels) > 1:
            body.append(_text(width - right, height - 8, xlabels[-1], anchor="end"))
    x = float(left)
    for name, color, _ in series:
        body.append(f'<rect x="{x:.1f}" y="6" width="10" height="10" fill="{color}"/>')
        body.append(_text(x + 14, 15, name, anchor="start", cls="legend"))
        x += 24 + 9 * len(name) + 6 * sum(1 for c in name if ord(c) > 0x2E80)
    return _svg(width, height, label, body)


KIND_COLORS = {"user": "#1f2430", "person": "#2f6fde", "pet": "#e08a1e", "place": "#3a9a5b",
               "organisation": "#9b59b6", "thing": "#7f8c8d", "event": "#c0392b"}
MAX_NEIGHBOURS = 16  # more would not be readable around one node; the page's table lists them all


@dataclass(frozen=True, slots=True)
class GraphNode:
    """An entity in the picture: its name, kind (a KIND_COLORS key), the page it links to, and for a neighbour
    the relations between it and the entity in the middle: (relation, from the middle outwards, current)."""

    name: str
    kind: str
    href: str | None = None
    edges: tuple[tuple[str, bool, bool], ...] = ()


def _short(name: str, limit: int = 18) -> str:
    return name if len(name) <= limit else name[:limit - 1] + "…"


def _node(x: float, y: float, radius: int, node: GraphNode, cls: str) -> str:
    color = KIND_COLORS.get(node.kind, KIND_COLORS["thing"])
    body = (f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius}" fill="{color}"/>'
            f'{_text(x, y + radius + 15, _short(node.name), cls="name")}')
    inner = f'<g class="{cls}" data-kind="{escape(node.kind)}"><title>{escape(node.name)}</title>{body}</g>'
    return f'<a href="{escape(node.href)}">{inner}</a>' if node.href else inner


def neighbourhood(label: str, centre: GraphNode, neighbours: Sequence[GraphNode], ended: str,
                  width: int = 760) -> Markup:
    """The entity in the middle and its one-hop neighbours around it, an edge to each labelled with the relations
    between them (an arrow where they all point one way; dashed when none is current, `ended` after a closed one).
    At most MAX_NEIGHBOURS neighbours, in the order given."""
    shown = list(neighbours[:MAX_NEIGHBOURS])
    few = len(shown) <= 2  # one or two sit left and right of the middle: a low picture
    height = 200 if few else 440
    start = np.pi if few else -np.pi / 2
    cx, cy = width / 2, height / 2 - 8
    orbit_x, orbit_y = width / 2 - 90, height / 2 - 50
    body = ['<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#8a93a6"/></marker></defs>']
    nodes = []
    for i, node in enumerate(shown):
        angle = start + 2 * np.pi * i / max(len(shown), 1)
        x, y = cx + orbit_x * np.cos(angle), cy + orbit_y * np.sin(angle)
        dx, dy = x - cx, y - cy
        length = float(np.hypot(dx, dy)) or 1.0
        ux, uy = dx / length, dy / length
        x1, y1, x2, y2 = cx + ux * 30, cy + uy * 30, x - ux * 22, y - uy * 22  # from rim to rim
        directions = {outgoing for _, outgoing, _ in node.edges}
        current = any(is_current for _, _, is_current in node.edges)
        marker = ""
        if directions == {True}:
            marker = ' marker-end="url(#arrow)"'
        elif directions == {False}:
            marker = ' marker-start="url(#arrow)"'
        text = ", ".join(relation + ("" if is_current else f" ({ended})") for relation, _, is_current in node.edges)
        body.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                    f'class="edge{"" if current else " closed"}"{marker}/>')
        body.append(_text(cx + dx * 0.55, cy + dy * 0.55 - 4, text, cls="edge"))
        nodes.append(_node(x, y, 20, node, "node"))
    body.extend(nodes)  # drawn over the edges
    body.append(_node(cx, cy, 30, centre, "node centre"))
    return _svg(width, height, label, body, cls="chart graph")
