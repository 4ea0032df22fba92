"""The experiments of the ST-GCond paper, one module each (exporting `EXPERIMENT`)."""
