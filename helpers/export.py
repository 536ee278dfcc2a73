"""A trained model leaving Python (notebook 11, and notebook 12 for a learner's own model): a
SavedModel that serves `model(x, training=False)`, converted to TFLite in float32 or 8 bits,
and the interpreter a phone app would run it in. Written from notebook 11's page."""

import keras
import tensorflow as tf

__all__ = ["load_tflite", "saved_model", "to_tflite"]


# Written from notebooks/11_inference_and_edge.ipynb by `make pages`: change it there.
def saved_model(model, path, batch=None):  # @save
    archive = keras.export.ExportArchive()
    archive.track(model)
    spec = tf.TensorSpec((batch, *model.input_shape[1:]), tf.float32)  # None: any batch
    archive.add_endpoint(
        "serve", lambda x: model(x, training=False), input_signature=[spec]
    )
    archive.write_out(str(path), verbose=False)


# Written from notebooks/11_inference_and_edge.ipynb by `make pages`: change it there.
def to_tflite(saved_model_dir, quantize=None, calibration=None):  # @save
    known = quantize in (None, "dynamic", "int8")
    if not known or (quantize == "int8" and calibration is None):
        raise ValueError(
            "quantize must be None, 'dynamic' or 'int8' (int8 with calibration "
            f"pictures); got {quantize!r}."
        )
    converter = tf.lite.TFLiteConverter.from_saved_model(str(saved_model_dir))
    if quantize:  # both: the weights stored as 8-bit integers
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    if quantize == "int8":  # every tensor too, its range learned from the calibration
        converter.representative_dataset = lambda: ([p[None]] for p in calibration)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = converter.inference_output_type = tf.uint8
    return converter.convert()


# Written from notebooks/11_inference_and_edge.ipynb by `make pages`: change it there.
def load_tflite(path, xnnpack=True):  # @save
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:  # Colab has no LiteRT: TensorFlow's own interpreter
        Interpreter = tf.lite.Interpreter
        OpResolverType = tf.lite.experimental.OpResolverType
    kernels = "AUTO" if xnnpack else "BUILTIN_WITHOUT_DEFAULT_DELEGATES"  # XNNPACK off
    resolver = OpResolverType[kernels]
    interpreter = Interpreter(
        model_path=str(path), experimental_op_resolver_type=resolver
    )
    interpreter.allocate_tensors()
    return interpreter
