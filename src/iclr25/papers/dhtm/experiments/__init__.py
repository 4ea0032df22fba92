"""The experiments of the DHTM paper, one module each (exporting `EXPERIMENT`)."""
