"""seqlab/batch.py and seqlab/similarity.py: grade-all over a class."""
