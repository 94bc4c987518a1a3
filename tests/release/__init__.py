"""seqlab/release/, classroom.py and gradescope/: what goes out to students, GitHub and Gradescope."""
