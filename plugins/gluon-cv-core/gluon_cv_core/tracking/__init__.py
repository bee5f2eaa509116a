"""Tracking."""
