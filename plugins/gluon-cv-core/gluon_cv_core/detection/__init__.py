"""Detection."""
