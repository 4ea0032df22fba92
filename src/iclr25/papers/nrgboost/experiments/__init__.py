"""The experiments of the NRGBoost paper, one module each (exporting `EXPERIMENT`)."""
