"""Pose."""
