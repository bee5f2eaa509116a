"""The data API is registered by name, and naming it imports neither numpy nor mxnet."""

from __future__ import annotations

import subprocess
import sys

import pytest

import gluon_hub
from gluon_hub.data import Pad, Stack, Tuple


def test_batchify_functions_are_registered_by_name() -> None:
    assert {"pad", "stack", "tuple", "list", "dict", "named_tuple"} <= set(gluon_hub.list_batchify())
    pad = gluon_hub.get_batchify("pad", pad_val=-1, ret_length=True)
    assert isinstance(pad, Pad)
    batch, lengths = pad([[1, 2], [3]])
    assert batch.asnumpy().tolist() == [[1.0, 2.0], [3.0, -1.0]]
    assert lengths.asnumpy().tolist() == [2, 1]
    both = gluon_hub.get_batchify("tuple", fn=[Pad(), Stack()])
    assert isinstance(both, Tuple)
    with pytest.raises(TypeError, match="accepted: .*pad_val"):
        gluon_hub.get_batchify("pad", padding=0)


def test_listing_and_naming_the_data_api_stay_light() -> None:
    code = (
        "import sys, gluon_hub, gluon_hub.data, gluon_hub.losses\n"
        "gluon_hub.list_batchify(); gluon_hub.list_losses(); gluon_hub.data.batchify_specs()\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'mxnet'))\n"
        "assert not heavy, heavy\n"
        "assert 'Pad' in dir(gluon_hub.data) and 'FocalLoss' in dir(gluon_hub.losses)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_unknown_names_raise_attribute_error() -> None:
    import gluon_hub.data
    import gluon_hub.losses

    with pytest.raises(AttributeError, match="Padd"):
        gluon_hub.data.Padd  # noqa: B018
    with pytest.raises(AttributeError, match="Focal"):
        gluon_hub.losses.Focal  # noqa: B018
