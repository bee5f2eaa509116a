"""Training detectors: one recipe per family (target generation, losses, GluonCV's defaults)
and the label checks every family shares. The scripts ``gluon_cv_core.detection.train`` and ``.train_instance`` drive
them; see :mod:`.recipe` for the interface a family implements."""

from .recipe import DetectionRecipe, recipe_for
from .samples import TrainingSamples

__all__ = ["DetectionRecipe", "TrainingSamples", "recipe_for"]
