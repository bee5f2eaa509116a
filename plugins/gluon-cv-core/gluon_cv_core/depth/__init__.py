"""Depth."""
