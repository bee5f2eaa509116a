"""What several tasks share: layer helpers (``blocks``), norm layers (``norm``), box operators
(``boxes``), the backbones other tasks build on (``backbones``), the training loop and its
schedule and checkpoints (``training``), devices, image decoding, top-k accuracy, seeded
worker randomness, the zoo-file readers of the spec modules (``zoo``), the int8 names
(``int8_specs``) and what every task's predict module shares (``prediction``).
"""
