"""Text models whose parameter files are those of GluonNLP 0.10: BERT (and ERNIE),
RoBERTa, DistilBERT, GPT-2, LSTM language models and the Transformer for translation.
Importing this package imports mxnet."""
