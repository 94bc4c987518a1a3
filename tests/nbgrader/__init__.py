"""seqlab/nbgrader/: the course, the export, the kernel guard and autograding."""
