"""The labs (seqlab/labs): the task instances, the session's rules, the graders against known-wrong
and alternative-correct training loops, and the attacks a lab must hold."""
