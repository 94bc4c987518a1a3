"""solutions/ against PyTorch: the reference implementations every grade is compared with."""
