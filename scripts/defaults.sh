# shellcheck shell=sh
# Sourced by the scripts and the Makefile: `defaults NAME` prints seqlab/defaults.py's NAME, so
# a version, an index or a lock path is written once, there. Run from the repository root.
defaults() { sed -n "s/^$1 = \"\(.*\)\"$/\1/p" seqlab/defaults.py; }
