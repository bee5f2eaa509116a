"""The weight-file check on every element size MXNet writes, sparse storage and empty files.

The check reads a file's headers and seeks over each array's bytes, so a wrong element
size in its table makes a valid file look short or leaves trailing bytes: each real file
below passes only when the size of its dtype (and of its sparse indices) is right.
"""

from __future__ import annotations

import numpy as np
import pytest

from gluon_hub._cache import _paramsfile
from gluon_hub.cache import ParamsFormatError, check_params_file


def _dense(dtype: str):
    from gluon_hub.compat import mx

    values = np.array([1, 0, 1, 1, 0, 1]) if dtype == "bool" else np.arange(6).reshape(2, 3)
    return {"w": mx.nd.array(values, dtype=dtype), "b": mx.nd.array([0.5, 1.5])}


def _row_sparse():
    from gluon_hub.compat import mx

    data = np.arange(6, dtype="float16").reshape(2, 3)
    return {"emb": mx.nd.sparse.row_sparse_array((data, np.array([0, 3])), shape=(5, 3))}


def _csr():
    from gluon_hub.compat import mx

    return {"adj": mx.nd.sparse.csr_matrix(
        (np.array([1, 2, 3], dtype="int8"), np.array([0, 2, 1]), np.array([0, 2, 2, 3])),
        shape=(3, 4))}


def _empty_sparse():
    from gluon_hub.compat import mx

    return [mx.nd.sparse.zeros("row_sparse", (4, 3)), mx.nd.sparse.zeros("csr", (4, 3))]


#: name -> (arrays, the mshadow dtype flag whose size the file exercises)
CASES = {
    "float16": (lambda: _dense("float16"), 2),
    "int8": (lambda: _dense("int8"), 5),
    "int32": (lambda: _dense("int32"), 4),
    "bool": (lambda: _dense("bool"), 7),
    "float64": (lambda: _dense("float64"), 1),
    "row_sparse": (_row_sparse, 2),
    "csr": (_csr, 5),
}


def _save(tmp_path, arrays) -> bytes:
    from gluon_hub.compat import mx

    path = tmp_path / "saved.params"
    mx.nd.save(str(path), arrays)
    return path.read_bytes()


@pytest.mark.mxnet
@pytest.mark.parametrize("name", sorted(CASES))
def test_each_dtype_and_storage_passes_and_any_cut_or_extra_byte_fails(tmp_path, name):
    make, _ = CASES[name]
    data = _save(tmp_path, make())
    path = tmp_path / "x.params"
    path.write_bytes(data)
    assert check_params_file(path) == len(make())
    path.write_bytes(data[:-1])
    with pytest.raises(ParamsFormatError):
        check_params_file(path)
    path.write_bytes(data + b"\0")
    with pytest.raises(ParamsFormatError):
        check_params_file(path)


@pytest.mark.mxnet
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_wrong_element_size_in_the_table_is_caught(tmp_path, monkeypatch, name):
    """Proof that the files above exercise the table: double one entry and they fail."""
    make, flag = CASES[name]
    path = tmp_path / "x.params"
    path.write_bytes(_save(tmp_path, make()))
    monkeypatch.setitem(_paramsfile.DTYPE_SIZES, flag, _paramsfile.DTYPE_SIZES[flag] * 2)
    with pytest.raises(ParamsFormatError):
        check_params_file(path)


@pytest.mark.mxnet
def test_sparse_index_sizes_are_checked(tmp_path, monkeypatch):
    path = tmp_path / "x.params"
    path.write_bytes(_save(tmp_path, _row_sparse()))
    monkeypatch.setitem(_paramsfile.DTYPE_SIZES, 6, 4)  # int64 indices read as 4 bytes
    with pytest.raises(ParamsFormatError):
        check_params_file(path)


@pytest.mark.mxnet
@pytest.mark.parametrize("arrays, count", [({}, 0), ([], 0), ("empty_sparse", 2)])
def test_files_with_no_data_pass(tmp_path, arrays, count):
    path = tmp_path / "x.params"
    path.write_bytes(_save(tmp_path, _empty_sparse() if arrays == "empty_sparse" else arrays))
    assert check_params_file(path) == count


def test_an_empty_file_is_refused(tmp_path):
    path = tmp_path / "x.params"
    path.write_bytes(b"")
    with pytest.raises(ParamsFormatError, match="ends inside the list header"):
        check_params_file(path)
