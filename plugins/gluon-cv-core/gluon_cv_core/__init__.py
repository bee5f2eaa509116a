"""gluon-cv-core: the vision plugin of gluon_hub (the GluonCV 0.10 classification zoo)."""

__version__ = "0.1.0"
