"""The contrastive_po experiments (one file each)."""
