# Exercises: given as it is, nothing to fill in here.
"""Sequence models, one module per topic: optimizers, rnn, lstm_gru, attention, positional,
transformer, selective_scan. The contract of every function is in its docstring."""
