"""CPU and GPU utilisation sampled in the background while a cell runs (notebooks 07, 08)."""

import threading
import time

import psutil

from .hardware import nvidia_smi_gpus

__all__ = ["Utilization"]


class Utilization:
    """Context manager sampling CPU % and each GPU's load, memory and power (notebook 07)."""

    def __init__(self, interval=0.5, gpus=None):
        if interval <= 0:
            raise ValueError(f"interval must be positive, got {interval}.")
        self.interval, self.samples, self.marks = interval, [], []
        self._with_gpus = gpus if gpus is not None else bool(nvidia_smi_gpus())
        self._stop = threading.Event()

    def _sample(self):
        entry = {"t": time.perf_counter() - self.start, "cpu_pct": psutil.cpu_percent()}
        if self._with_gpus:
            for i, g in enumerate(nvidia_smi_gpus()):
                entry[f"gpu{i}_memory_mb"] = g["memory_used_mb"]
                for key, column in (("utilization_pct", "pct"), ("power_w", "power_w"),
                                    ("temperature_c", "temperature_c")):
                    if g[key] is not None:  # "[N/A]": a MIG slice reports no utilisation
                        entry[f"gpu{i}_{column}"] = g[key]
        self.samples.append(entry)

    def _run(self):
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self):
        self.start = time.perf_counter()
        psutil.cpu_percent()  # the first reading only sets a reference
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()
        return False

    def mark(self, label):
        """Record a labelled moment (an epoch boundary, a phase change)."""
        self.marks.append((time.perf_counter() - self.start, label))

    def series(self, key):
        """(times, values) of one sampled quantity, e.g. 'cpu_pct', 'gpu0_pct', 'gpu0_power_w'."""
        rows = [s for s in self.samples if key in s]
        return [s["t"] for s in rows], [s[key] for s in rows]

    def mean(self, key):
        values = self.series(key)[1]
        return sum(values) / len(values) if values else float("nan")
