"""Exams: a bank of generated questions, per-student variants, safe answer grading.

- ``bank/``        question generators, one module (or package) per topic, declared with the
                   vocabulary of ``bank/declare.py`` (``@numeric`` / ``@formula`` and one line per fact);
                   concept questions come from ``exams/concepts.yaml``
- ``model``        Question, Variant, the registry, the stable per-student RNG, the fairness rule
- ``sections``     every section of the course notes (the tags questions cite)
- ``examfile``     exam YAML files: questions, points, partial credit, tolerances
- ``variants``     one exam per student, byte-reproducible
- ``markdown``     each question's text and solution, the paper and key as Markdown (templates/exam/)
- ``html``         the paper and key as HTML pages (MathML, no script, no network)
- ``notebook``     the paper as an nbgrader notebook
- ``render``       the files ``seqlab exam render`` / ``key`` write per student
- ``safeexpr``     whitelisted parsing of typed answers; sympy equivalence under a time limit
- ``grading``      answers files -> the shared result model, gradebook CSV
- ``pools``        "draw k of n" questions per student (same points and kind in a pool)
- ``pdf``          paper exams and keys (WeasyPrint; math as SVG by ziamath)
- ``qti``          LMS quizzes (QTI 1.2 zip, one quiz per student)
- ``items``        item analysis of a graded class (item_analysis.csv, class_report.html)
- ``coverage``     docs/coverage.md and the exam-focus check
- ``cli``          ``seqlab exam render|key|grade|grade-all|check|qti|coverage``
"""
