"""The experiments of sbsc: one file each, exporting `EXPERIMENT`."""
