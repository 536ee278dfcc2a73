"""Notebook 11's exercise checks (inference and the edge)."""

from ..exercises import Exercise, accuracy_choice, timed_choice


def exercises():
    return [
        Exercise(
            "11",
            1,
            timed_choice(("XLA", "serving function"), "pictures/s"),
            given=("speeds",),
            hints="xla = tf.function(lambda x: model(x, training=False), "
            "input_signature=[spec], jit_compile=True); call it once (it compiles), then "
            "timing.alternate({'XLA': lambda: xla(images[:1]).numpy(), 'serving function': "
            "lambda: serve(images[:1]).numpy()}, units=1, rounds=c.rounds, seconds=c.seconds). "
            "Then the same at batch 256.",
            worked="It depends on the machine. XLA fuses the element-wise work into the "
            "convolutions; on a CPU the gain is usually small and can be negative at batch 1. "
            "On GPUs it helps more, mostly at larger batches.",
        ),
        Exercise(
            "11",
            2,
            accuracy_choice(("calibrated on 4 pictures", "calibrated on all")),
            given=("first", "second", "pictures"),
            hints="(out / 'few.tflite').write_bytes(to_tflite(paths['saved_model'], 'int8', "
            "calibration[:4])); few = load_tflite(out / 'few.tflite'); p = "
            "np.concatenate([run_tflite(few, images[i:i + 1])[:, 0] for i in "
            "range(len(images))]); first = np.mean((p > 0.5) == labels.astype(bool)). second: "
            "the int8 file's accuracy from the table.",
            worked="Usually a: four pictures show only part of the value range of each "
            "activation, so larger values from other pictures are clipped to the largest "
            "integer. By how much it drops is your measurement, and on a few hundred pictures "
            "a small drop is no clear one.",
        ),
        Exercise(
            "11",
            3,
            timed_choice(("2 threads", "1 thread"), "pictures/s"),
            given=("speeds",),
            hints="load the int8 file twice with Interpreter(model_path=..., "
            "num_threads=n), n = 1 and 2; for batch 64 resize the input "
            "(resize_tensor_input(..., [64, size, size, 3]), allocate_tensors()); then "
            "timing.alternate({'2 threads': partial(run_tflite, two, images[:64]), "
            "'1 thread': partial(run_tflite, one, images[:64])}, units=64, ...). The same at "
            "batch 1.",
            worked="Expect a second thread to gain little at batch 1, where one small "
            "picture is too little work to split, and more at batch 64, where the "
            "convolutions have enough to share (on a shared 2-core machine, less than 2×).",
        ),
    ]
