"""Backbones several tasks build on."""
