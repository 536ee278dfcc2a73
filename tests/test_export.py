"""helpers.export (written from notebook 11's page): a SavedModel served in inference mode,
its TFLite file, one picture at a time as notebook 12 exports a learner's model, answering as
`model.predict` does."""

from helpers import config, export

import keras
import numpy as np
import pytest


def test_a_one_picture_tflite_file_answers_as_predict_with_a_random_layer_inside(
    tmp_path,
):
    config.set_seed()
    model = keras.Sequential(
        [
            keras.Input((8, 8, 3)),
            keras.layers.RandomFlip("horizontal"),
            keras.layers.Flatten(),
            keras.layers.Dense(3, activation="softmax"),
        ]
    )
    export.saved_model(model, tmp_path / "saved_model", batch=1)
    (tmp_path / "model.tflite").write_bytes(export.to_tflite(tmp_path / "saved_model"))
    interpreter = export.load_tflite(tmp_path / "model.tflite")
    given, answer = (
        interpreter.get_input_details()[0],
        interpreter.get_output_details()[0],
    )
    # one picture: what the browser's runtime takes
    assert given["shape"].tolist() == [1, 8, 8, 3]
    pictures = np.random.default_rng(0).uniform(0, 255, (8, 8, 8, 3)).astype("float32")
    lite = []
    for picture in pictures:
        interpreter.set_tensor(given["index"], picture[None])
        interpreter.invoke()
        lite.append(interpreter.get_tensor(answer["index"])[0])
    np.testing.assert_allclose(
        np.array(lite), model.predict(pictures, verbose=0), atol=1e-5
    )


def test_int8_without_calibration_pictures_is_refused_with_what_to_pass(tmp_path):
    with pytest.raises(ValueError, match="int8 with calibration pictures"):
        export.to_tflite(tmp_path, quantize="int8")
    with pytest.raises(ValueError, match="got 'fp16'"):
        export.to_tflite(tmp_path, quantize="fp16")
