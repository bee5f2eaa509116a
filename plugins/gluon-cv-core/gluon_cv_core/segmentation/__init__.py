"""Segmentation."""
