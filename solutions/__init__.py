"""Reference solutions: the one source of the exercises, notebooks and graders.

Every body a student must write sits between ``### BEGIN SOLUTION`` and
``### END SOLUTION``; ``seqlab build`` turns those regions into stubs in ``exercises/``.
"""
