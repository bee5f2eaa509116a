"""Datasets, one module per dataset or dataset family."""
