"""Text models whose parameter files are those of GluonNLP 0.10: BERT, LSTM language
models and the Transformer for translation. Importing this package imports mxnet."""
