"""seqlab/student/: the isolated child, its channel (codec), the callee stand-ins, the sandbox and the attack bank."""
