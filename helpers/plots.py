"""The course's figures: training curves, utilisation timelines, bars, image grids, rooflines."""

import matplotlib.pyplot as plt
import numpy as np

__all__ = ["bars", "confusion_matrix", "history", "images", "lines", "long_runs", "overlays",
           "paired_bars", "roofline", "stacked_bars", "utilization", "utilization_grid"]


def history(history, metrics=("loss", "accuracy"), title=None):
    """Training and validation curves from a Keras History (or its .history dict)."""
    logs = getattr(history, "history", history)
    shown = [m for m in metrics if m in logs]
    fig, axes = plt.subplots(1, len(shown), figsize=(5 * len(shown), 3.5), squeeze=False)
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
    """CPU (and GPU) utilisation over time from a monitor.Utilization, with its marks."""
    fig, ax = plt.subplots(figsize=(9, 3.5))
    keys = ["cpu_pct"] + sorted(k for k in monitor.samples[0] if k.endswith("_pct")
                                and k.startswith("gpu")) if monitor.samples else []
    for key in keys:
        t, v = monitor.series(key)
        line, = ax.plot(t, v, label=key.replace("_pct", "").upper() + " %")
        ax.fill_between(t, v, color=line.get_color(), alpha=0.4)  # busy time as an area
    for t, label in monitor.marks:
        ax.axvline(t, color="grey", lw=0.8, ls=":")
        ax.text(t, 101, label, rotation=90, fontsize=7, va="bottom", ha="right")
    ax.set(xlabel="seconds", ylabel="utilisation %", ylim=(0, 100), title=title)
    ax.legend(loc="lower right")
    fig.tight_layout()
    return fig


def bars(values, ylabel, title=None, reference=None, reference_label=None, log=False):
    """A bar chart of {label: value}, optionally with a horizontal reference line."""
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(values)), 3.5))
    labels = list(values)
    drawn = ax.bar(labels, [values[k] for k in labels], color="tab:blue")
    ax.bar_label(drawn, fmt="{:,.0f}", fontsize=8)
    if reference:
        ax.axhline(reference, color="tab:red", ls="--", label=reference_label)
        if reference_label:
            ax.legend()
    ax.set(ylabel=ylabel, title=title)
    if log:
        ax.set_yscale("log")
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    return fig


def lines(series, xlabel, ylabel, title=None, reference=None, reference_label=None):
    """Several lines from {label: (xs, ys)}, e.g. GFLOP/s against matrix size per device."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for label, (xs, ys) in series.items():
        ax.plot(xs, ys, "o-", label=label)
    if reference:
        ax.axhline(reference, color="tab:red", ls="--", label=reference_label)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return fig


def _grid(count, columns, size):
    """A figure with room for `count` pictures, `columns` a row, no axes: (fig, flat axes)."""
    rows = int(np.ceil(count / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(columns * size, rows * size * 1.15),
                             squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    return fig, axes.flat


def images(images, titles=None, columns=8, size=1.6, cmap=None):
    """A grid of images (arrays 0..255 or 0..1) with optional titles."""
    images = [np.asarray(im) for im in images]
    fig, axes = _grid(len(images), columns, size)
    for i, (ax, im) in enumerate(zip(axes, images)):
        im = im.squeeze()
        if im.dtype != np.uint8 and im.max() > 1.0:
            im = im.clip(0, 255).astype("uint8")
        ax.imshow(im, cmap=cmap or ("gray" if im.ndim == 2 else None))
        if titles is not None:
            ax.set_title(titles[i], fontsize=8)
    fig.tight_layout()
    return fig


def confusion_matrix(labels, predictions, class_names):
    """A confusion matrix with counts, rows = true class, columns = predicted class."""
    n = len(class_names)
    counts = np.zeros((n, n), dtype=int)
    np.add.at(counts, (np.asarray(labels), np.asarray(predictions)), 1)
    fig, ax = plt.subplots(figsize=(0.55 * n + 2, 0.55 * n + 1.5))
    ax.imshow(counts, cmap="Blues")
    for i in range(n):
        for j in range(n):
            ax.text(j, i, counts[i, j], ha="center", va="center", fontsize=7,
                    color="white" if counts[i, j] > counts.max() / 2 else "black")
    ax.set(xticks=range(n), yticks=range(n), xticklabels=class_names, yticklabels=class_names,
           xlabel="predicted", ylabel="true")
    fig.tight_layout()
    return fig, counts


def paired_bars(labels, ours, reference, ylabel, errors=None, names=("here", "reference"),
                title=None):
    """Our values (with optional error bars) beside a reference's; a None draws no bar."""
    x = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(labels)), 3.8))
    ax.bar(x - 0.2, ours, 0.4, yerr=errors, capsize=4, color="tab:blue", label=names[0])
    known = [(i, v) for i, v in enumerate(reference) if v is not None]
    ax.bar([x[i] + 0.2 for i, _ in known], [v for _, v in known], 0.4, color="white",
           edgecolor="tab:red", hatch="//", label=names[1])
    top = max([*ours, *(v for _, v in known)])
    ax.set(xticks=x, xticklabels=labels, ylabel=ylabel, title=title, ylim=(0, 1.3 * top))
    ax.legend(loc="upper left", ncol=2)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def long_runs(runs, reference=None, mark=None, title=None):
    """Training (dashed) and validation (solid) accuracy per epoch of ladder records, one
    colour per step; `reference` {step: %} draws dotted lines, `mark` a vertical line."""
    fig, ax = plt.subplots(figsize=(8, 4))
    for r in runs:
        epochs = np.arange(1, r["epochs"] + 1)
        (line,) = ax.plot(epochs, 100 * np.array(r["val_accuracy_per_epoch"]),
                          label=f"step {r['step']} validation")
        ax.plot(epochs, 100 * np.array(r["train_accuracy_per_epoch"]), "--",
                color=line.get_color(), label=f"step {r['step']} training")
        if reference and r["step"] in reference:
            ax.axhline(reference[r["step"]], ls=":", color=line.get_color())
    if mark:
        ax.axvline(mark, color="grey", lw=0.8)
    ax.set(xlabel="epoch", ylabel="accuracy (%)", title=title)
    ax.legend(fontsize=8, ncol=3)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def overlays(images, heatmaps, titles=None, columns=4, size=2.2, alpha=0.45):
    """Images (0..255) with a heat map (0..1, same height and width) laid over each."""
    fig, axes = _grid(len(images), columns, size)
    for i, (ax, im, heat) in enumerate(zip(axes, images, heatmaps)):
        ax.imshow(np.asarray(im).clip(0, 255).astype("uint8"))
        ax.imshow(heat, cmap="jet", alpha=alpha, vmin=0, vmax=1)
        if titles is not None:
            ax.set_title(titles[i], fontsize=8)
    fig.tight_layout()
    return fig


