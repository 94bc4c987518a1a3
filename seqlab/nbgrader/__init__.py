"""nbgrader support: build an nbgrader course from solutions/, grade its hidden test cells with
the real graders, and export submitted notebooks for the isolated `seqlab grade`.

Modules (import what you need; this package imports nothing heavy on its own, because the
grading kernel imports it):

* ``source``   -- solutions/<topic>.py split into header, answer chunks and provided chunks
* ``course``   -- write nbgrader_config.py and source/<topic>/<topic>.ipynb (nbformat + jinja2)
* ``export``   -- notebooks -> a submission folder (exercises/<topic>.py), the secure path
* ``kernel``   -- what runs inside the grading kernel: start(), quick_check(), hidden_points()
* ``guard``    -- the kernel's audit hook (no reading the course, the gradebook, the graders)
* ``server``   -- the grading process the kernel talks to (runs the isolated grader)
* ``provided`` -- stand-ins for contract functions a notebook needs from another topic
* ``gradebook``-- read autograded scores back from nbgrader's gradebook
* ``autograde``-- `seqlab nbgrader autograde`: export, grade-all, then the gradebook through ``record``
* ``record``   -- inside nbgrader's own Autograde process: test cells' outputs from seqlab's grades
* ``feedback`` -- the text and points of one function's test cell
* ``crosscheck``-- regrade submissions on the secure path and compare with the gradebook
"""
