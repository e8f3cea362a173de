"""Matplotlib helpers for the rendered reports: figures become base64 PNGs embedded in HTML."""

import base64
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def new_figure(height: float = 3.4):
    figure, axis = plt.subplots(figsize=(8.5, height))
    axis.grid(alpha=0.3)
    return figure, axis


def png_base64(figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode()


def bar_chart_png(counts: dict[str, int], title: str) -> str:
    """Horizontal bars, one per label, in the order given."""
    figure, axis = new_figure(height=0.35 * len(counts) + 1.2)
    labels = list(counts)
    axis.barh(labels, [counts[k] for k in labels], color="steelblue")
    axis.invert_yaxis()
    axis.set_title(title, fontsize=10)
    axis.set_xlabel("receivables")
    return png_base64(figure)
