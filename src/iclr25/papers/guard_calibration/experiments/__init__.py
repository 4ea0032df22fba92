"""The experiments of the guard-calibration paper, one module each (exporting `EXPERIMENT`)."""
