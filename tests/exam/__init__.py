"""seqlab/exam/: the question bank, variants, rendering, grading and the exam command."""
