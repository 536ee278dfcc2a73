"""Where a network looks: Grad-CAM's heat maps, for a model whose last layer is a Dense read
through a sigmoid (one output) or a softmax (one per class). Written from notebook 06's page;
notebook 12 uses it for a learner's own classifier."""

import numpy as np
import tensorflow as tf

__all__ = ["grad_cam"]


# Written from notebooks/06_cats_dogs_predictions.ipynb by `make pages`: change it there.
def grad_cam(model, pictures, layer):  # @save
    x, last = tf.convert_to_tensor(pictures, dtype="float32"), model.layers[-1]
    with tf.GradientTape() as tape:
        for lay in model.layers[:-1]:  # every layer before the last Dense
            x = lay(x, training=False)
            if lay.name == layer:
                features = x  # that layer's feature maps
                tape.watch(features)
        logits = x @ last.kernel + last.bias  # before the sigmoid (or a softmax)
        score = tf.abs(logits[:, 0]) if last.units == 1 else tf.reduce_max(logits, 1)
    weights = tf.reduce_mean(tape.gradient(score, features), axis=(1, 2), keepdims=True)
    cam = tf.nn.relu(tf.reduce_sum(weights * features, axis=-1))[..., None]
    cam = tf.image.resize(cam, pictures.shape[1:3])[..., 0].numpy()
    peak = cam.max(axis=(1, 2), keepdims=True)
    return np.divide(cam, peak, out=np.zeros_like(cam), where=peak > 0)
