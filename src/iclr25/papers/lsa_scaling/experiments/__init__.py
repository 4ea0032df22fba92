"""The experiments of the solvable-attention paper, one module each (`EXPERIMENT`)."""
