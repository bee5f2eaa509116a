"""Command-line fine-tuning and evaluation scripts, run with ``python -m``::

    python -m gluon_nlp_core.scripts.finetune_classifier --task sst2 --output-dir out/sst2
    python -m gluon_nlp_core.scripts.finetune_squad --output-dir out/squad
    python -m gluon_nlp_core.scripts.evaluate_lm --model standard_lstm_lm_200

Each module has ``main(argv) -> int``; ``--help`` lists the options. Datasets come through
the hub's cache, or from ``--data-dir`` holding the published files.
"""
