"""Classification."""
