"""The entries of the blind integrity bank (tests/attacks/blind_integrity_bank.py)."""
