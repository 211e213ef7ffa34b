"""PNG charts (matplotlib's Agg canvas, no display needed) shared by the protocols' aggregators."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def grouped_bar_chart(
    table: pd.DataFrame,
    *,
    group: str,
    series: str,
    value: str,
    lo: str | None,
    hi: str | None,
    path: str | Path,
    title: str = "",
    ylabel: str = "",
    ylim: tuple[float, float] | None = None,
) -> str:
    """Grouped bars: one group per value of ``group`` (x axis), one bar per value of ``series``
    (legend), height ``value`` with the interval ``[lo, hi]`` drawn as asymmetric error bars.
    Missing cells are left empty. Returns the written PNG path."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    groups = list(dict.fromkeys(table[group].tolist()))
    names = list(dict.fromkeys(table[series].tolist()))
    idx = table.set_index([group, series])
    width = 0.8 / max(1, len(names))
    fig = Figure(figsize=(min(14.0, max(6.0, 0.25 * len(groups) * max(1, len(names)) + 3)), 4.8))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(len(groups), dtype=float)
    for s_i, name in enumerate(names):
        heights, err_lo, err_hi = [], [], []
        for g in groups:
            if (g, name) in idx.index:
                row = idx.loc[(g, name)]
                if isinstance(row, pd.DataFrame):
                    row = row.iloc[0]
                m = float(row[value])
                a = float(row[lo]) if lo else np.nan
                b = float(row[hi]) if hi else np.nan
            else:
                m = a = b = np.nan
            heights.append(m)
            err_lo.append(m - a if np.isfinite(m) and np.isfinite(a) else 0.0)
            err_hi.append(b - m if np.isfinite(m) and np.isfinite(b) else 0.0)
        h = np.array(heights)
        have = np.isfinite(h)  # a missing cell draws no bar (not a zero)
        ax.bar((x - 0.4 + width * (s_i + 0.5))[have], h[have], width, label=str(name),
               yerr=np.array([err_lo, err_hi])[:, have], capsize=3, error_kw={"elinewidth": 1})
    ax.set_xticks(x)
    ax.set_xticklabels([str(g) for g in groups], rotation=20 if len(groups) > 4 else 0, ha="right"
                       if len(groups) > 4 else "center")
    if ylim:
        ax.set_ylim(*ylim)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    return str(out)
