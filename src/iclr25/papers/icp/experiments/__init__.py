"""The ICP experiments, one module each (`EXPERIMENT`)."""
