"""Command-line training and evaluation: ``python -m gluon_cv_core.scripts.train|eval``."""
