"""``gluon-hub bench``: latency, throughput and peak memory of models on this machine, in
several runtimes, cached per (model, runtime, batch), and the chart of throughput against
the registry's reported accuracy.

:mod:`.cli` selects, caches and writes results; :mod:`._child` measures one case in a
process of its own (so that its peak memory is its own); :mod:`.chart` draws. Importing
this package imports no mxnet.
"""
