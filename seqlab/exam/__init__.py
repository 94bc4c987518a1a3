"""Exams: a bank of generated questions, per-student variants, safe answer grading.

- ``bank/``        question generators, one module (or package) per topic, declared with the
                   vocabulary of ``bank/declare.py`` (``@numeric`` / ``@formula`` and one line per fact);
                   concept questions come from ``exams/concepts.yaml``
- ``model``        Question, Variant, the registry, the stable per-student RNG, the fairness rule
- ``sections``     every section of the course notes (the tags questions cite)
- ``examfile``     exam YAML files: questions, points, partial credit, tolerances
- ``draws``        one question's draw for one student, and how a key writes an answer
- ``variants``     one exam per student (the paper's data: nothing here renders)
- ``markdown``     each question's text and solution, the paper's rules, the paper and key as Markdown
- ``html``         the paper and key as HTML pages (MathML, no script, no network)
- ``notebook``     the paper as an nbgrader notebook
- ``render``       the files ``seqlab exam render`` / ``key`` write per student
- ``check_script`` the answers check a student runs with plain Python (``check-ID.py``)
- ``lint``         the bank lint: leaks between questions, copyable answers, unearnable credit, titles
- ``safeexpr``     whitelisted parsing of typed answers; sympy equivalence under a time limit
- ``answers``, ``marking``, ``paper``, ``grading``: an answers file, one answer, one paper, a class
                   (the gradebook CSV)
- ``pools``        "draw k of n" questions per student (same points and kind in a pool)
- ``pdf``          paper exams and keys (WeasyPrint; math as SVG by ziamath)
- ``qti``          LMS quiz items (QTI 1.2); ``qti_pool`` the class's one quiz of question groups (the
                   default), ``qti`` also one quiz per student; ``qti_package`` zips them
- ``items``        item analysis of a graded class (item_analysis.csv, class_report.html)
- ``coverage``     docs/coverage.md and the exam-focus check
- ``cli``          ``seqlab exam render|key|grade|grade-all|check|qti|coverage``
"""
