"""Pieces several tasks share."""
