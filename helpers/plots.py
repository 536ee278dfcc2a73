"""The course's figures: training curves, utilisation timelines, bars, image grids, rooflines."""

import matplotlib.pyplot as plt
import numpy as np

__all__ = [
    "bars",
    "confusion_matrix",
    "history",
    "images",
    "lines",
    "long_runs",
    "overlays",
    "roofline",
    "utilization",
    "utilization_grid",
]


def history(history, metrics=("loss", "accuracy"), title=None):
    """Training and validation curves from a Keras History or its .history dict (notebook 01)."""
    logs = getattr(history, "history", history)
    shown = [m for m in metrics if m in logs]
    fig, axes = plt.subplots(
        1, len(shown), figsize=(5 * len(shown), 3.5), squeeze=False
    )
    for ax, metric in zip(axes[0], shown):
        epochs = np.arange(1, len(logs[metric]) + 1)
        ax.plot(epochs, logs[metric], "o-", label="training")
        if f"val_{metric}" in logs:
            ax.plot(epochs, logs[f"val_{metric}"], "s--", label="validation")
        ax.set(xlabel="epoch", ylabel=metric)
        ax.legend()
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def utilization(monitor, title="Utilisation while training"):
    """CPU (and GPU) utilisation over time of a timing.Utilization, its marks (notebook 08)."""
    fig, ax = plt.subplots(figsize=(9, 3.5))
    keys = (
        ["cpu_pct", "process_pct"]
        + sorted(
            k for k in monitor.samples[0] if k.endswith("_pct") and k.startswith("gpu")
        )
        if monitor.samples
        else []
    )
    names = {"cpu_pct": "CPU % (all programs)", "process_pct": "CPU % (this process)"}
    for key in keys:
        t, v = monitor.series(key)
        label = names.get(key, key.replace("_pct", "").upper() + " %")
        (line,) = ax.plot(t, v, label=label)
        ax.fill_between(t, v, color=line.get_color(), alpha=0.4)  # busy time as an area
    for t, label in monitor.marks:
        ax.axvline(t, color="grey", lw=0.8, ls=":")
        ax.text(t, 101, label, rotation=90, fontsize=7, va="bottom", ha="right")
    ax.set(xlabel="seconds", ylabel="utilisation %", ylim=(0, 100), title=title)
    ax.legend(loc="lower right")
    fig.tight_layout()
    return fig


def bars(values, ylabel, title=None, log=False):
    """A bar chart of {label: value}, each bar labelled with its value (notebook 02)."""
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(values)), 3.5))
    labels = list(values)
    drawn = ax.bar(labels, [values[k] for k in labels], color="tab:blue")
    ax.bar_label(drawn, fmt="{:,.0f}", fontsize=8)
    ax.set(ylabel=ylabel, title=title)
    if log:
        ax.set_yscale("log")
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    return fig


def lines(series, xlabel, ylabel, title=None, reference=None, reference_label=None):
    """Lines from {label: (xs, ys)}, e.g. GFLOP/s against matrix size per device (notebook 00)."""
    many = len(series) > 4  # then the legend goes beside the axes, not over the lines
    fig, ax = plt.subplots(figsize=(10.5 if many else 7, 3.8))
    for label, (xs, ys) in series.items():
        ax.plot(xs, ys, "o-", label=label)
    if reference:
        ax.axhline(reference, color="tab:red", ls="--", label=reference_label)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.grid(alpha=0.3)
    ax.legend(
        **(
            {"loc": "center left", "bbox_to_anchor": (1.01, 0.5), "fontsize": "small"}
            if many
            else {}
        )
    )
    fig.tight_layout()
    return fig


def _grid(count, columns, size):
    """A figure with room for `count` pictures, `columns` a row, no axes: (fig, flat axes)."""
    rows = int(np.ceil(count / columns))
    fig, axes = plt.subplots(
        rows, columns, figsize=(columns * size, rows * size * 1.15), squeeze=False
    )
    for ax in axes.flat:
        ax.axis("off")
    return fig, axes.flat


def images(images, titles=None, columns=8, size=1.6):
    """A grid of images (arrays 0..255 or 0..1) with optional titles (notebook 01)."""
    images = [np.asarray(im) for im in images]
    fig, axes = _grid(len(images), columns, size)
    for i, (ax, im) in enumerate(zip(axes, images)):
        im = im.squeeze()
        if im.dtype != np.uint8 and im.max() > 1.0:
            im = im.clip(0, 255).astype("uint8")
        ax.imshow(im, cmap="gray" if im.ndim == 2 else None)
        if titles is not None:
            ax.set_title(titles[i], fontsize=8)
    fig.tight_layout()
    return fig


def confusion_matrix(labels, predictions, class_names):
    """A confusion matrix with counts, rows true class, columns predicted class (notebook 01)."""
    n = len(class_names)
    counts = np.zeros((n, n), dtype=int)
    np.add.at(counts, (np.asarray(labels), np.asarray(predictions)), 1)
    fig, ax = plt.subplots(figsize=(0.55 * n + 2, 0.55 * n + 1.5))
    ax.imshow(counts, cmap="Blues")
    for i in range(n):
        for j in range(n):
            ax.text(
                j,
                i,
                counts[i, j],
                ha="center",
                va="center",
                fontsize=7,
                color="white" if counts[i, j] > counts.max() / 2 else "black",
            )
    ax.set(
        xticks=range(n),
        yticks=range(n),
        xticklabels=class_names,
        yticklabels=class_names,
        xlabel="predicted",
        ylabel="true",
    )
    fig.tight_layout()
    return fig, counts


