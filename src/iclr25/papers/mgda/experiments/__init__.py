"""The experiments of the MGDA paper, one module each (`EXPERIMENT`)."""