def utilization_grid(monitors, key="cpu_pct", columns=4, title="CPU utilisation per variant"):
    """Small timelines of one quantity (CPU % by default) of several monitors {label: monitor}."""
    rows = int(np.ceil(len(monitors) / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.2 * rows), squeeze=False,
                             sharey=True)
    for ax in axes.flat[len(monitors):]:
        ax.axis("off")
    for ax, (label, usage) in zip(axes.flat, monitors.items()):
        t, v = usage.series(key)
        ax.plot(t, v, color="tab:blue", lw=1)
        ax.fill_between(t, v, alpha=0.4)
        ax.set(ylim=(0, 105), title=label)
        ax.title.set_fontsize(8)
        ax.tick_params(labelsize=7)
    for ax in axes[:, 0]:
        ax.set_ylabel(key.replace("_pct", " %"))
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def stacked_bars(parts, ylabel, title=None):
    """Stacked bars from {label: {part: value}}, e.g. ms per image computing and waiting."""
    labels = list(parts)
    names = list(dict.fromkeys(name for p in parts.values() for name in p))
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(labels)), 3.8))
    bottom = np.zeros(len(labels))
    for name in names:
        values = np.array([parts[k].get(name, 0.0) for k in labels])
        ax.bar(labels, values, bottom=bottom, label=name)
        bottom += values
    ax.set(ylabel=ylabel, title=title)
    ax.legend()
    ax.tick_params(axis="x", rotation=60)
    plt.setp(ax.get_xticklabels(), ha="right", fontsize=8)
    fig.tight_layout()
    return fig


def _rate(flops_per_s):
    """FLOP/s in GFLOP/s or TFLOP/s, three significant digits: '35.2 GFLOP/s', '15.7 TFLOP/s'."""
    value, unit = (flops_per_s / 1e12, "T") if flops_per_s >= 1e12 else (flops_per_s / 1e9, "G")
    return f"{value:,.3g} {unit}FLOP/s" if value < 1000 else f"{value:,.0f} {unit}FLOP/s"


def _figure(value):
    """Three significant digits, thousands written out: '3.1', '17.4', '1,555'."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


_MARKERS = {"measured": "o", "recorded": "s", "published": "^"}


def roofline(roofs, points=(), title="Roofline"):
    """A log-log roofline: arithmetic intensity (FLOP per byte) against FLOP/s (notebooks 00
    and 08). `roofs`: one dict per device (helpers.roofline: name, kind, bytes_per_s and
    flops_per_s per number format), drawn as a memory roof (labelled measured or published)
    and one compute roof per format, each labelled with its figure and the ridge point
    (peak / bandwidth) where it meets the memory roof.
    `points`: dicts with label, intensity, flops_per_s and kind (measured, recorded or
    published: the marker), each drawn and labelled."""
    ridges = [top / r["bytes_per_s"] for r in roofs for top in r["flops_per_s"].values()]
    xs = ridges + [p["intensity"] for p in points]
    low, high = min(xs) / 4, max(xs) * 4
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for i, r in enumerate(roofs):
        color, bandwidth = f"C{i}", r["bytes_per_s"]
        top_ridge = max(top / bandwidth for top in r["flops_per_s"].values())
        ax.plot([low, top_ridge], [low * bandwidth, top_ridge * bandwidth], color=color, lw=2,
                label=f"{r['name']} memory: {_figure(bandwidth / 1e9)} GB/s ({r['kind']})")
        for style, (kind, top) in zip(("-", "--", ":", "-."), r["flops_per_s"].items()):
            ridge = top / bandwidth
            ax.plot([ridge, high], [top, top], color=color, ls=style, lw=2,
                    label=f"{r['name']} {kind}: {_rate(top)}, ridge {_figure(ridge)} FLOP/B")
    shown = set()
    for i, p in enumerate(points):
        ax.plot([p["intensity"]], [p["flops_per_s"]], _MARKERS[p["kind"]], color="black", ms=6,
                label=None if p["kind"] in shown else f"{p['kind']} (points)")
        shown.add(p["kind"])
        ax.annotate(p["label"], (p["intensity"], p["flops_per_s"]), fontsize=7,
                    textcoords="offset points", xytext=(5, -10 if i % 2 else 4))
    ax.set(xscale="log", yscale="log", xlabel="arithmetic intensity (FLOP per byte)",
           ylabel="FLOP/s", title=title)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig
