"""The chroknow experiments (one file each)."""
