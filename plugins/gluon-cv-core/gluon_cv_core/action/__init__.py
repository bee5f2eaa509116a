"""Action."""
