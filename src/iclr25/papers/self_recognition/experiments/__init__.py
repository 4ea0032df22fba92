"""Experiments of self_recognition: vector (headline), control, behaviour."""
