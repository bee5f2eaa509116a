"""Helpers of gluon-cv-core's tests."""
