"""seqlab/reports/: results.json, junit.xml, summary.md and report.html, also read in a real browser."""
