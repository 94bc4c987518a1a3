"""The course source: the contract of the functions, the solution regions and the stubs seqlab build writes from them (contract.py, regions.py, build.py)."""
