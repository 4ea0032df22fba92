"""The experiments of the TimeKAN paper, one module each (`forecast`, `ablation`)."""
