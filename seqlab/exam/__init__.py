"""Exams: a bank of generated questions, per-student variants, safe answer grading.

- ``bank/``        question generators, one module per topic, registered with ``@question``;
                   concept questions come from ``exams/concepts.yaml``
- ``model``        Question, Variant, the registry, the stable per-student RNG, the fairness rule
- ``sections``     every section of the course notes (the tags questions cite)
- ``examfile``     exam YAML files: questions, points, partial credit, tolerances
- ``variants``     one exam per student, byte-reproducible
- ``render``       Markdown, HTML, nbgrader notebook, answer key (templates/exam/)
- ``safeexpr``     whitelisted parsing of typed answers; sympy equivalence under a time limit
- ``grading``      answers files -> the shared result model, gradebook CSV
- ``cli``          ``seqlab exam render|key|grade|grade-all|check|coverage``
"""
