"""Child process of :func:`cv_testlib.video.gluoncv_outputs`: GluonCV's model scores clips.

``python -m cv_testlib.gluoncv_reference REQUEST.json``: the request names the model, its factory's
keyword arguments, the parameter file to load strictly, an ``.npz`` of input clips and the
``.npz`` to write the outputs to, under the same keys.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from cv_testlib.video import no_initialization
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)


def main(request_path: str) -> None:
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    with no_initialization():  # every value comes from the file
        net = gluoncv.model_zoo.get_model(request["name"], **request["kwargs"])
    net.load_parameters(request["params"], allow_missing=False, ignore_extra=False)
    with np.load(request["inputs"]) as clips:
        outputs = {key: net(mx.nd.array(clips[key])).asnumpy() for key in clips.files}
    np.savez(request["outputs"], **outputs)


if __name__ == "__main__":
    main(sys.argv[1])
