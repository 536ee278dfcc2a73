"""What a TensorFlow profile (TensorBoard's Profile tab) says about a training run (notebook 07)."""

import collections
import math
from pathlib import Path

__all__ = ["read_profile"]


def _busy_ms(spans):
    """Wall time covered by at least one of `spans` (start, stop in ps), in milliseconds."""
    busy, end = 0, 0
    for start, stop in sorted(spans):
        busy, end = busy + max(0, stop - max(start, end)), max(end, stop)
    return busy / 1e9


def read_profile(logdir):
    """The newest profile under `logdir`, in ms: steps and their time, the share spent waiting
    for the next batch (IteratorGetNext), input threads at work, top ops and every op type's
    time summed over the compute threads (notebooks 07, 09)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    found = sorted(Path(logdir).glob("**/plugins/profile/*/*.xplane.pb"))
    if not found:
        raise FileNotFoundError(f"No profile under {logdir}: train with keras.callbacks."
                                "TensorBoard(log_dir, profile_batch=(first, last)) first.")
    space = xplane_pb2.XSpace.FromString(found[-1].read_bytes())
    host = next(p for p in space.planes if p.name.startswith("/host:CPU"))
    names = {key: meta.name for key, meta in host.event_metadata.items()}
    steps, step_ms, wait_ms, input_spans, ops = 0, 0.0, 0.0, [], collections.Counter()
    for line in host.lines:
        for event in line.events:
            name, ms = names.get(event.metadata_id, "?"), event.duration_ps / 1e9
            if line.name.startswith("tf_data"):  # an input pipeline thread
                start = line.timestamp_ns * 1000 + event.offset_ps
                input_spans.append((start, start + event.duration_ps))
            if line.name == "python" and name == "multi_step_on_iterator":
                steps, step_ms = steps + 1, step_ms + ms
            elif name == "IteratorGetNextOp::DoCompute":
                wait_ms += ms
            elif line.name.startswith("tf_Compute") and ":" in name and "::" not in name:
                ops[name.rsplit(":", 1)[-1]] += ms  # "scope/op:OpType" -> OpType
    return {"steps": steps, "step_ms": step_ms,
            "waiting_share": wait_ms / step_ms if step_ms else math.nan,
            "input_busy_ms": _busy_ms(input_spans), "top_ops_ms": dict(ops.most_common(8)),
            "ops_ms": dict(ops)}
