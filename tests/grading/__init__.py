"""seqlab/grading/ and seqlab/config.py: the graders against the known-wrong variants, scoring, the grading config, the demo."""
