"""The fork server: the student's child forked from a process that has already imported torch.

A child started on its own spends ~1.3 s of CPU before it can load anything, nearly all of it
``import torch``; a process that grades many submissions (grade-all's workers, the test suite)
paid that for every one. The fork server pays it once. It starts exactly like a child (same
command, same bwrap sandbox, minus a submission), runs ``child.prepare()``, and then forks on
the trusted parent's request. Each forked child is made what a child started alone is:

* it keeps only its two pipes: every other descriptor, the server's control socket first, is
  closed before anything else runs;
* it loads the seccomp filter itself (the server runs without it: the filter refuses fork), and
  a second one of its own: it may signal no process but itself, and change no process's resource
  limits but its own. Started alone it is the only process in its sandbox; forked, the server is
  there too, and must stay out of its reach (a lowered address-space limit on the server is
  inherited by every child it forks after, and would make each of them fail);
* it starts in a fresh scratch folder in a sandbox the server has wiped of every file an earlier
  child wrote (/tmp, /dev/shm) and compared with its first look at it (the root and /dev, the
  processes and the System V IPC objects, which the common filter keeps a child from making),
  and its own resource limits with what they were when it started: any other trace, any changed
  limit, and the server retires instead of forking;
* it sees its submission's ``exercises/`` read-only at ``/submission/exercises``: a copy the
  parent writes just before the fork (the server's sandbox was made before the submission was
  known, so it cannot be bind-mounted).

The server never runs student code. It is not dumpable, so no child can read or write its memory
or descriptors through /proc (and the filter refuses ptrace). It serves one submission at a
time: a fork for another submission while a child of the last one lives is refused, and that
child is started alone. Whenever the server is missing, busy, dead or retired, ``children.take``
starts the child alone; ``SEQLAB_FORKSERVER=0`` always does.

Its parts, by job: ``protocol`` (what parent and server say to each other, and the limits both
sides hold to), ``client`` (the parent's handle on its server), ``server`` (the loop inside the
sandbox and the making of a forked child), ``traces`` (what an earlier child could leave behind:
looked at, wiped, compared).
"""
