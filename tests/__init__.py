"""The project's own tests, laid out like the package they test (see README.md, "What is where")."""