def long_runs(runs, reference=None, mark=None, title=None):
    """Training (dashed) and validation (solid) accuracy per epoch of ladder records, a colour
    per step; `reference` {step: %} draws dotted lines, `mark` a vertical one (notebook 05)."""
    fig, ax = plt.subplots(figsize=(8, 4))
    for r in runs:
        epochs = np.arange(1, r["epochs"] + 1)
        (line,) = ax.plot(
            epochs,
            100 * np.array(r["val_accuracy_per_epoch"]),
            label=f"step {r['step']} validation",
        )
        ax.plot(
            epochs,
            100 * np.array(r["train_accuracy_per_epoch"]),
            "--",
            color=line.get_color(),
            label=f"step {r['step']} training",
        )
        if reference and r["step"] in reference:
            ax.axhline(reference[r["step"]], ls=":", color=line.get_color())
    if mark:
        ax.axvline(mark, color="grey", lw=0.8)
    ax.set(xlabel="epoch", ylabel="accuracy (%)", title=title)
    ax.legend(fontsize=8, ncol=3)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def overlays(images, heatmaps, titles=None, columns=4, size=2.2):
    """Images (0..255), each with a heat map (0..1, same height and width) over it (notebook 06)."""
    fig, axes = _grid(len(images), columns, size)
    for i, (ax, im, heat) in enumerate(zip(axes, images, heatmaps)):
        ax.imshow(np.asarray(im).clip(0, 255).astype("uint8"))
        ax.imshow(heat, cmap="jet", alpha=0.45, vmin=0, vmax=1)
        if titles is not None:
            ax.set_title(titles[i], fontsize=8)
    fig.tight_layout()
    return fig


def utilization_grid(monitors, columns=4):
    """Small CPU utilisation timelines of several monitors {label: monitor} (notebook 07)."""
    rows = int(np.ceil(len(monitors) / columns))
    fig, axes = plt.subplots(
        rows, columns, figsize=(3.2 * columns, 2.2 * rows), squeeze=False, sharey=True
    )
    for ax in axes.flat[len(monitors) :]:
        ax.axis("off")
    for ax, (label, usage) in zip(axes.flat, monitors.items()):
        t, v = usage.series("cpu_pct")
        ax.plot(t, v, color="tab:blue", lw=1)
        ax.fill_between(t, v, alpha=0.4)
        ax.set(ylim=(0, 105), title=label)
        ax.title.set_fontsize(8)
        ax.tick_params(labelsize=7)
    for ax in axes[:, 0]:
        ax.set_ylabel("CPU %")
    fig.suptitle("CPU utilisation per variant")
    fig.tight_layout()
    return fig


def _rate(flops_per_s):
    """FLOP/s in GFLOP/s or TFLOP/s, three significant digits: '35.2 GFLOP/s', '15.7 TFLOP/s'."""
    value, unit = (
        (flops_per_s / 1e12, "T") if flops_per_s >= 1e12 else (flops_per_s / 1e9, "G")
    )
    return (
        f"{value:,.3g} {unit}FLOP/s" if value < 1000 else f"{value:,.0f} {unit}FLOP/s"
    )


def _figure(value):
    """Three significant digits, thousands written out: '3.1', '17.4', '1,555'."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


_MARKERS = {"measured": "o", "recorded": "s", "published": "^"}


def roofline(roofs, points=(), title="Roofline"):
    """A log-log roofline of `roofs` (helpers.roofs: a memory roof and a compute roof per
    number format, each labelled with its figure and ridge point) and `points` (label,
    intensity, flops_per_s, kind: the marker) (notebooks 00, 08)."""
    ridges = [
        top / r["bytes_per_s"] for r in roofs for top in r["flops_per_s"].values()
    ]
    xs = ridges + [p["intensity"] for p in points]
    low, high = min(xs) / 4, max(xs) * 4
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for i, r in enumerate(roofs):
        color, bandwidth = f"C{i}", r["bytes_per_s"]
        top_ridge = max(top / bandwidth for top in r["flops_per_s"].values())
        ax.plot(
            [low, top_ridge],
            [low * bandwidth, top_ridge * bandwidth],
            color=color,
            lw=2,
            label=f"{r['name']} memory: {_figure(bandwidth / 1e9)} GB/s ({r['kind']})",
        )
        for style, (kind, top) in zip(("-", "--", ":", "-."), r["flops_per_s"].items()):
            ridge = top / bandwidth
            ax.plot(
                [ridge, high],
                [top, top],
                color=color,
                ls=style,
                lw=2,
                label=f"{r['name']} {kind}: {_rate(top)}, ridge {_figure(ridge)} FLOP/B",
            )
    shown = set()
    for i, p in enumerate(points):
        ax.plot(
            [p["intensity"]],
            [p["flops_per_s"]],
            _MARKERS[p["kind"]],
            color="black",
            ms=6,
            label=None if p["kind"] in shown else f"{p['kind']} (points)",
        )
        shown.add(p["kind"])
        ax.annotate(
            p["label"],
            (p["intensity"], p["flops_per_s"]),
            fontsize=7,
            textcoords="offset points",
            xytext=(5, -10 if i % 2 else 4),
        )
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="arithmetic intensity (FLOP per byte)",
        ylabel="FLOP/s",
        title=title,
    )
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig
