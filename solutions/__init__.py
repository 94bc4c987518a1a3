"""Sequence models, one module per topic. The contract of every function is in its docstring."""

# The topics in teaching order (each builds on the ones before): the course's one list of them.
TOPICS = ("optimizers", "rnn", "lstm_gru", "attention", "positional", "transformer", "selective_scan")
