"""The ImageNet classifiers of notebook 11: their labels and the larger ones' pinned download.

Notebook 11 writes out the export itself (SavedModel, TFLiteConverter, the interpreter's
set / invoke / get): only that notebook uses it, so it lives on the page alone.
"""

from pathlib import Path

from . import config

__all__ = ["CAT_CLASSES", "ZOO", "ZOO_URL", "imagenet_labels", "zoo_classifiers"]

# The domestic-cat classes of ImageNet, as the labels file names them.
CAT_CLASSES = ("tabby, tabby cat", "tiger cat", "Persian cat", "Siamese cat, Siamese",
               "Egyptian cat")

# Four larger uint8 ImageNet classifiers from the repository the embedded MobileNet v1 0.25 comes
# from (Google's Coral test data, Apache-2.0), pinned to one commit and to each file's sha256.
ZOO_URL = ("https://raw.githubusercontent.com/google-coral/test_data/"
           "104342d2d3480b3e66203073dac24f4e2dbb4c41/")
ZOO = {
    "mobilenet_v1_0.5_160_quant.tflite":
        "3cc6d2ca460abd2e0f699a6d0d2550c6b61c6e3b0e27a3616e384ea74cb86f43",
    "mobilenet_v1_0.75_192_quant.tflite":
        "41daeb22fdcf947e0e5ec32373aa9df7c31f3ef45dbd0ef7b5940fbce3c20f6a",
    "mobilenet_v2_1.0_224_quant.tflite":
        "7aad0c74c5e3c06e5eb3c827e13304fdd68a83da6087d92ee169c24ff9fd4776",
    "tf2_mobilenet_v2_1.0_224_ptq.tflite":
        "5d3137241276e79c86d14a74fe43581398ae0e815191d3dba45495b810840e8c",
}


def zoo_classifiers():
    """Paths of the ZOO classifiers (notebook 11): downloaded once in `full` (12 MB, checksums
    checked); [] in `smoke` and `sample`, and offline, with a one-line notice."""
    from . import sources

    if config.profile() != "full":
        return []
    try:
        return [sources.download(sources.Remote(ZOO_URL + name, sha))
                for name, sha in ZOO.items()]
    except (ConnectionError, ValueError) as e:
        print(f"Notice: the larger classifiers could not be downloaded ({str(e)[:120]}); "
              "only the embedded one is compared.")
        return []


def imagenet_labels(path=None):
    """The 1001 ImageNet labels of the TFLite classifiers, line 0 "background" (notebook 11)."""
    from . import sources

    path = path or sources.sample_path("pretrained/imagenet_labels.txt")
    labels = Path(path).read_text().splitlines()
    if len(labels) != 1001:
        raise ValueError(f"{path} has {len(labels)} labels; the classifiers need 1001.")
    return labels
