"""Run the command line as ``python -m gluon_hub``."""

import sys

from .cli import main

sys.exit(main())
