# Exercises: given as it is, nothing to fill in here.
"""Sequence models, one module per topic. The contract of every function is in its docstring."""

# The topics in teaching order (each builds on the ones before): the course's one list of them.
TOPICS = ("optimizers", "rnn", "lstm_gru", "attention", "positional", "transformer", "selective_scan")
# The curriculum's lab functions ("Labs"): each trains or probes a model with the student's own
# functions and is graded by what it returns; a lab's calls get no correct callee.
LABS = (
    "rnn.train_char_rnn",
    "rnn.sample_chars",
    "lstm_gru.input_gradient_norms",
    "lstm_gru.train_recall",
    "transformer.train_reverser",
    "selective_scan.train_selective_copy",
)
# A lab's task generator and its model's forward: public because the notebook calls them, graded
# only through their lab (the parent evaluates what a lab returns with the reference's forward).
LAB_PARTS = (
    "lstm_gru.recall_batch",
    "lstm_gru.recall_logits",
    "transformer.reverser_batch",
    "transformer.reverser_logits",
    "selective_scan.copy_batch",
    "selective_scan.copy_logits",
)
