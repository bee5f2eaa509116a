"""gluon-cv-core: the vision plugin of gluon_hub (the GluonCV 0.10 zoos).

One package per task: ``classification``, ``detection`` (object detection and, on the same
R-CNN machinery, Mask R-CNN instance segmentation), ``segmentation`` (semantic), ``pose``,
``action``, ``depth`` and ``tracking``; each holds its models, specs and zoo data, transforms,
metrics, training and evaluation scripts (``python -m gluon_cv_core.<task>.train``) and its
``gluon-hub predict`` module. ``common`` holds what several tasks share (backbones, norm
layers, box operators, the training loop, devices), ``datasets`` one module per dataset;
``plugin`` is the hub's entry point and ``predict`` routes ``gluon-hub predict`` to the tasks.
"""

__version__ = "0.1.0"
