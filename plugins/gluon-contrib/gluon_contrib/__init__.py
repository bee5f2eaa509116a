"""gluon-contrib: community models for gluon_hub, and the template for third-party plugins."""

__version__ = "0.1.0"
