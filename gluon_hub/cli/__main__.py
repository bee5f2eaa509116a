"""Run the command line as ``python -m gluon_hub.cli``."""

import sys

from . import main

sys.exit(main())
