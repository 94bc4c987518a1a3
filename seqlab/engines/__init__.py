"""Grading a class beyond one process pool: the shard a machine takes (``--shard i/N``, for
engines seqlab does not drive) and the merge of shards' outputs (:mod:`.shards`), and Dask
distributed as grade-all's engine (:mod:`.dask_engine`, ``--engine dask``). Each task grades one
hand-in through grade-all's own per-student path (``seqlab.batch``), so the sandbox, status.json
and the grades are the ones a single machine gives. ``docs/cluster.md`` says how to run them.
"""
