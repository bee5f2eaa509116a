"""Image-classification architectures whose parameters load GluonCV 0.10's published files.

One module per family. Modules are imported on first use by the hub (a spec's factory is
``"gluon_cv_core.classification.models.<module>:<function>"``), so this package imports nothing itself.
"""
