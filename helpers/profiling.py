"""What a TensorFlow profile (TensorBoard's Profile tab) says about a training run (notebook 07)."""

import collections
import math
from pathlib import Path

__all__ = ["read_profile"]


def _busy_ms(spans):
    """Wall time covered by at least one of `spans` (start, stop in ps), in milliseconds."""
    busy, end = 0, None
    for start, stop in sorted(spans):
        if end is None or start > end:
            busy, end = busy + stop - start, stop
        elif stop > end:
            busy, end = busy + stop - end, stop
    return busy / 1e9


def read_profile(logdir):
    """The newest profile under `logdir` in ms: steps, their time, the wait for the next batch
    (IteratorGetNext), how long input threads and network worked, top ops (notebook 07)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    found = sorted(Path(logdir).glob("**/plugins/profile/*/*.xplane.pb"))
    if not found:
        raise FileNotFoundError(f"No profile under {logdir}: train with keras.callbacks."
                                "TensorBoard(log_dir, profile_batch=(first, last)) first.")
    space = xplane_pb2.XSpace()
    space.ParseFromString(found[-1].read_bytes())
    host = next(p for p in space.planes if p.name.startswith("/host:CPU"))
    names = {key: meta.name for key, meta in host.event_metadata.items()}
    steps, step_ms, wait_ms, ops = 0, 0.0, 0.0, collections.Counter()
    spans = {"input": [], "compute": []}
    for line in host.lines:
        kind = "input" if line.name.startswith("tf_data") else (
            "compute" if line.name.startswith("tf_Compute") else None)
        for event in line.events:
            if kind:
                start = line.timestamp_ns * 1000 + event.offset_ps
                spans[kind].append((start, start + event.duration_ps))
            name, ms = names.get(event.metadata_id, "?"), event.duration_ps / 1e9
            if line.name == "python" and name == "multi_step_on_iterator":
                steps, step_ms = steps + 1, step_ms + ms
            elif name == "IteratorGetNextOp::DoCompute":
                wait_ms += ms
            elif kind == "compute" and ":" in name and "::" not in name:
                ops[name.rsplit(":", 1)[-1]] += ms  # "scope/op:OpType" -> OpType
    return {"file": str(found[-1]), "steps": steps, "step_ms": step_ms,
            "waiting_for_input_ms": wait_ms,
            "waiting_share": wait_ms / step_ms if step_ms else math.nan,
            "input_busy_ms": _busy_ms(spans["input"]),
            "compute_busy_ms": _busy_ms(spans["compute"]),
            "top_ops_ms": dict(ops.most_common(8))}
