"""Makes ``import mxnet`` fail in this interpreter as it does where MXNet is not installed.

The MXNet-free tests prepend this file's text to the code they run in a child
(``sys.executable -c``), so that they check the same thing on Python 3.11, where MXNet is
installed, as on Python 3.13, where it cannot be.
"""

import sys


class NoMXNet:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] == "mxnet":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, NoMXNet)
